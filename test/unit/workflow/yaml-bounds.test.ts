import { expect } from 'chai';
import { parseDocument } from 'yaml';
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

describe('YAML bounds (parseWorkflowYaml)', () => {
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

  it('refuses custom tags as the README says, and keeps the core schema tags', () => {
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
