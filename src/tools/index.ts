export { ToolError } from './tool-error.js';
export { TOOL_RISKS, type ToolCallContext, type ToolDefinition, type ToolRisk } from './types.js';
export {
  APPROVAL_PROVIDERS,
  autoApproveProvider,
  autoDenyProvider,
  builtInApprovalProvider,
  createPolicyApprovalProvider,
  type ApprovalDecision,
  type ApprovalProvider,
  type ApprovalProviderName,
  type ApprovalRequest,
} from './approval.js';
export {
  createToolRegistry,
  UNKNOWN_TOOL,
  type ToolCaller,
  type ToolCallOutcome,
  type ToolCallReport,
  type ToolRegistry,
} from './registry.js';
export { isPrivateAddress } from './private-address.js';
export type { AddressLookup } from './http-tools.js';
export { createToolKit, type ToolKit, type ToolsOptions } from './toolkit.js';
export { BUILT_IN_TOOLS } from './names.js';
export { toolsOptionsFromConfig } from './from-config.js';
export {
  createHttpApprovalProvider,
  DEFAULT_APPROVAL_TIMEOUT_MS,
  isApprovalQueue,
  type ApprovalAnswer,
  type ApprovalQueue,
  type HttpApprovalOptions,
  type PendingApproval,
} from './http-approval.js';
export { observeApprovals, type ApprovalObserver } from './approval-events.js';
export { createToolCallJournal, type ToolCallJournal } from './tool-call-journal.js';
