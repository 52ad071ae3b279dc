export {
  sanitize,
  formatPath,
  MAX_DEPTH,
  SanitizerDepthError,
  type SanitizeOptions,
} from './sanitize.js';
export { scanString, REDACTED, type StringScan } from './scan-string.js';
export { actionFor, classify } from './policy.js';
export { runDetector, type Detector, type Span } from './detector.js';
export { SECRET_DETECTORS, isSecretKeyName, looksLikeSecretValue } from './detectors/secrets.js';
export { PII_DETECTORS } from './detectors/pii.js';
export { INJECTION_DETECTORS } from './detectors/injection.js';
export { UNICODE_DETECTORS, skeleton } from './detectors/unicode.js';
export { luhnValid, ibanValid, isPublicIp, cardIssuerKnown } from './validators.js';
export * from './types.js';
