import { expect } from 'chai';
import { existsSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT, anchorsOf, proseLines, readMarkdown, relativeLinks } from './markdown.js';

/** A table row wider than this does not fit a screen beside an editor. */
const MAX_TABLE_LINE = 160;
/** What a newcomer reads in ten minutes; the reference lives in docs/. */
const MAX_README_LINES = 400;

describe('README.md and docs/', () => {
  const files = readMarkdown();
  const readme = files.find((f) => f.path === 'README.md');
  const docs = files.filter((f) => f.path.startsWith('docs/'));

  it(`keeps README.md to at most ${MAX_README_LINES} lines`, () => {
    expect(readme?.text.split('\n').length).to.be.at.most(MAX_README_LINES);
  });

  it(`has no table line wider than ${MAX_TABLE_LINE} characters`, () => {
    const wide = files.flatMap((f) =>
      proseLines(f.text)
        .filter(({ line }) => line.trimStart().startsWith('|') && line.length > MAX_TABLE_LINE)
        .map(({ number, line }) => `${f.path}:${number} (${line.length} characters)`),
    );
    expect(wide).to.deep.equal([]);
  });

  it('links from README.md to every docs/ file, and back from each', () => {
    const linked = new Set(relativeLinks(readme?.text ?? '').map((l) => l.target.split('#')[0]));
    const missing = docs.filter((f) => f.path !== 'docs/README.md' && !linked.has(f.path));
    expect(missing.map((f) => f.path)).to.deep.equal([]);
    const noWayBack = docs.filter(
      (f) => !relativeLinks(f.text).some((l) => l.target.split('#')[0] === '../README.md'),
    );
    expect(noWayBack.map((f) => f.path)).to.deep.equal([]);
  });

  it('has no relative link to a missing file or heading', () => {
    const anchors = new Map(files.map((f) => [f.path, anchorsOf(f.text)]));
    const broken: string[] = [];
    for (const file of files) {
      for (const { target, number } of relativeLinks(file.text)) {
        const [path = '', anchor] = target.split('#');
        const resolved =
          path === '' ? file.path : normalize(join(dirname(file.path), path)).replace(/\\/g, '/');
        if (!existsSync(join(ROOT, resolved))) broken.push(`${file.path}:${number} ${target}`);
        else if (anchor !== undefined && resolved.endsWith('.md')) {
          if (!anchors.get(resolved)?.has(anchor)) broken.push(`${file.path}:${number} ${target}`);
        }
      }
    }
    expect(broken).to.deep.equal([]);
  });
});
