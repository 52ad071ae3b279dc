/**
 * The closed set of resume policies (AGENTIC_RESUME, `RuntimeOptions.resume`). Its one source is
 * the enum of AGENTIC_RESUME in schemas/config.schema.json (as adapter names are).
 */
import schema from '../../schemas/config.schema.json' with { type: 'json' };
import type { Environment } from '../generated/config.js';

/** A resume policy, as generated from the config schema's enum (docs/durable-runs.md). */
export type ResumePolicy = NonNullable<Environment['AGENTIC_RESUME']>;

/** Every resume policy. */
export const RESUME_POLICIES: readonly ResumePolicy[] = Object.freeze(
  schema.properties.AGENTIC_RESUME.enum as ResumePolicy[],
);

/** Narrows a string to a resume policy. */
export function isResumePolicy(value: string): value is ResumePolicy {
  return (RESUME_POLICIES as readonly string[]).includes(value);
}
