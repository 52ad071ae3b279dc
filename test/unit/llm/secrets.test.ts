import { expect } from 'chai';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createEnvSecretProvider,
  createFileSecretProvider,
  createSecretProvider,
} from '../../../src/config/secrets.js';

describe('SecretProvider', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-secrets-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('reads the environment, treating blank values as unset', () => {
    const secrets = createEnvSecretProvider({ OPENAI_API_KEY: ' sk-1 ', EMPTY: '  ' });
    expect(secrets.get('OPENAI_API_KEY')).to.equal('sk-1');
    expect(secrets.get('EMPTY')).to.equal(undefined);
    expect(secrets.get('NONE')).to.equal(undefined);
  });

  it('reads mounted secret files (trailing newline dropped), never paths', async () => {
    await writeFile(join(dir, 'ANTHROPIC_API_KEY'), 'file-key\n');
    const secrets = createFileSecretProvider(dir);
    expect(secrets.get('ANTHROPIC_API_KEY')).to.equal('file-key');
    expect(secrets.get('MISSING')).to.equal(undefined);
    expect(secrets.get('../etc/passwd')).to.equal(undefined);
  });

  it('prefers the secrets directory over the environment', async () => {
    await writeFile(join(dir, 'OPENAI_API_KEY'), 'from-file');
    const secrets = createSecretProvider({ OPENAI_API_KEY: 'from-env', GITHUB_TOKEN: 'gh' }, dir);
    expect(secrets.get('OPENAI_API_KEY')).to.equal('from-file');
    expect(secrets.get('GITHUB_TOKEN')).to.equal('gh');
  });
});
