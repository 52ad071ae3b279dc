/** Sanitization finding categories (spec, Resources: FindingCategory). */
export const FINDING_CATEGORIES = {
  SECRET: 'SECRET',
  PII: 'PII',
  PROMPT_INJECTION: 'PROMPT_INJECTION',
  UNICODE_ANOMALY: 'UNICODE_ANOMALY',
  PRIVATE_KEY: 'PRIVATE_KEY',
  CREDENTIAL: 'CREDENTIAL',
  CONNECTION_STRING: 'CONNECTION_STRING',
  IP_ADDRESS: 'IP_ADDRESS',
  EMAIL: 'EMAIL',
  PHONE: 'PHONE',
  FINANCIAL: 'FINANCIAL',
} as const;
export type FindingCategory = (typeof FINDING_CATEGORIES)[keyof typeof FINDING_CATEGORIES];

/** Finding severities, most severe first. */
export const SEVERITIES = {
  CRITICAL: 'critical',
  HIGH: 'high',
  MEDIUM: 'medium',
  LOW: 'low',
} as const;
export type Severity = (typeof SEVERITIES)[keyof typeof SEVERITIES];

/** Explicit ranking: critical > high > medium > low. */
export const SEVERITY_RANK: Readonly<Record<Severity, number>> = {
  critical: 4,
  high: 3,
  medium: 2,
  low: 1,
};

/** Classification of a whole input (spec, Resources: Classification). */
export const CLASSIFICATIONS = {
  CLEAN: 'clean',
  REDACTED: 'redacted',
  BLOCKED: 'blocked',
  REQUIRES_APPROVAL: 'requires_approval',
} as const;
export type Classification = (typeof CLASSIFICATIONS)[keyof typeof CLASSIFICATIONS];

/** What the policy does with one finding. */
export const ACTIONS = { REDACT: 'redact', FLAG: 'flag', BLOCK: 'block' } as const;
export type Action = (typeof ACTIONS)[keyof typeof ACTIONS];

/** One sanitization finding (spec shape). It never carries the matched text. */
export interface Finding {
  readonly category: FindingCategory;
  /** The detector that fired, e.g. `aws_access_key_id`. */
  readonly pattern_name: string;
  /** JSON path of the string, e.g. `$.steps[2].inputs.prompt`; keys: see docs/security.md. */
  readonly location: string;
  readonly severity: Severity;
}

/** Result of {@link sanitize} (spec shape plus `cleaned_value`); frozen. */
export interface SanitizationResult {
  readonly classification: Classification;
  /** Sorted by severity, most severe first. */
  readonly findings: readonly Finding[];
  /** The cleaned input serialized as JSON (a string input stays a string); null when blocked. */
  readonly cleaned_content: string | null;
  /** The cleaned value itself (redactions applied); undefined when blocked. */
  readonly cleaned_value: unknown;
  /** SHA-256 hex digest of the original input. */
  readonly input_hash: string;
  readonly processing_time_ms: number;
}
