/**
 * The sessions of 2025-era MCP clients (src/http/mcp/legacy-sessions.ts), with the real SDK's
 * server and transport: bounded in number, closed when idle, an unknown id a 404.
 */
import { expect } from 'chai';
import * as sdk from '@modelcontextprotocol/server';
import {
  createLegacySessions,
  type LegacySessions,
} from '../../../src/http/mcp/legacy-sessions.js';

const HEADERS = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

function post(body: unknown, session?: string): Request {
  return new Request('http://localhost/mcp', {
    method: 'POST',
    headers: session === undefined ? HEADERS : { ...HEADERS, 'mcp-session-id': session },
    body: JSON.stringify(body),
  });
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'unit', version: '1.0.0' },
  },
};
const PING = { jsonrpc: '2.0', id: 2, method: 'ping' };

describe('MCP legacy sessions', () => {
  let clock = 0;
  let sessions: LegacySessions;
  const errors: unknown[] = [];
  beforeEach(() => {
    clock = 0;
    sessions = createLegacySessions({
      sdk,
      createServer: () => new sdk.Server({ name: 'unit', version: '1.0.0' }, { capabilities: {} }),
      maxRequestBodySize: 1 << 20,
      maxSessions: 2,
      idleMs: 60_000,
      now: () => clock,
      onerror: (error) => errors.push(error),
    });
  });
  afterEach(async () => {
    await sessions.close();
  });

  async function open(): Promise<string> {
    const response = await sessions.handle(post(INITIALIZE));
    expect(response.status).to.equal(200);
    await response.body?.cancel();
    const id = response.headers.get('mcp-session-id');
    expect(id).to.be.a('string');
    return id as string;
  }

  async function ping(id: string): Promise<number> {
    const response = await sessions.handle(post(PING, id));
    await response.body?.cancel();
    return response.status;
  }

  it('keeps a session per initialize and answers its requests; an unknown id is a 404', async () => {
    const id = await open();
    expect(sessions.size).to.equal(1);
    expect(await ping(id)).to.equal(200);
    const unknown = await sessions.handle(post(PING, 'no-such-session'));
    expect(unknown.status).to.equal(404);
    expect(await unknown.json()).to.deep.include({
      error: { code: -32001, message: 'Session not found' },
    });
  });

  it('a request without a session that is not an initialize leaves no session behind', async () => {
    const response = await sessions.handle(post(PING));
    await response.body?.cancel();
    expect(response.status).to.be.within(400, 499);
    expect(sessions.size).to.equal(0);
  });

  it('closes the least recently used session to make room past the bound', async () => {
    const first = await open();
    const second = await open();
    clock += 1;
    expect(await ping(first)).to.equal(200); // first is now the most recently used
    const third = await open();
    expect(sessions.size).to.equal(2);
    expect(await ping(second)).to.equal(404);
    expect(await ping(first)).to.equal(200);
    expect(await ping(third)).to.equal(200);
  });

  it('closes sessions idle longer than the idle time when a session is opened', async () => {
    const stale = await open();
    clock += 60_001;
    const fresh = await open();
    expect(await ping(stale)).to.equal(404);
    expect(await ping(fresh)).to.equal(200);
    expect(sessions.size).to.equal(1);
  });
});
