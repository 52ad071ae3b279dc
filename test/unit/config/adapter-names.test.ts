import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ADAPTERS } from '../../../src/config/adapter-names.js';
import { loadConfig } from '../../../src/config/load-config.js';
import { ConfigError } from '../../../src/errors.js';

const schemas = join(import.meta.dirname, '..', '..', '..', 'schemas');

async function enumAt(file: string, path: string[]): Promise<unknown> {
  let node = JSON.parse(await readFile(join(schemas, file), 'utf8')) as unknown;
  for (const key of path) node = (node as Record<string, unknown>)[key];
  return node;
}

// The API and record schemas repeat the adapter set as their own enums (each schema file must
// stand alone for clients); this keeps every copy equal to the config schema's, the one source.
describe('adapter names', () => {
  it('come from the config schema and agree with every schema that repeats them', async () => {
    expect(ADAPTERS).to.deep.equal(['native', 'graph']);
    const copies = [
      await enumAt('api/run-request.schema.json', ['properties', 'adapter', 'enum']),
      await enumAt('api/eval-batch-request.schema.json', ['properties', 'adapter', 'enum']),
      await enumAt('api/adapters-response.schema.json', [
        'properties',
        'adapters',
        'items',
        'enum',
      ]),
      await enumAt('run-record.schema.json', ['properties', 'adapter', 'enum']),
    ];
    for (const copy of copies)
      expect([...(copy as string[])].sort()).to.deep.equal([...ADAPTERS].sort());
  });

  it('rejects an unknown AGENTIC_DEFAULT_ADAPTER naming the allowed values', () => {
    expect(() => loadConfig({ AGENTIC_DEFAULT_ADAPTER: 'turbo' })).to.throw(
      ConfigError,
      /AGENTIC_DEFAULT_ADAPTER="turbo".*native.*graph/s,
    );
  });
});
