import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnService, type ServiceProcess } from './service-process.js';

/**
 * Issue 23.3 against the real process with a 256 MB heap, as the fault campaign ran it: a
 * provider that streams one never-ending SSE event (1 KB `data:` lines and no blank line). Eight
 * such calls at once used to take the process down (exit 134); with a per-call bound of 32 MiB
 * they still did under this heap, hence the default derived from the heap limit.
 */
describe('service process: endless model answers under a 256 MB heap', function () {
  this.timeout(120_000);
  let provider: Server;
  let service: ServiceProcess | undefined;
  let dir: string;

  before(async () => {
    const line = `data: ${'x'.repeat(1024)}\n`.repeat(64);
    provider = createServer((req, res) => {
      req.resume();
      if (req.url?.endsWith('/models') === true) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ data: [{ id: 'gpt-4o-mini' }] }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      let open = true;
      res.on('close', () => (open = false));
      // 512 000 lines of 1 KB at most (500 MB), as the campaign's provider sent.
      let sent = 0;
      const pump = (): void => {
        while (open && sent < 512_000) {
          sent += 64;
          if (!res.write(line)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    });
    await new Promise<void>((resolve) => provider.listen(0, '127.0.0.1', resolve));
    dir = await mkdtemp(join(tmpdir(), 'agentic-endless-'));
  });

  after(async () => {
    service?.child.kill('SIGKILL');
    if (service !== undefined) await service.exit;
    provider.closeAllConnections();
    await new Promise<void>((resolve) => provider.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  it('fails each of 8 concurrent calls with the answer bound and lives', async () => {
    const { port } = provider.address() as AddressInfo;
    service = spawnService(
      {
        AGENTIC_PORT: '0',
        AGENTIC_RUNS_DIR: join(dir, 'runs'),
        AGENTIC_RATE_LIMIT_DEFAULT: '1000/minute',
        LOG_FORMAT: 'json',
        OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
        OPENAI_API_KEY: 'sk-endless-0123456789',
      },
      { file: process.execPath, args: ['--max-old-space-size=256', 'dist/src/main.js'] },
    );
    const url = await service.listening;
    const chat = async (): Promise<string> => {
      const response = await fetch(`${url}/api/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'openai:gpt-4o-mini',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      expect(response.status).to.equal(200);
      return response.text();
    };
    const answers = await Promise.all(Array.from({ length: 8 }, chat));
    for (const answer of answers) {
      expect(answer).to.include('"type":"error"');
      expect(answer).to.include('AGENTIC_LLM_MAX_ANSWER_BYTES');
    }
    const health = await fetch(`${url}/api/health`);
    expect(health.status).to.equal(200);
    expect(service.child.exitCode).to.equal(null);
  });
});
