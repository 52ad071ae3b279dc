import { AppError, ERROR_CODES } from '../errors.js';

/**
 * The spec's tool error (adds `tool_name`, optional `operation`): refused arguments, a path out
 * of the base directory, a blocked address, a denied approval, a failed command. Carried as a
 * step failure, never a crash; its message is safe to record (no stack, no secrets).
 */
export class ToolError extends AppError {
  readonly toolName: string;
  readonly operation: string | undefined;
  constructor(toolName: string, message: string, operation?: string, cause?: unknown) {
    super(ERROR_CODES.TOOL, `tool ${toolName}: ${message}`, { status: 400, expose: true, cause });
    this.name = 'ToolError';
    this.toolName = toolName;
    this.operation = operation;
  }
}
