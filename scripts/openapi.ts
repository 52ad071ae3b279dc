/**
 * Builds the OpenAPI 3.1 document from the JSON Schemas in schemas/ (top-level and api/) and the
 * operation table in src/http/api-operations.ts. Each schema becomes a component named by its
 * `title`; its `$defs` are hoisted to components and `#/$defs/X` references rewritten.
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { API_OPERATIONS, type ApiResponse } from '../src/http/api-operations.js';

type Json = Record<string, unknown>;

async function readSchemas(dir: string): Promise<Json[]> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.schema.json')).sort();
  const out: Json[] = [];
  for (const file of files) out.push(JSON.parse(await readFile(join(dir, file), 'utf8')) as Json);
  return out;
}

function rewriteRefs(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== 'object' || value === null) return value;
  const out: Json = {};
  for (const [key, inner] of Object.entries(value as Json)) {
    if (key === '$ref' && typeof inner === 'string' && inner.startsWith('#/$defs/')) {
      out[key] = `#/components/schemas/${inner.slice('#/$defs/'.length)}`;
    } else {
      out[key] = rewriteRefs(inner);
    }
  }
  return out;
}

function addComponent(components: Json, name: string, schema: Json): void {
  const existing = components[name];
  if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(schema)) {
    throw new Error(`schema name collision: ${name} is defined twice with different content`);
  }
  components[name] = schema;
}

function response(r: ApiResponse): Json {
  if (r.schema === undefined && r.contentType === undefined) {
    return { description: r.description, content: { 'application/json': { schema: {} } } };
  }
  const schema =
    r.schema === undefined ? { type: 'string' } : { $ref: `#/components/schemas/${r.schema}` };
  return {
    description: r.description,
    content: { [r.contentType ?? 'application/json']: { schema } },
  };
}

export async function buildOpenApi(root: string, version: string): Promise<Json> {
  const schemasDir = join(root, 'schemas');
  const all = [...(await readSchemas(schemasDir)), ...(await readSchemas(join(schemasDir, 'api')))];
  const components: Json = {};
  for (const schema of all) {
    const { $schema: _s, $id: _i, $defs, title, ...rest } = schema;
    if (typeof title !== 'string') throw new Error(`schema ${String(_i)} has no title`);
    for (const [name, def] of Object.entries(($defs ?? {}) as Json)) {
      addComponent(components, name, rewriteRefs(def) as Json);
    }
    addComponent(components, title, rewriteRefs({ title, ...rest }) as Json);
  }
  const paths: Record<string, Json> = {};
  for (const op of API_OPERATIONS) {
    for (const name of [op.requestSchema, ...Object.values(op.responses).map((r) => r.schema)]) {
      if (name !== undefined && components[name] === undefined) {
        throw new Error(`${op.operationId} names unknown schema ${name}`);
      }
    }
    const operation: Json = {
      operationId: op.operationId,
      summary: op.summary,
      ...(op.description === undefined ? {} : { description: op.description }),
      tags: [op.tag],
      ...(op.public === true ? { security: [] } : {}),
      ...(op.deprecated === true ? { deprecated: true } : {}),
      ...(op.parameters ? { parameters: op.parameters } : {}),
      ...(op.requestSchema
        ? {
            requestBody: {
              required: true,
              content: {
                'application/json': {
                  schema: { $ref: `#/components/schemas/${op.requestSchema}` },
                },
              },
            },
          }
        : {}),
      responses: Object.fromEntries(
        Object.entries(op.responses).map(([status, r]) => [status, response(r)]),
      ),
    };
    paths[op.path] = { ...(paths[op.path] ?? {}), [op.method]: operation };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'agentic-runtime',
      version,
      description:
        'Workflow runtime for multi-step LLM agent workflows. Generated from schemas/ by npm run gen; do not edit.',
    },
    servers: [{ url: 'http://127.0.0.1:8010' }],
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
    tags: ['health', 'catalogue', 'workflows', 'runs', 'approvals', 'evaluation', 'docs'].map(
      (name) => ({
        name,
      }),
    ),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(components).sort(([a], [b]) => (a < b ? -1 : 1))),
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'AGENTIC_API_KEY' },
        apiKeyHeader: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}
