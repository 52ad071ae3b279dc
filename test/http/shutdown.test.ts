import { expect } from 'chai';
import { connect, type Socket } from 'node:net';
import { createLogger } from '../../src/log.js';
import { logLines } from '../support/log-lines.js';
import { startTestService, type TestService } from './harness.js';

/** A socket that has sent all of a request but the blank line ending its headers. */
async function halfSentRequest(url: string, path: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\n`);
  return socket;
}

/** Ends the request's headers and reads the whole response (the server closes the socket). */
async function finish(socket: Socket): Promise<string> {
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write('\r\n');
  await ended;
  return Buffer.concat(chunks).toString('utf8');
}

describe('HTTP during shutdown', () => {
  let svc: TestService | undefined;
  afterEach(async () => {
    await svc?.dispose();
    svc = undefined;
  });

  it('answers requests arriving while shutting down with 503 "shutting down", Retry-After and Connection: close, logged once', async () => {
    const { stream: sink, lines } = logLines();
    const s = (svc = await startTestService({
      env: { AGENTIC_SHUTDOWN_GRACE_SECONDS: '60' },
      logger: createLogger({ format: 'json', destination: sink }),
    }));
    // A run that keeps the shutdown waiting while the requests arrive.
    const run = await s.runtime.start({
      workflow:
        'name: slow\nsteps:\n  - { name: wait, agent: tier0_sleep, inputs: { ms: 600000 } }\n',
    });
    const first = await halfSentRequest(s.url, '/api/workflows');
    const second = await halfSentRequest(s.url, '/api/health');
    const closing = s.close();
    const responses = [await finish(first), await finish(second)];
    await s.runtime.cancel(run.runId);
    await closing;

    for (const response of responses) {
      const [head, body] = response.split('\r\n\r\n');
      expect(head).to.match(/^HTTP\/1\.1 503 /);
      expect(head).to.match(/\r\nRetry-After: 5\r\n/i);
      expect(head).to.match(/\r\nConnection: close\r\n/i);
      expect(JSON.parse(body!)).to.deep.equal({ detail: 'shutting down' });
    }
    const messages = lines.map((line) => line.msg);
    expect(messages.filter((m) => m === 'refusing requests: shutting down')).to.have.length(1);
    expect(lines.find((line) => line.msg === 'requests refused while shutting down')).to.include({
      refused: 2,
    });
    expect(lines.filter((line) => line.level === 50)).to.deep.equal([]);
  });

  it('answers a run request already inside the app when shutdown begins with 503, logged below error and without a stack', async () => {
    const { stream: sink, lines } = logLines();
    const s = (svc = await startTestService({
      env: { AGENTIC_SHUTDOWN_GRACE_SECONDS: '60' },
      logger: createLogger({ format: 'json', destination: sink }),
    }));
    const run = await s.runtime.start({
      workflow:
        'name: slow\nsteps:\n  - { name: wait, agent: tier0_sleep, inputs: { ms: 600000 } }\n',
    });
    // Headers and half the body sent: the request has passed the gate and waits in the body
    // parser when shutdown begins.
    const body = JSON.stringify({ workflow: 'test_deterministic' });
    const { hostname, port } = new URL(s.url);
    const entered = new Promise<void>((resolve) => s.server.once('request', () => resolve()));
    const socket = connect(Number(port), hostname);
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /api/run HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
    );
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await entered;
    const closing = s.close();
    while (!lines.some((l) => l.msg === 'waiting for runs')) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    socket.write(body.slice(5));
    await ended;
    await s.runtime.cancel(run.runId);
    await closing;

    const [head, rest] = Buffer.concat(chunks).toString('utf8').split('\r\n\r\n');
    expect(head).to.match(/^HTTP\/1\.1 503 /);
    expect(head).to.match(/\r\nRetry-After: 5\r\n/i);
    expect(JSON.parse(rest!)).to.deep.equal({ detail: 'shutting down' });
    expect(
      lines.filter((line) => (line.level as number) >= 50),
      JSON.stringify(lines),
    ).to.deep.equal([]);
    const logged = lines.filter((line) => line.path === '/api/run');
    expect(logged).to.have.length(1);
    expect(logged[0]).to.include({ method: 'POST', status: 503 });
    expect(logged[0]!.level).to.be.oneOf([30, 40]);
    expect(JSON.stringify(lines)).not.to.match(/\bat .*\.(ts|js):\d+/);
  });
});
