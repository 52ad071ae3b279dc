import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSilentLogger } from '../../../src/log.js';
import {
  acquireOwnerLease,
  ownerAlive,
  processStartTime,
  type OwnerInfo,
} from '../../../src/store/owner.js';

describe('owner leases (store/owner.ts)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-owner-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function ownInfo(): Promise<OwnerInfo> {
    const lease = await acquireOwnerLease({ runsDir: dir, logger: createSilentLogger() });
    const [name] = await readdir(dir);
    const info = JSON.parse(await readFile(join(dir, name!), 'utf8')) as OwnerInfo;
    await lease.release();
    return info;
  }

  it('writes an owner file naming this process and removes it on release', async () => {
    const lease = await acquireOwnerLease({ runsDir: dir, logger: createSilentLogger() });
    expect(await readdir(dir)).to.deep.equal([`.${lease.id}.owner`]);
    await lease.release();
    expect(await readdir(dir)).to.deep.equal([]);
  });

  it('counts this live process as alive, whatever its heartbeat says', async () => {
    const info = await ownInfo();
    expect(info.pid).to.equal(process.pid);
    expect(ownerAlive(info, 0, Date.now())).to.equal(true);
  });

  it('counts an exited process of this machine as gone at once, with a fresh heartbeat', async () => {
    const info = await ownInfo();
    const child = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    const pid = child.pid!;
    await new Promise((resolve) => child.on('exit', resolve));
    expect(ownerAlive({ ...info, pid }, Date.now(), Date.now())).to.equal(false);
  });

  it('counts a reused pid (another start time) as gone', async function () {
    if (processStartTime(process.pid) === null) this.skip(); // no /proc: the heartbeat decides
    const info = await ownInfo();
    expect(ownerAlive({ ...info, procStart: '1' }, Date.now(), Date.now())).to.equal(false);
  });

  it('judges an owner on another machine by its heartbeat', async () => {
    const info: OwnerInfo = { ...(await ownInfo()), machine: 'elsewhere||' };
    const now = Date.now();
    expect(ownerAlive(info, now - 5_000, now)).to.equal(true);
    expect(ownerAlive(info, now - 61_000, now)).to.equal(false);
    expect(ownerAlive({ ...info, heartbeatMs: 20_000 }, now - 100_000, now)).to.equal(true);
  });
});
