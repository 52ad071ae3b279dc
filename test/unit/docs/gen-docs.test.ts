import { expect } from 'chai';
import { fillRegion, mdText, renderConfiguration } from '../../../scripts/gen-docs.js';

describe('scripts/gen-docs', () => {
  it('fills only the text between the markers of its region', () => {
    const text = [
      'hand-written before',
      '<!-- generated:begin list -->',
      'stale',
      '<!-- generated:end list -->',
      'hand-written after',
    ].join('\n');
    expect(fillRegion(text, 'list', 'fresh', 'x.md')).to.equal(
      [
        'hand-written before',
        '<!-- generated:begin list -->',
        '',
        'fresh',
        '<!-- generated:end list -->',
        'hand-written after',
      ].join('\n'),
    );
  });

  it('refuses a file without the markers of the region', () => {
    expect(() => fillRegion('no markers', 'list', 'fresh', 'docs/x.md')).to.throw(
      'docs/x.md has no <!-- generated:begin list -->',
    );
  });

  it('escapes tags and emphasis outside code spans only', () => {
    expect(mdText('read <dir>/NAME, * any; `<dir>/*.yaml` as is')).to.equal(
      'read &lt;dir>/NAME, \\* any; `<dir>/*.yaml` as is',
    );
  });

  it('shows each variable with its description, type, range and default', () => {
    const text = renderConfiguration({
      properties: {
        AGENTIC_X_BYTES: { type: 'integer', minimum: 1, default: 1048576, description: 'Bytes.' },
        AGENTIC_FLAG: { type: 'boolean', default: false, description: 'A flag.' },
        AGENTIC_MODE: { type: 'string', enum: ['a', 'b'], description: 'Mode.' },
      },
    });
    expect(text).to.include('### `AGENTIC_X_BYTES`\n\nBytes.\n\n- Type: integer, at least 1\n');
    expect(text).to.include('- Default: `1048576` (1 MiB)');
    expect(text).to.include('### `AGENTIC_FLAG`\n\nA flag.\n\n- Type: boolean');
    expect(text).to.include('- Default: `0` (off)');
    expect(text).to.include('- Type: string, one of `a`, `b`\n- Default: unset');
  });
});
