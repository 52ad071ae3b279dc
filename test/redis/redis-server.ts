/**
 * A real `redis-server` (Debian's package) for the scale-out tests: started on a free loopback
 * port, stopped and restarted on demand (the fault tests stop it mid-load). No persistence by
 * default; `persistent` keeps an append-only file in a temp directory, as a deployment's Redis
 * must (queued runs live only in Redis), so a restart finds the data the stop left.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestRedis {
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** Stops the server (SIGTERM, waits for the exit); `restart` finds its data. Safe twice. */
  stop(): Promise<void>;
  /** Stops the server and removes its data directory (with `persistent`). */
  destroy(): Promise<void>;
  /** Starts it again on the same port, stopping it first if it runs (SIGTERM: an append-only file is flushed first). */
  restart(): Promise<void>;
}

/** A port the kernel hands out for a listener on 127.0.0.1, released before it is returned. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  server.close();
  await once(server, 'close');
  return port;
}

async function launch(port: number, dataDir: string | undefined): Promise<ChildProcess> {
  const persistence =
    dataDir === undefined
      ? ['--appendonly', 'no']
      : ['--dir', dataDir, '--appendonly', 'yes', '--appendfsync', 'everysec'];
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const output: string[] = [];
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      output.push(chunk.toString());
      if (output.join('').includes('Ready to accept connections')) {
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('error', (error) =>
      reject(
        new Error(
          `redis-server could not start (is Debian's redis-server installed?): ${error.message}`,
        ),
      ),
    );
    child.once('exit', (code) =>
      reject(
        new Error(
          `redis-server exited with ${String(code)} before it was ready: ${output.join('')}`,
        ),
      ),
    );
  });
  return child;
}

/** Starts a redis-server for one test suite; call `stop()` in `after`. */
export async function startTestRedis(options: { persistent?: boolean } = {}): Promise<TestRedis> {
  const port = await freePort();
  const dataDir =
    options.persistent === true ? await mkdtemp(join(tmpdir(), 'agentic-redis-')) : undefined;
  let child: ChildProcess | undefined = await launch(port, dataDir);
  const halt = async (): Promise<void> => {
    const running = child;
    child = undefined;
    if (running === undefined || running.exitCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGTERM');
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop: halt,
    async destroy() {
      await halt();
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    },
    async restart() {
      await halt();
      child = await launch(port, dataDir);
    },
  };
}
