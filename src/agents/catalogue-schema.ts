/**
 * The JSON Schema of an agent catalogue file (catalogue.ts). `npm run gen` compiles it into
 * src/generated/validators/agent-catalogue.ts (scripts/validators.ts).
 */
import { MAX_TIER } from '../workflow/agent-names.js';

export const CATALOGUE_SCHEMA = {
  type: 'object',
  required: ['agents'],
  additionalProperties: false,
  properties: {
    agents: {
      type: 'object',
      propertyNames: { pattern: '^[a-z][a-z0-9_]*$' },
      additionalProperties: {
        type: 'object',
        required: ['name', 'description', 'tier', 'persona'],
        additionalProperties: false,
        properties: {
          name: { type: 'string', minLength: 1 },
          description: { type: 'string' },
          tier: { type: 'integer', minimum: 1, maximum: MAX_TIER },
          persona: { type: 'string', minLength: 1 },
        },
      },
    },
  },
} as const;
