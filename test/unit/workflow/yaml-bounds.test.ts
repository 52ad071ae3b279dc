import { expect } from 'chai';
import { Alias, Composer, parseDocument } from 'yaml';
import { ValidationError } from '../../../src/errors.js';
import { DEFAULT_CONTENT_LIMITS, MAX_YAML_DEPTH } from '../../../src/workflow/limits.js';
import { parseWorkflowYaml, type ParseYamlOptions } from '../../../src/workflow/parse.js';
import { expandedYamlSize, yamlDepthExcess } from '../../../src/workflow/yaml-bounds.js';

function parseError(text: string, options: ParseYamlOptions = {}): ValidationError {
  try {
    parseWorkflowYaml(text, options);
  } catch (error) {
    expect(error).to.be.instanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

/** The saved workflow of issue 8.1: a ~900 KB anchor aliased 99 times (90 MB expanded). */
function aliasBomb(): string {
  let text = `name: bomb\nsteps:\n  - name: a\n    agent: tier0_echo\n    inputs:\n      big: &A "${'x'.repeat(900_000)}"\n`;
  for (let i = 0; i < 99; i++) text += `      k${i}: *A\n`;
  return text;
}

/**
 * Counts the alias resolutions that walk the whole document (yaml's `Alias.resolve` without its
 * per-conversion cache) and the documents composed, while `run` runs.
 */
function countWork(run: () => void): { walks: number; composed: number } {
  // The originals are called with `apply` on their own objects and put back after.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const resolve = Alias.prototype.resolve;
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const compose = Composer.prototype.compose;
  const work = { walks: 0, composed: 0 };
  Alias.prototype.resolve = function (this: Alias, ...args: Parameters<Alias['resolve']>) {
    const ctx = args[1] as { aliasResolveCache?: unknown } | undefined;
    if (ctx?.aliasResolveCache === undefined) work.walks++;
    return resolve.apply(this, args);
  };
  Composer.prototype.compose = function (this: Composer, ...args: Parameters<Composer['compose']>) {
    work.composed++;
    return compose.apply(this, args);
  };
  try {
    run();
  } finally {
    Alias.prototype.resolve = resolve;
    Composer.prototype.compose = compose;
  }
  return work;
}

describe('YAML bounds (parseWorkflowYaml)', () => {
  it('checks aliases in one walk of the document, not one walk per alias', () => {
    // 100 aliases (the bound) of 100 anchors among 5 000 other nodes: each alias used to
    // resolve by walking the whole document (16 000 aliases took 24 s).
    const anchors = Array.from({ length: 100 }, (_, i) => `  a${i}: &a${i} [${i}]`).join('\n');
    const filler = Array.from({ length: 5000 }, (_, i) => `  f${i}: ${i}`).join('\n');
    const aliases = Array.from({ length: 100 }, (_, i) => `*a${i}`).join(', ');
    const text = `anchors:\n${anchors}\nfiller:\n${filler}\nuses: [${aliases}]\n`;
    let data: unknown;
    const work = countWork(() => (data = parseWorkflowYaml(text)));
    expect(work.walks).to.be.at.most(1);
    expect((data as { uses: unknown[] }).uses)
      .to.have.length(100)
      .and.to.deep.include([7]);
  });

  it('refuses more than 100 aliases by their count, before the document is composed', () => {
    for (const count of [101, 16_000, 100_000]) {
      const text = `a: &a [1]\nb: [${Array(count).fill('*a').join(',')}]\n`;
      let error: ValidationError | undefined;
      const work = countWork(() => (error = parseError(text)));
      expect(work).to.deep.equal({ walks: 0, composed: 0 });
      expect(error?.details).to.deep.equal([
        {
          loc: ['yaml_text'],
          msg: 'invalid YAML: more than 100 aliases',
          type: 'value_error.yaml',
        },
      ]);
    }
    // Asterisks in quoted and block scalars are text, not aliases.
    const text = `q: "${'*x '.repeat(200)}"\nb: |\n${'  *y\n'.repeat(200)}`;
    expect(parseWorkflowYaml(text)).to.have.property('q').that.contains('*x');
  });

  it('refuses more than 100 alias expansions (aliases inside anchors count each time)', () => {
    // 18 aliases: b's 10, and c's 8 each expanding b's 10 again: 10 + 8 × 11 = 98 expansions.
    const many = (alias: string, n: number): string => `[${Array(n).fill(alias).join(',')}]`;
    const text = `a: &a [1]\nb: &b ${many('*a', 10)}\nc: ${many('*b', 8)}\n`;
    expect(parseWorkflowYaml(text)).to.have.property('c').with.length(8);
    // Three more aliases of a (21 in all, a few hundred bytes expanded): 101 expansions.
    expect(parseError(`${text}d: ${many('*a', 3)}\n`).details).to.deep.equal([
      {
        loc: ['yaml_text'],
        msg: 'invalid YAML: more than 100 alias expansions',
        type: 'value_error.yaml',
      },
    ]);
  });

  it('refuses an alias bomb by its expanded size (422) before turning it into data', () => {
    const error = parseError(aliasBomb());
    expect(error.status).to.equal(422);
    expect(error.details).to.deep.equal([
      {
        loc: ['yaml_text'],
        msg: `invalid YAML: more than ${DEFAULT_CONTENT_LIMITS.maxExpandedYamlBytes} bytes once its aliases are expanded (AGENTIC_MAX_EXPANDED_YAML_BYTES)`,
        type: 'value_error.yaml',
      },
    ]);
  });

  it('measures the expanded size as the JSON of the data, each alias as its anchor', () => {
    const text = 'a: &x {k: [1, "two", true, null, 2.5]}\nb: *x\nc: [*x, *x]\n';
    const document = parseDocument(text);
    expect(expandedYamlSize(document, 1e9)).to.equal(JSON.stringify(document.toJS()).length);
  });

  it('applies the configured expanded bound: ten aliases of a 200-byte anchor pass the default, not 1 KiB', () => {
    const text = `a: &x "${'y'.repeat(200)}"\nb: [${Array(10).fill('*x').join(', ')}]\n`;
    expect(parseWorkflowYaml(text)).to.have.property('b').with.length(10);
    const limits = { maxYamlBytes: 1_000_000, maxExpandedYamlBytes: 1024 };
    expect(parseError(text, { limits }).message).to.contain('more than 1024 bytes');
  });

  it('refuses an alias inside its own anchor (infinite once expanded)', () => {
    expect(parseError('a: &x [*x]\n').message).to.contain('once its aliases are expanded');
  });

  it('refuses text over the byte bound, counting UTF-8 bytes', () => {
    const limits = { maxYamlBytes: 2048, maxExpandedYamlBytes: 1_000_000 };
    expect(parseError(`a: "${'x'.repeat(3000)}"`, { limits }).message).to.equal(
      'invalid YAML: 3005 bytes of text, more than 2048 (AGENTIC_MAX_YAML_BYTES)',
    );
    // 1000 characters, 3000 bytes.
    expect(parseError(`a: "${'€'.repeat(1000)}"`, { limits }).message).to.contain('3005 bytes');
  });

  it('refuses 300 000 nested flow collections at the first level past the bound, before parsing', () => {
    const text = '['.repeat(300_000) + ']'.repeat(300_000);
    // The parser would have taken 1.5 s of event loop to overflow its stack; the scan stops here.
    expect(yamlDepthExcess(text, MAX_YAML_DEPTH)).to.deep.equal({ line: 1, col: MAX_YAML_DEPTH });
    const error = parseError(text);
    expect(error.details?.[0]).to.deep.equal({
      loc: ['yaml_text', 1, MAX_YAML_DEPTH],
      msg: `invalid YAML (line 1, column ${MAX_YAML_DEPTH}): nested more than ${MAX_YAML_DEPTH} levels deep`,
      type: 'value_error.yaml',
    });
    expect(parseError('{a: '.repeat(200_000) + '}'.repeat(200_000)).message).to.contain(
      'levels deep',
    );
  });

  it('refuses deep block nesting: compact sequences and indentation', () => {
    expect(parseError('- '.repeat(300_000) + 'x\n').message).to.contain('levels deep');
    const indented = Array.from({ length: 150 }, (_, i) => `${' '.repeat(i)}k:`).join('\n');
    expect(parseError(indented).details?.[0]?.loc).to.deep.equal(['yaml_text', 101, 101]);
  });

  it('accepts nesting within the bound, flow and block, comments and block scalars included', () => {
    const block = Array.from({ length: 90 }, (_, i) => `${' '.repeat(i)}k: # level ${i}`).join(
      '\n',
    );
    expect(() => parseWorkflowYaml(`${block} 1\n`)).not.to.throw();
    const flow = `a: ${'['.repeat(90)}1${']'.repeat(90)}\n`;
    expect(() => parseWorkflowYaml(flow)).not.to.throw();
    const scalar = `a: |\n${Array.from({ length: 200 }, (_, i) => `  ${' '.repeat(i)}[{`).join('\n')}\n`;
    expect(parseWorkflowYaml(scalar)).to.have.property('a').that.contains('[{');
  });

  it('refuses custom tags as docs/limits.md says, and keeps the core schema tags', () => {
    for (const [text, tag] of [
      ['a: !!js/function "function () {}"', 'tag:yaml.org,2002:js/function'],
      ['a: !!python/object:os.system x', 'tag:yaml.org,2002:python/object:os.system'],
      ['a: !custom x', '!custom'],
    ] as const) {
      expect(parseError(text).details).to.deep.equal([
        {
          loc: ['yaml_text', 1, 4],
          msg: `invalid YAML (line 1, column 4): unsupported tag: ${tag} (only the YAML 1.2 core schema's tags are read)`,
          type: 'value_error.yaml',
        },
      ]);
    }
    expect(parseWorkflowYaml('a: !!str 1\nb: !!int "2"\n')).to.deep.equal({ a: '1', b: 2 });
  });
});
