import { expect } from 'chai';
import { WS_CLOSE } from '../../src/http/ws-hub.js';
import { connectWs } from './events-fixtures.js';
import { call, startTestService, type TestService } from './harness.js';

describe('live-event variables through the real service', () => {
  let svc: TestService;
  afterEach(async () => {
    await svc.dispose();
  });

  it('applies AGENTIC_WS_MAX_PENDING_PER_IP, AGENTIC_WS_PING_INTERVAL_SECONDS and AGENTIC_FINISHED_BUFFERS_MAX_BYTES', async () => {
    svc = await startTestService({
      env: {
        AGENTIC_WS_MAX_PENDING_PER_IP: '1',
        AGENTIC_WS_PING_INTERVAL_SECONDS: '0.02',
        AGENTIC_FINISHED_BUFFERS_MAX_BYTES: '1024',
      },
    });
    const ws = (runId: string) =>
      connectWs(`${svc.url.replace('http', 'ws')}/ws/execution/${runId}`);
    const waiting = ws('later-1');
    await waiting.pings.until((pings) => pings.length >= 2, 'two pings');
    const over = ws('later-2');
    expect(await over.closed).to.deep.equal({
      code: WS_CLOSE.TRY_AGAIN_LATER,
      reason: 'too many sockets waiting for runs not started (max 1)',
    });

    // A test_deterministic run's events weigh more than 1 KiB: its buffer is not kept.
    const posted = await call(svc.url, 'POST', '/api/run', {
      workflow: 'test_deterministic',
      input_data: { text: 'x' },
      run_id: 'later-1',
    });
    expect(posted.status).to.equal(200);
    await waiting.events.until((e) => e.at(-1)?.type === 'workflow_end', 'workflow_end');
    expect(svc.hub.stats()).to.deep.include({ finishedRuns: 0, finishedBytes: 0 });
    waiting.ws.close();
    await waiting.closed;
  });
});
