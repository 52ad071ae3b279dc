/**
 * The closed set of adapter names. Its one source is the enum of AGENTIC_DEFAULT_ADAPTER in
 * schemas/config.schema.json; the API and record schemas repeat it as their own enums, and
 * test/unit/config/adapter-names.test.ts keeps them in agreement.
 */
import schema from '../../schemas/config.schema.json' with { type: 'json' };
import type { Environment } from '../generated/config.js';

/** An adapter name, as generated from the config schema's enum. */
export type AdapterName = NonNullable<Environment['AGENTIC_DEFAULT_ADAPTER']>;

/** Every adapter, in the order `GET /api/adapters` lists them. */
export const ADAPTERS: readonly AdapterName[] = Object.freeze(
  schema.properties.AGENTIC_DEFAULT_ADAPTER.enum as AdapterName[],
);

/** Narrows a string to an adapter name. */
export function isAdapterName(value: string): value is AdapterName {
  return (ADAPTERS as readonly string[]).includes(value);
}
