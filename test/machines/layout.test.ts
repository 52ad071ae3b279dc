import { expect } from 'chai';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { packageRoot } from '../../src/config/index.js';

/** Every .ts file under `dir`. */
async function sources(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));
}

describe('machines/ layout', () => {
  it('imports run one way: machines/ never imports src/engine (the engine contract lives in machines/)', async () => {
    const offenders: string[] = [];
    for (const file of await sources(join(packageRoot, 'machines'))) {
      const text = await readFile(file, 'utf8');
      for (const match of text.matchAll(/from\s+'([^']+)'/g)) {
        if (/(^|\/)src\/engine\//.test(match[1]!)) {
          offenders.push(`${relative(packageRoot, file)}: ${match[1]!}`);
        }
      }
    }
    expect(offenders).to.deep.equal([]);
  });
});
