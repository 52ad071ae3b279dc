import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../../src/config/index.js';

const run = promisify(execFile);

/** What `npm install-scripts ls --json` answers (npm ≥ 11.16). */
interface PendingScripts {
  allowScripts: { name: string }[];
}

/** README.md and the pages under docs/, where the reasons may live. */
async function documentation(): Promise<string> {
  const docs = join(packageRoot, 'docs');
  const listed = await readdir(docs, { recursive: true }).catch(() => [] as string[]);
  const pages = [
    join(packageRoot, 'README.md'),
    ...listed.filter((name) => name.endsWith('.md')).map((name) => join(docs, name)),
  ];
  return (await Promise.all(pages.map((page) => readFile(page, 'utf8')))).join('\n');
}

describe('dependency install scripts (package.json allowScripts)', function () {
  this.timeout(60_000);

  it('leaves npm no install script to warn about: each is approved or denied', async function () {
    let answer: string;
    try {
      ({ stdout: answer } = await run('npm', ['install-scripts', 'ls', '--json'], {
        cwd: packageRoot,
      }));
    } catch (error) {
      // npm before 11.16 has no allowScripts (nor the warning this guards against).
      if (/Unknown command/i.test(String((error as { stderr?: unknown }).stderr))) this.skip();
      throw error;
    }
    const pending = (JSON.parse(answer) as PendingScripts).allowScripts.map((entry) => entry.name);
    expect(pending).to.deep.equal([]);
  });

  it('says in the documentation what each approved or denied script does', async () => {
    const manifest = JSON.parse(await readFile(join(packageRoot, 'package.json'), 'utf8')) as {
      allowScripts?: Record<string, boolean>;
    };
    const names = Object.keys(manifest.allowScripts ?? {});
    expect(names).to.not.be.empty;
    const text = await documentation();
    const section = /^#+ Dependency install scripts$([\s\S]*?)^#/m.exec(text)?.[1] ?? '';
    for (const name of names) {
      const allowed = manifest.allowScripts?.[name] === true ? 'approved' : 'denied';
      expect(section, name).to.match(new RegExp(`^- \`${name}\` \\(${allowed}; .*\\): \\S`, 'm'));
    }
  });
});
