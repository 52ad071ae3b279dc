import { expect } from 'chai';
import { runCampaign } from '../chaos/campaign.js';

describe('an accepted run finishes: SIGKILL at random moments (a small chaos campaign)', function () {
  this.timeout(240_000);

  it('ends every run success, and no finished step runs again', async () => {
    const lines: string[] = [];
    const result = await runCampaign({
      runs: 12,
      kills: 3,
      seed: 26,
      killAfterMs: [300, 900],
      windowMs: 250,
      log: (line) => lines.push(line),
    });
    expect(result.violations, lines.join('\n')).to.deep.equal([]);
    expect([...result.statuses.values()]).to.have.length(12);
    expect(result.executions).to.be.at.least(12 * 6);
  });
});

describe('an accepted run finishes: workers killed at random moments (api + 2 workers, Redis)', function () {
  this.timeout(300_000);

  it('ends every run success on the workers left, and no finished step runs again', async () => {
    const lines: string[] = [];
    const result = await runCampaign({
      runs: 12,
      kills: 3,
      seed: 27,
      mode: 'workers',
      killAfterMs: [500, 1500],
      windowMs: 250,
      log: (line) => lines.push(line),
    });
    expect(result.violations, lines.join('\n')).to.deep.equal([]);
    expect([...result.statuses.values()]).to.have.length(12);
    expect(result.executions).to.be.at.least(12 * 6);
  });
});

describe('a rolling restart: SIGTERM with 200 runs in flight, then a new process', function () {
  this.timeout(240_000);

  it('ends all 200 runs success, and no finished step runs again', async () => {
    const lines: string[] = [];
    const result = await runCampaign({
      runs: 200,
      kills: 1,
      signal: 'SIGTERM',
      seed: 2,
      // Each run takes at least 2.5 s, so every run is still running at the grace's end.
      stepMs: [500, 800],
      killAfterMs: [400, 600],
      windowMs: 0,
      env: { AGENTIC_SHUTDOWN_GRACE_SECONDS: '1' },
      log: (line) => lines.push(line),
    });
    expect(result.violations, lines.join('\n')).to.deep.equal([]);
    expect([...result.statuses.values()].filter((s) => s === 'success')).to.have.length(200);
  });
});
