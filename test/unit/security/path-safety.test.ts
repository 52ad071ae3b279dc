import { expect } from 'chai';
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  PathEscapeError,
  isSafeRunId,
  resolveContained,
  resolveContainedSync,
  resolveFileToolPath,
  safeFileName,
} from '../../../src/security/index.js';

describe('path containment', () => {
  let root: string;
  let base: string;

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'agentic-paths-')));
    base = join(root, 'base');
    await mkdir(join(base, 'runs'), { recursive: true });
    await writeFile(join(base, 'runs', 'a.json'), '{}');
    await writeFile(join(root, 'outside.txt'), 'secret');
    await symlink(join(root, 'outside.txt'), join(base, 'escape-file'));
    await symlink(root, join(base, 'escape-dir'));
    await symlink(join(base, 'runs'), join(base, 'inner-link'));
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('resolves a path inside the base, existing or not', async () => {
    expect(await resolveContained(base, 'runs/a.json')).to.equal(join(base, 'runs', 'a.json'));
    expect(await resolveContained(base, 'runs/new/b.json')).to.equal(
      join(base, 'runs', 'new', 'b.json'),
    );
    expect(resolveContainedSync(base, 'runs/new/b.json')).to.equal(
      join(base, 'runs', 'new', 'b.json'),
    );
  });

  it('follows a symlink that stays inside the base', async () => {
    expect(await resolveContained(base, 'inner-link/a.json')).to.equal(
      join(base, 'inner-link', 'a.json'),
    );
  });

  const bad: [string, string][] = [
    ['parent segment', '../outside.txt'],
    ['nested parent segment', 'runs/../../outside.txt'],
    ['absolute path', '/etc/passwd'],
    ['NUL byte', 'runs/a.json\0.png'],
    ['backslash traversal', 'runs\\..\\..\\outside.txt'],
    ['full-width dots and slash', '\uff0e\uff0e\uff0foutside.txt'],
    ['symlinked file escaping', 'escape-file'],
    ['symlinked dir escaping', 'escape-dir/outside.txt'],
    ['new file under an escaping symlink', 'escape-dir/new.txt'],
    ['empty path', ''],
  ];
  for (const [label, userPath] of bad) {
    it(`refuses a ${label}`, async () => {
      let caught: unknown;
      try {
        await resolveContained(base, userPath);
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(PathEscapeError);
      expect((caught as PathEscapeError).status).to.equal(404);
      expect(() => resolveContainedSync(base, userPath)).to.throw(PathEscapeError);
    });
  }

  it('refuses every file-tool path when AGENTIC_FILE_BASE_DIR is unset', async () => {
    let caught: unknown;
    try {
      await resolveFileToolPath(undefined, 'runs/a.json');
    } catch (error) {
      caught = error;
    }
    expect(caught).to.be.instanceOf(PathEscapeError);
    expect(await resolveFileToolPath(base, 'runs/a.json')).to.equal(join(base, 'runs', 'a.json'));
  });

  it('accepts only plain file names', () => {
    expect(safeFileName('20240517T102231123Z_review_abc.json')).to.equal(
      '20240517T102231123Z_review_abc.json',
    );
    for (const name of [
      '',
      '.',
      '..',
      'a/b',
      'a\\b',
      'a\0b',
      '-rf',
      'tab\tname',
      '\uff0e\uff0e',
      'x'.repeat(256),
    ]) {
      expect(() => safeFileName(name), JSON.stringify(name)).to.throw(PathEscapeError);
    }
  });

  it('accepts run ids of 1 to 128 safe characters only', () => {
    expect(isSafeRunId('run_2024-05-17_abc')).to.equal(true);
    expect(isSafeRunId('a'.repeat(128))).to.equal(true);
    for (const id of ['', 'a'.repeat(129), '../x', 'a b', 'ａ', 'run\0', 'run.json']) {
      expect(isSafeRunId(id), id).to.equal(false);
    }
  });
});
