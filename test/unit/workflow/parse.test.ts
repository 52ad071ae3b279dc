import { expect } from 'chai';
import { ERROR_CODES, ValidationError } from '../../../src/errors.js';
import { parseWorkflowYaml } from '../../../src/workflow/parse.js';

function parseError(text: string, options = {}): ValidationError {
  try {
    parseWorkflowYaml(text, options);
  } catch (error) {
    expect(error).to.be.instanceOf(ValidationError);
    return error as ValidationError;
  }
  throw new Error('expected a ValidationError');
}

describe('parseWorkflowYaml', () => {
  it('parses one YAML 1.2 document into plain data', () => {
    expect(
      parseWorkflowYaml(
        'name: x\nsteps:\n  - {name: a, agent: tier0_echo}\nflag: yes\nday: 2024-01-01\n',
      ),
    ).to.deep.equal({
      name: 'x',
      steps: [{ name: 'a', agent: 'tier0_echo' }],
      flag: 'yes',
      day: '2024-01-01',
    });
  });

  it('reports a syntax error with line and column in loc', () => {
    const error = parseError('name: x\nsteps: @bad\n');
    expect(error.code).to.equal(ERROR_CODES.WORKFLOW_INVALID);
    expect(error.status).to.equal(422);
    expect(error.details).to.have.length(1);
    expect(error.details?.[0]?.loc).to.deep.equal(['yaml_text', 2, 8]);
    expect(error.details?.[0]?.type).to.equal('value_error.yaml');
    expect(error.details?.[0]?.msg).to.match(
      /^invalid YAML \(line 2, column 8\): Plain value cannot start with reserved character @$/,
    );
  });

  it('uses the given field name in loc', () => {
    expect(parseError('a: [', { field: 'source' }).details?.[0]?.loc[0]).to.equal('source');
  });

  it('rejects duplicate keys', () => {
    const error = parseError('name: a\nname: b\n');
    expect(error.details?.[0]?.loc).to.deep.equal(['yaml_text', 2, 1]);
    expect(error.details?.[0]?.msg).to.contain('Map keys must be unique');
  });

  it('rejects several documents', () => {
    expect(parseError('name: a\n---\nname: b\n').details?.[0]?.msg).to.contain(
      'several YAML documents',
    );
  });

  it('stops alias expansion bombs', () => {
    const bomb = [
      'a: &a [x, x, x, x, x, x, x, x, x, x]',
      'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
      'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
      'd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
      'e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]',
    ].join('\n');
    const error = parseError(bomb);
    expect(error.details?.[0]).to.deep.include({ loc: ['yaml_text'], type: 'value_error.yaml' });
    expect(error.details?.[0]?.msg).to.contain('alias');
  });

  it('allows a few aliases', () => {
    expect(parseWorkflowYaml('a: &x [1]\nb: *x\n')).to.deep.equal({ a: [1], b: [1] });
  });

  it('returns null for an empty text (validation then reports it)', () => {
    expect(parseWorkflowYaml('')).to.equal(null);
  });
});
