import { AppError, ERROR_CODES } from '../errors.js';

/** The spec's memory store error: a value that cannot be stored, or a store file that fails. */
export class MemoryStoreError extends AppError {
  constructor(message: string, cause?: unknown) {
    super(ERROR_CODES.MEMORY_STORE, message, { status: 500, expose: true, cause });
    this.name = 'MemoryStoreError';
  }
}
