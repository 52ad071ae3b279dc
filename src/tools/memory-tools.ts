import { TOOL_RISKS, type ToolDefinition } from './types.js';

const KEY = { type: 'string', minLength: 1, maxLength: 1024 } as const;
const SHARED = {
  type: 'boolean',
  description: 'Use the shared namespace instead of the workflow’s own.',
} as const;

function params(properties: Record<string, unknown>, required: string[]): Record<string, unknown> {
  return {
    type: 'object',
    properties: { ...properties, shared: SHARED },
    required,
    additionalProperties: false,
  };
}

/** `memory_get`, `memory_set`, `memory_search`, `memory_delete` over the workflow's memory. */
export function createMemoryTools(): ToolDefinition[] {
  return [
    {
      name: 'memory_get',
      description: 'Reads a memory key: {key, shared?} → {found, value}.',
      risk: TOOL_RISKS.LOW,
      parameters: params({ key: KEY }, ['key']),
      run: async (args, { memory }) => {
        const value = await memory(args.shared === true).get(String(args.key));
        return { found: value !== undefined, value: value ?? null };
      },
    },
    {
      name: 'memory_set',
      description: 'Stores a JSON value under a key: {key, value, shared?} → {stored}.',
      risk: TOOL_RISKS.LOW,
      parameters: params({ key: KEY, value: {} }, ['key', 'value']),
      run: async (args, { memory }) => {
        await memory(args.shared === true).set(String(args.key), args.value);
        return { stored: true };
      },
    },
    {
      name: 'memory_search',
      description:
        'Entries whose serialized value contains the query: {query, limit?, shared?} → {results: [{key, value}]}.',
      risk: TOOL_RISKS.LOW,
      parameters: params(
        {
          query: { type: 'string', maxLength: 10_000 },
          limit: { type: 'integer', minimum: 1, maximum: 100 },
        },
        ['query'],
      ),
      run: async (args, { memory }) => ({
        results: await memory(args.shared === true).search(
          String(args.query),
          typeof args.limit === 'number' ? args.limit : 10,
        ),
      }),
    },
    {
      name: 'memory_delete',
      description: 'Removes a memory key: {key, shared?} → {deleted}.',
      risk: TOOL_RISKS.LOW,
      parameters: params({ key: KEY }, ['key']),
      run: async (args, { memory }) => ({
        deleted: await memory(args.shared === true).delete(String(args.key)),
      }),
    },
  ];
}
