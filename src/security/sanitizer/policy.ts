import {
  ACTIONS,
  CLASSIFICATIONS,
  FINDING_CATEGORIES,
  SEVERITY_RANK,
  type Action,
  type Classification,
  type Finding,
  type FindingCategory,
  type Severity,
} from './types.js';

/**
 * The policy table (documented in docs/security.md, "Sanitization"):
 * - PRIVATE_KEY (any severity) → block.
 * - PROMPT_INJECTION and UNICODE_ANOMALY at high or critical → block; at medium/low → flag.
 * - every secret and PII category → redact.
 */
export function actionFor(category: FindingCategory, severity: Severity): Action {
  switch (category) {
    case FINDING_CATEGORIES.PRIVATE_KEY:
      return ACTIONS.BLOCK;
    case FINDING_CATEGORIES.PROMPT_INJECTION:
    case FINDING_CATEGORIES.UNICODE_ANOMALY:
      return SEVERITY_RANK[severity] >= SEVERITY_RANK.high ? ACTIONS.BLOCK : ACTIONS.FLAG;
    case FINDING_CATEGORIES.SECRET:
    case FINDING_CATEGORIES.CREDENTIAL:
    case FINDING_CATEGORIES.CONNECTION_STRING:
    case FINDING_CATEGORIES.PII:
    case FINDING_CATEGORIES.EMAIL:
    case FINDING_CATEGORIES.PHONE:
    case FINDING_CATEGORIES.FINANCIAL:
    case FINDING_CATEGORIES.IP_ADDRESS:
      return ACTIONS.REDACT;
    default: {
      const exhaustive: never = category;
      return exhaustive;
    }
  }
}

/**
 * The most restrictive outcome wins: blocked > requires_approval > redacted > clean.
 * Redactions are applied whenever the input is not blocked, including under
 * requires_approval.
 */
export function classify(findings: readonly Finding[]): Classification {
  let redact = false;
  let flag = false;
  for (const finding of findings) {
    const action = actionFor(finding.category, finding.severity);
    if (action === ACTIONS.BLOCK) return CLASSIFICATIONS.BLOCKED;
    if (action === ACTIONS.FLAG) flag = true;
    else redact = true;
  }
  if (flag) return CLASSIFICATIONS.REQUIRES_APPROVAL;
  return redact ? CLASSIFICATIONS.REDACTED : CLASSIFICATIONS.CLEAN;
}
