/**
 * The JSON Schema of the price table (agents/prices.yaml, `AGENTIC_PRICES_FILE`; docs/llm.md
 * "Prices"). `npm run gen` compiles it into src/generated/validators/price-table.ts
 * (scripts/validators.ts), so no schema is compiled at start-up.
 */

/** USD per million tokens. */
const USD_PER_MILLION = { type: 'number', minimum: 0, maximum: 1_000_000 } as const;

const RATES = {
  input: USD_PER_MILLION,
  output: USD_PER_MILLION,
  cached_input: USD_PER_MILLION,
  cache_write_input: USD_PER_MILLION,
} as const;

export const PRICE_TABLE_SCHEMA = {
  type: 'object',
  required: ['models'],
  additionalProperties: false,
  properties: {
    as_of: { type: 'string', minLength: 1 },
    currency: { const: 'USD' },
    models: {
      type: 'object',
      // `provider:model`, or `provider:*` for every model of a provider without its own line.
      propertyNames: { pattern: '^[a-z][a-z0-9_-]*:\\S+$' },
      additionalProperties: {
        type: 'object',
        required: ['input', 'output'],
        additionalProperties: false,
        properties: {
          ...RATES,
          long_context: {
            type: 'object',
            required: ['above_input_tokens', 'input', 'output'],
            additionalProperties: false,
            properties: {
              above_input_tokens: { type: 'integer', minimum: 1 },
              ...RATES,
            },
          },
        },
      },
    },
  },
} as const;
