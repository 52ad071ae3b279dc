import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { COMMANDS } from '../../../src/cli/commands/index.js';
import { ERROR_CATALOGUE, ERROR_CODES } from '../../../src/errors.js';
import { API_OPERATIONS } from '../../../src/http/api-operations.js';
import { mdText } from '../../../scripts/gen-docs.js';
import { ROOT, proseLines, readMarkdown } from './markdown.js';

function doc(name: string): string {
  return readFileSync(join(ROOT, 'docs', name), 'utf8');
}

/** The names of the `### \`name\`` headings of a generated reference list. */
function headedNames(text: string): string[] {
  return proseLines(text).flatMap(({ line }) => {
    const match = /^### `([^`]+)`$/.exec(line);
    return match?.[1] === undefined ? [] : [match[1]];
  });
}

describe('docs/errors.md and the error catalogue', () => {
  const documented = headedNames(doc('errors.md'));

  it('documents every code of the catalogue, and only those', () => {
    expect([...documented].sort()).to.deep.equal(Object.values(ERROR_CODES).sort());
  });

  it('gives every code its status and description from the catalogue', () => {
    const text = doc('errors.md');
    for (const [code, info] of Object.entries(ERROR_CATALOGUE)) {
      const entry = text.split(`### \`${code}\``)[1]?.split('\n### ')[0] ?? '';
      expect(entry, code).to.include(`HTTP ${info.status.join(' or ')}.`);
      expect(entry.replace(/\s+/g, ' '), code).to.include(
        mdText(info.description).replace(/\s+/g, ' '),
      );
    }
  });

  it('has a catalogue entry, status and description for every code', () => {
    for (const code of Object.values(ERROR_CODES)) {
      const info = ERROR_CATALOGUE[code];
      expect(info.status, code).to.not.be.empty;
      for (const status of info.status) expect(status, code).to.be.within(400, 599);
      expect(info.description, code).to.match(/\S{3}/);
    }
  });
});

describe('docs/configuration.md and the config schema', () => {
  const schema = JSON.parse(readFileSync(join(ROOT, 'schemas', 'config.schema.json'), 'utf8')) as {
    properties: Record<string, { description?: string }>;
  };
  const variables = Object.keys(schema.properties);

  it('documents every variable of the schema, and only those', () => {
    expect(headedNames(doc('configuration.md'))).to.deep.equal(variables);
  });

  it('describes every variable in the schema (the single source of its documentation)', () => {
    const bare = variables.filter((name) => (schema.properties[name]?.description ?? '') === '');
    expect(bare).to.deep.equal([]);
  });

  it('names no AGENTIC_ variable in README.md or docs/ that the schema does not have', () => {
    const known = new Set(variables);
    const unknown = readMarkdown().flatMap((file) =>
      [...file.text.matchAll(/\bAGENTIC_[A-Z0-9_]*[A-Z0-9](?![A-Z0-9_]*(?:[*<]|&lt;))/g)]
        .map((match) => match[0])
        .filter((name) => !known.has(name))
        .map((name) => `${file.path}: ${name}`),
    );
    expect([...new Set(unknown)]).to.deep.equal([]);
  });
});

describe('docs/cli.md and docs/http-api.md', () => {
  it('list every agentic command of the registry', () => {
    const program = new Command().name('agentic');
    for (const register of COMMANDS) register(program, { env: {} });
    const documented = headedNames(doc('cli.md')).map((heading) => heading.split(' ')[1]);
    expect(new Set(documented)).to.deep.equal(new Set(program.commands.map((c) => c.name())));
  });

  it('list every operation of the HTTP API', () => {
    const documented = new Set(
      proseLines(doc('http-api.md')).flatMap(({ line }) => {
        const match = /^#### `([A-Z]+ \S+)`$/.exec(line);
        return match?.[1] === undefined ? [] : [match[1]];
      }),
    );
    const operations = API_OPERATIONS.map(
      (op) => `${op.path.startsWith('/ws/') ? 'WS' : op.method.toUpperCase()} ${op.path}`,
    );
    expect([...documented].sort()).to.deep.equal([...operations].sort());
  });
});
