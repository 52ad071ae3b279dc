import { expect } from 'chai';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { packageRoot } from '../../../src/config/index.js';
import { FINISHED_STEP_STATUSES, STEP_STATUS, STEP_STATUSES } from '../../../src/workflow/types.js';
import { DERIVED_ENUMS, withDerivedEnums } from '../../../scripts/derived-enums.js';

async function schema(file: string): Promise<{ path: string; text: string }> {
  const path = join(packageRoot, 'schemas', file);
  return { path, text: await readFile(path, 'utf8') };
}

function enumAt(text: string, path: readonly string[]): unknown {
  let node = JSON.parse(text) as unknown;
  for (const key of path) node = (node as Record<string, unknown>)[key];
  return node;
}

describe('step statuses (one declaration: STEP_STATUSES)', () => {
  it('names each status once, with the spec wire strings', () => {
    expect(STEP_STATUSES).to.deep.equal([
      'pending',
      'running',
      'success',
      'failed',
      'skipped',
      'retrying',
    ]);
    expect(Object.values(STEP_STATUS)).to.deep.equal(STEP_STATUSES);
    expect(STEP_STATUS.RETRYING).to.equal('retrying');
    expect(FINISHED_STEP_STATUSES).to.deep.equal(['success', 'failed', 'skipped']);
  });

  it('is the enum of every schema that lists step statuses (written by npm run gen)', async () => {
    const sites = DERIVED_ENUMS.filter((derived) => derived.values === STEP_STATUSES);
    expect(sites.map((site) => site.file).sort()).to.deep.equal([
      'events.schema.json',
      'run-record.schema.json',
    ]);
    for (const site of sites) {
      expect(enumAt((await schema(site.file)).text, site.path), site.file).to.deep.equal(
        STEP_STATUSES,
      );
    }
  });

  it('npm run gen rewrites a schema copy that drifted, and only that array', async () => {
    const { path, text } = await schema('events.schema.json');
    const drifted = text.replace(
      '"enum": ["pending", "running", "success", "failed", "skipped", "retrying"]',
      '"enum": ["pending", "running", "success", "failed", "skipped"]',
    );
    expect(drifted).to.not.equal(text);
    const site = DERIVED_ENUMS.filter((derived) => derived.file === 'events.schema.json');
    expect(await withDerivedEnums(drifted, site, path)).to.equal(text);
    expect(await withDerivedEnums(text, site, path)).to.equal(text);
  });
});
