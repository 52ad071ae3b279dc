import { expect } from 'chai';
import WebSocket from 'ws';
import { startTestService, type TestService } from './harness.js';

const KEY = 'client-address-key-0123456789';
const VICTIM = '203.0.113.50';

/** Opens `/ws/execution/{id}` and resolves with the close code the service answers with. */
function wsCloseCode(port: number, headers: Record<string, string>): Promise<number> {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/ws/execution/run1`, { headers });
  return new Promise((resolve, reject) => {
    ws.on('close', (code) => resolve(code));
    ws.on('error', reject);
  });
}

async function statuses(
  svc: TestService,
  count: number,
  headers: (i: number) => Record<string, string>,
): Promise<number[]> {
  const seen: number[] = [];
  for (let i = 0; i < count; i += 1) {
    seen.push((await fetch(`${svc.url}/api/workflows`, { headers: headers(i) })).status);
  }
  return seen;
}

const count = (list: number[], status: number): number => list.filter((s) => s === status).length;

describe('client address behind a trusted proxy (AGENTIC_TRUST_PROXY=1)', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  it('a malformed proxy entry does not let forged earlier entries dodge a 5/minute limit', async () => {
    svc = await startTestService({
      env: { AGENTIC_TRUST_PROXY: '1', AGENTIC_RATE_LIMIT_DEFAULT: '5/minute' },
    });
    // The proxy appended `unknown`: every request falls back to the socket address (one client).
    const seen = await statuses(svc, 20, (i) => ({
      'X-Forwarded-For': `198.51.100.${i}, unknown`,
    }));
    expect(count(seen, 200)).to.equal(5);
    expect(count(seen, 429)).to.equal(15);
  });

  it('a proxy appending ip:port keys the client by that ip, whatever the client forged', async () => {
    svc = await startTestService({
      env: { AGENTIC_TRUST_PROXY: '1', AGENTIC_RATE_LIMIT_DEFAULT: '5/minute' },
    });
    const seen = await statuses(svc, 20, (i) => ({
      'X-Forwarded-For': `198.51.100.${i}, 192.0.2.7:${50000 + i}`,
    }));
    expect(count(seen, 200)).to.equal(5);
    // Another client behind the same proxy still has its own budget.
    const other = await fetch(`${svc.url}/api/workflows`, {
      headers: { 'X-Forwarded-For': '192.0.2.8:50000' },
    });
    expect(other.status).to.equal(200);
  });

  it('takes the entry AGENTIC_TRUSTED_PROXY_HOPS from the right', async () => {
    svc = await startTestService({
      env: {
        AGENTIC_TRUST_PROXY: '1',
        AGENTIC_TRUSTED_PROXY_HOPS: '2',
        AGENTIC_RATE_LIMIT_DEFAULT: '5/minute',
      },
    });
    // Forged left-most entries and varying inner-proxy addresses; the client is second from the right.
    const seen = await statuses(svc, 8, (i) => ({
      'X-Forwarded-For': `198.51.100.${i}, 192.0.2.7, 10.0.0.${i}`,
    }));
    expect(seen).to.deep.equal([200, 200, 200, 200, 200, 429, 429, 429]);
    // A request that did not pass both proxies (one entry) is keyed by the socket address.
    const direct = await fetch(`${svc.url}/api/workflows`, {
      headers: { 'X-Forwarded-For': '192.0.2.7' },
    });
    expect(direct.status).to.equal(200);
  });

  it('failed keys behind a malformed proxy entry cannot lock out a chosen victim (HTTP and WebSocket)', async () => {
    svc = await startTestService({
      env: {
        AGENTIC_TRUST_PROXY: '1',
        AGENTIC_API_KEY: KEY,
        AGENTIC_AUTH_LOCKOUT_THRESHOLD: '5',
      },
    });
    const forged = { 'X-Forwarded-For': `${VICTIM}, unknown` };
    const http = await statuses(svc, 3, () => ({ ...forged, 'X-API-Key': 'wrong' }));
    expect(http).to.deep.equal([401, 401, 401]);
    for (let i = 0; i < 2; i += 1) {
      expect(await wsCloseCode(svc.port, { ...forged, 'X-API-Key': 'wrong' })).to.equal(1008);
    }
    // The victim, whose address the proxy appends itself, is not locked out...
    const victim = await fetch(`${svc.url}/api/workflows`, {
      headers: { 'X-Forwarded-For': VICTIM, 'X-API-Key': KEY },
    });
    expect(victim.status).to.equal(200);
    // ...the failures counted against the attacker's real (socket) address instead.
    const attacker = await fetch(`${svc.url}/api/workflows`, {
      headers: { ...forged, 'X-API-Key': KEY },
    });
    expect(attacker.status).to.equal(429);
    expect(attacker.headers.get('retry-after')).to.equal('300');
  });
});
