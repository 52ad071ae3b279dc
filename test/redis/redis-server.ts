/**
 * A real `redis-server` (Debian's package) for the scale-out tests: started on a free loopback
 * port with no persistence, stopped and restarted on demand (the fault tests stop it mid-load).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';

export interface TestRedis {
  port: number;
  /** `redis://127.0.0.1:<port>` */
  url: string;
  /** Stops the server (SIGTERM, waits for the exit). Safe to call twice. */
  stop(): Promise<void>;
  /** Starts it again on the same port (after `stop`). */
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

async function launch(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
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
    child.stderr?.resume();
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
export async function startTestRedis(): Promise<TestRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined = await launch(port);
  const stop = async (): Promise<void> => {
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
    stop,
    async restart() {
      await stop();
      child = await launch(port);
    },
  };
}
