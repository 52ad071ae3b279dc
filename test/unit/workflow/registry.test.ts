import { expect } from 'chai';
import {
  mkdir,
  mkdtemp,
  readFile,
  readdir,
  realpath,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DependencyError,
  ERROR_CODES,
  NotFoundError,
  ValidationError,
} from '../../../src/errors.js';
import { createWorkflowRegistry, type WorkflowRegistry } from '../../../src/workflow/registry.js';
import { rejection } from '../../support/rejection.js';

const yaml = (name: string, extra = ''): string =>
  `# keep this comment\nname: ${name}\ndescription: test\nsteps:\n  - name: a\n    agent: tier0_echo\n${extra}`;

describe('createWorkflowRegistry', () => {
  let root: string;
  let dir: string;
  let registry: WorkflowRegistry;

  beforeEach(async () => {
    root = await realpath(await mkdtemp(join(tmpdir(), 'registry-')));
    dir = join(root, 'workflows');
    await mkdir(dir);
    await writeFile(join(dir, 'alpha.yaml'), yaml('alpha'));
    await writeFile(join(dir, 'beta.yml'), yaml('beta'));
    await writeFile(join(dir, 'notes.txt'), 'not a workflow');
    await writeFile(join(dir, '.hidden.yaml'), yaml('.hidden'));
    registry = createWorkflowRegistry({ dir });
  });

  afterEach(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('lists yaml and yml stems, sorted, without hidden files', async () => {
    await writeFile(join(dir, 'Zeta.yaml'), yaml('Zeta'));
    expect(await registry.list()).to.deep.equal(['Zeta', 'alpha', 'beta']);
  });

  it('lists nothing for a missing directory', async () => {
    expect(await createWorkflowRegistry({ dir: join(root, 'none') }).list()).to.deep.equal([]);
  });

  it('loads a workflow with its text, document and compiled form', async () => {
    const loaded = await registry.get('alpha');
    expect(loaded.name).to.equal('alpha');
    expect(loaded.path).to.equal(join(dir, 'alpha.yaml'));
    expect(loaded.yamlText).to.equal(yaml('alpha'));
    expect(loaded.document).to.deep.include({ name: 'alpha' });
    expect(loaded.compiled.steps.map((s) => s.name)).to.deep.equal(['a']);
    expect((await registry.get('beta')).path).to.equal(join(dir, 'beta.yml'));
  });

  it('loads by a relative YAML path inside the directory', async () => {
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'gamma.yaml'), yaml('gamma'));
    expect((await registry.get('sub/gamma.yaml')).name).to.equal('gamma');
    expect((await registry.get('alpha.yaml')).name).to.equal('alpha');
  });

  it('answers NotFoundError for a missing workflow', async () => {
    for (const name of ['missing', 'missing.yaml']) {
      const error = await rejection<unknown>(registry.get(name));
      expect(error, name).to.be.instanceOf(NotFoundError);
      expect((error as NotFoundError).code).to.equal(ERROR_CODES.WORKFLOW_NOT_FOUND);
    }
  });

  it('answers ValidationError for an invalid file, including a name that is not the stem', async () => {
    await writeFile(join(dir, 'broken.yaml'), 'name: broken\nsteps: [');
    await writeFile(join(dir, 'renamed.yaml'), yaml('other'));
    const broken = await rejection<unknown>(registry.get('broken'));
    expect(broken).to.be.instanceOf(ValidationError);
    expect((broken as ValidationError).code).to.equal(ERROR_CODES.WORKFLOW_INVALID);
    const renamed = (await rejection<unknown>(registry.get('renamed'))) as ValidationError;
    expect(renamed.details?.[0]).to.deep.include({
      loc: ['name'],
      type: 'value_error.name_mismatch',
    });
  });

  it('caches until the file changes', async () => {
    const first = await registry.get('alpha');
    expect(await registry.get('alpha')).to.equal(first);
    await writeFile(join(dir, 'alpha.yaml'), yaml('alpha', '  - name: b\n    agent: tier0_echo\n'));
    const second = await registry.get('alpha');
    expect(second).to.not.equal(first);
    expect(second.compiled.steps.map((s) => s.name)).to.deep.equal(['a', 'b']);
  });

  it('notices a removed file at once, even right after resolving it', async () => {
    const first = await registry.get('alpha');
    await writeFile(join(dir, 'alpha.yml'), yaml('alpha', '  - name: b\n    agent: tier0_echo\n'));
    await rm(join(dir, 'alpha.yaml'));
    const second = await registry.get('alpha');
    expect(second.path).to.equal(join(dir, 'alpha.yml'));
    expect(second).to.not.equal(first);
    await rm(join(dir, 'alpha.yml'));
    expect(await rejection<unknown>(registry.get('alpha'))).to.be.instanceOf(NotFoundError);
  });

  it('reloads after invalidate', async () => {
    const first = await registry.get('alpha');
    registry.invalidate('alpha');
    const second = await registry.get('alpha');
    expect(second).to.not.equal(first);
    expect(second.yamlText).to.equal(first.yamlText);
    registry.invalidate();
    expect(await registry.get('alpha')).to.not.equal(second);
  });

  it('saves a new workflow atomically, keeping the text exactly', async () => {
    const text = yaml('fresh', '    # trailing comment\n');
    const saved = await registry.save('fresh', text);
    expect(saved.path).to.equal(join(dir, 'fresh.yaml'));
    expect(await readFile(join(dir, 'fresh.yaml'), 'utf8')).to.equal(text);
    expect((await readdir(dir)).filter((f) => f.endsWith('.tmp'))).to.deep.equal([]);
    expect(await registry.list()).to.include('fresh');
    expect((await registry.get('fresh')).yamlText).to.equal(text);
  });

  it('saves over an existing file and serves the new version', async () => {
    await registry.get('beta');
    const text = yaml('beta', '  - name: b\n    agent: tier0_echo\n    depends_on: [a]\n');
    await registry.save('beta', text);
    expect(await readFile(join(dir, 'beta.yml'), 'utf8')).to.equal(text);
    expect((await registry.get('beta')).compiled.steps).to.have.length(2);
  });

  it('saves over a symlink by replacing the link, not the file it points to', async () => {
    await symlink(join(dir, 'alpha.yaml'), join(dir, 'linked.yaml'));
    await registry.save('linked', yaml('linked'));
    expect(await readFile(join(dir, 'alpha.yaml'), 'utf8')).to.equal(yaml('alpha'));
    expect((await registry.get('linked')).yamlText).to.equal(yaml('linked'));
  });

  it('validates fully before saving and writes nothing when invalid', async () => {
    const mismatch = (await rejection<unknown>(
      registry.save('gamma', yaml('delta')),
    )) as ValidationError;
    expect(mismatch).to.be.instanceOf(ValidationError);
    expect(mismatch.details?.[0]).to.deep.include({
      loc: ['name'],
      type: 'value_error.name_mismatch',
    });
    const cyclic = `name: gamma\nsteps:\n  - {name: a, agent: tier0_echo, depends_on: [b]}\n  - {name: b, agent: tier0_echo, depends_on: [a]}\n`;
    const cycle = (await rejection<unknown>(registry.save('gamma', cyclic))) as ValidationError;
    expect(cycle.details?.[0]?.msg).to.equal('dependency cycle: a → b → a');
    expect(await rejection<unknown>(registry.save('gamma', 'steps: ['))).to.be.instanceOf(
      ValidationError,
    );
    expect(await registry.list()).to.not.include('gamma');
  });

  it('rejects names that cannot name a workflow file', async () => {
    for (const name of ['../evil', '.hidden', 'a/b', '', 'a b', 'x\u0000y', '.yaml']) {
      const error = (await rejection<unknown>(registry.save(name, yaml('x')))) as ValidationError;
      expect(error, name).to.be.instanceOf(ValidationError);
      expect(error.details?.[0]?.loc).to.deep.equal(['name']);
    }
  });

  it('stores a name given with .yaml as <name>.yaml, never <name>.yaml.yaml', async () => {
    const saved = await registry.save('fresh.yaml', yaml('fresh'));
    expect(saved.name).to.equal('fresh');
    expect(saved.file).to.equal('fresh.yaml');
    expect((await readdir(dir)).filter((f) => f.startsWith('fresh'))).to.deep.equal(['fresh.yaml']);
  });

  it('treats a workflow named agents as an ordinary workflow', async () => {
    await registry.save('agents', yaml('agents'));
    expect(await registry.list()).to.include('agents');
    expect((await registry.get('agents')).file).to.equal('agents.yaml');
  });

  it('refuses to save into a read-only (shipped) directory with its reason, writing nothing', async () => {
    const readOnly = createWorkflowRegistry({ dir, readOnlyReason: 'set AGENTIC_WORKFLOWS_DIR' });
    const error = (await rejection<unknown>(
      readOnly.save('fresh', yaml('fresh')),
    )) as DependencyError;
    expect(error).to.be.instanceOf(DependencyError);
    expect(error.status).to.equal(503);
    expect(error.message).to.equal('set AGENTIC_WORKFLOWS_DIR');
    expect(await readdir(dir)).to.not.include('fresh.yaml');
    expect((await readOnly.get('alpha')).name).to.equal('alpha');
  });

  it('accepts registered custom agent names and still rejects unknown ones', async () => {
    await writeFile(join(dir, 'custom.yaml'), yaml('custom').replace('tier0_echo', 'summarize'));
    expect(await rejection<unknown>(registry.get('custom'))).to.be.instanceOf(ValidationError);
    const withCustom = createWorkflowRegistry({ dir, customAgents: new Set(['summarize']) });
    expect((await withCustom.get('custom')).compiled.steps[0]?.agent).to.equal('summarize');
    const unknown = yaml('other').replace('tier0_echo', 'tier0_nope');
    const error = (await rejection<unknown>(withCustom.save('other', unknown))) as ValidationError;
    expect(error.details?.[0]?.loc).to.deep.equal(['steps', 0, 'agent']);
  });

  it('reports an unwritable directory as DependencyError', async () => {
    await rm(dir, { recursive: true });
    expect(await rejection<unknown>(registry.save('alpha', yaml('alpha')))).to.be.instanceOf(
      DependencyError,
    );
  });

  describe('resolve (containment)', () => {
    it('resolves names and relative YAML paths to real paths inside the directory', () => {
      expect(registry.resolve('alpha')).to.equal(join(dir, 'alpha.yaml'));
      expect(registry.resolve('beta')).to.equal(join(dir, 'beta.yml'));
      expect(registry.resolve('beta.yml')).to.equal(join(dir, 'beta.yml'));
    });

    it('rejects traversal, absolute paths, NUL bytes, hidden files and odd separators', async () => {
      await writeFile(join(root, 'outside.yaml'), yaml('outside'));
      for (const candidate of [
        '../outside.yaml',
        '../outside',
        'sub/../../outside.yaml',
        join(root, 'outside.yaml'),
        '/etc/passwd',
        'alpha\u0000.yaml',
        '.hidden.yaml',
        '.hidden',
        'sub//alpha.yaml',
        '..\\outside.yaml',
        './alpha.yaml',
        'alpha.txt',
        'notes.txt',
        '',
      ]) {
        expect(registry.resolve(candidate), JSON.stringify(candidate)).to.equal(undefined);
        expect(
          await rejection<unknown>(registry.get(candidate)),
          JSON.stringify(candidate),
        ).to.be.instanceOf(NotFoundError);
      }
    });

    it('rejects symlinks that escape the directory and follows those that stay inside', async () => {
      await writeFile(join(root, 'outside.yaml'), yaml('escape'));
      await symlink(join(root, 'outside.yaml'), join(dir, 'escape.yaml'));
      await symlink(root, join(dir, 'up'));
      await symlink(join(dir, 'alpha.yaml'), join(dir, 'inside.yaml'));
      expect(registry.resolve('escape')).to.equal(undefined);
      expect(registry.resolve('up/outside.yaml')).to.equal(undefined);
      expect(registry.resolve('inside')).to.equal(join(dir, 'alpha.yaml'));
      expect(await registry.list()).to.not.include('escape');
    });
  });
});
