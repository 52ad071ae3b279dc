import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
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

  it('counts this live process as alive while its lease is fresh, and as gone once it is not', async () => {
    const info = await ownInfo();
    expect(info.pid).to.equal(process.pid);
    expect(info.leaseMs).to.equal(30_000);
    const now = Date.now();
    expect(ownerAlive(info, now - 29_000, now)).to.equal(true);
    expect(ownerAlive(info, now - 31_000, now)).to.equal(false);
  });

  it('writes its lease time and refreshes the file three times per lease', async () => {
    const lease = await acquireOwnerLease({
      runsDir: dir,
      logger: createSilentLogger(),
      leaseMs: 300,
    });
    const path = join(dir, `.${lease.id}.owner`);
    const info = JSON.parse(await readFile(path, 'utf8')) as OwnerInfo;
    expect(info).to.include({ leaseMs: 300, heartbeatMs: 100 });
    const first = (await stat(path)).mtimeMs;
    while ((await stat(path)).mtimeMs === first) await new Promise((r) => setTimeout(r, 20));
    await lease.release({ keep: true });
    expect(await readdir(dir)).to.deep.equal([`.${lease.id}.owner`]);
  });

  it('counts a zombie (killed, not reaped by its parent) as gone, with a fresh lease', async function () {
    if (processStartTime(process.pid) === null) this.skip(); // no /proc
    const info = await ownInfo();
    // sh execs into sleep, which never waits: the short sleep, exiting after the exec, stays a
    // zombie child of it.
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 1000'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const pid = Number(
        await new Promise<string>((resolve) =>
          parent.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString())),
        ),
      );
      const statOf = (): string => readFileSync(`/proc/${pid}/stat`, 'utf8');
      while (!/\) Z /.test(statOf())) await new Promise((r) => setTimeout(r, 10));
      const zombie = { ...info, pid, procStart: processStartTime(pid) };
      expect(ownerAlive(zombie, Date.now(), Date.now())).to.equal(false);
    } finally {
      parent.kill('SIGKILL');
      await new Promise((resolve) => parent.on('exit', resolve));
    }
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

  it('judges an owner on another machine by its lease, with a margin for the clocks', async () => {
    const info: OwnerInfo = { ...(await ownInfo()), machine: 'elsewhere||' };
    const now = Date.now();
    expect(ownerAlive(info, now - 5_000, now)).to.equal(true);
    expect(ownerAlive(info, now - 61_000, now)).to.equal(false);
    expect(ownerAlive({ ...info, leaseMs: 50_000 }, now - 99_000, now)).to.equal(true);
    // Files of older versions have no lease: max(60 s, 6 heartbeats).
    const { leaseMs: _lease, ...old } = info;
    expect(ownerAlive({ ...old, heartbeatMs: 20_000 }, now - 100_000, now)).to.equal(true);
  });

  it('judges an owner in another pid namespace of this kernel (a restarted container) by its lease', async () => {
    const own = await ownInfo();
    const [host, boot] = own.machine.split('|');
    const info: OwnerInfo = { ...own, machine: `${host}|${boot}|pid:[1]`, leaseMs: 2_000 };
    const now = Date.now();
    expect(ownerAlive(info, now - 1_000, now)).to.equal(true);
    // Without a boot id (not Linux) the clocks may differ: the other machines' margin applies.
    expect(ownerAlive(info, now - 3_000, now)).to.equal(boot === '');
  });
});
