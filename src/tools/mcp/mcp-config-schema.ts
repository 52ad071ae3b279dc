/**
 * The JSON Schema of the MCP servers file (`AGENTIC_MCP_CONFIG`, docs/tools.md "MCP servers").
 * `npm run gen` compiles it into src/generated/validators/mcp-config.ts (scripts/validators.ts).
 */

/** A server name: it is the middle part of `mcp:<server>:<tool>`, so no colon. */
export const MCP_SERVER_NAME = '^[a-z][a-z0-9_-]{0,62}$';

const SECRET_REF = {
  type: 'object',
  required: ['secret'],
  additionalProperties: false,
  properties: {
    secret: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$' },
    prefix: { type: 'string' },
  },
} as const;

const COMMON = {
  timeout_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 86400 },
  connect_timeout_seconds: { type: 'number', exclusiveMinimum: 0, maximum: 3600 },
  high_risk: { type: 'array', items: { type: 'string', minLength: 1 }, uniqueItems: true },
  description: { type: 'string' },
} as const;

export const MCP_CONFIG_SCHEMA = {
  type: 'object',
  required: ['servers'],
  additionalProperties: false,
  properties: {
    servers: {
      type: 'object',
      propertyNames: { pattern: MCP_SERVER_NAME },
      additionalProperties: {
        type: 'object',
        required: ['transport'],
        properties: { transport: { enum: ['stdio', 'http'] } },
        // if/then/else rather than oneOf: a mistake is reported against the one transport meant.
        if: { properties: { transport: { const: 'stdio' } } },
        then: {
          required: ['transport', 'command'],
          additionalProperties: false,
          properties: {
            transport: { const: 'stdio' },
            command: { type: 'string', minLength: 1 },
            args: { type: 'array', items: { type: 'string' } },
            cwd: { type: 'string', minLength: 1 },
            env: {
              type: 'object',
              propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
              additionalProperties: { anyOf: [{ type: 'string' }, SECRET_REF] },
            },
            ...COMMON,
          },
        },
        else: {
          required: ['transport', 'url'],
          additionalProperties: false,
          properties: {
            transport: { const: 'http' },
            url: { type: 'string', pattern: '^https?://' },
            headers: {
              type: 'object',
              propertyNames: { pattern: "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$" },
              additionalProperties: SECRET_REF,
            },
            ...COMMON,
          },
        },
      },
    },
    breaker: {
      type: 'object',
      additionalProperties: false,
      properties: {
        threshold: { type: 'integer', minimum: 1, maximum: 1000 },
        cooldown_seconds: { type: 'number', minimum: 0, maximum: 86400 },
      },
    },
  },
} as const;
