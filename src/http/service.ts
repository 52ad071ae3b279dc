/**
 * The service process (`npm start`, `agentic serve`): configuration from the environment,
 * start-up, and signal handling. Configuration errors (bad variables, an adapter that cannot be
 * loaded, Redis unreachable) print one message without a stack and exit 1. SIGTERM/SIGINT shut
 * down gracefully and exit 0; a second signal exits at once with 1. `AGENTIC_ROLE=worker`
 * starts a worker instead of the HTTP service (no API; its metrics and health endpoint on
 * AGENTIC_WORKER_PORT when one is configured).
 */
import { loadConfig, type Config } from '../config/index.js';
import { ConfigError } from '../errors.js';
import { createLogger } from '../log.js';
import { onStopSignals } from '../scale/stop-signals.js';
import { startServer } from './server.js';

type Env = Record<string, string | undefined>;

function fail(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exitCode = 1;
}

/**
 * One line for the start-up failures a user causes (a runs directory that is a file, an
 * address that cannot be bound, a port in use), or undefined for anything else.
 */
export function startupProblem(error: unknown, config: Config): string | undefined {
  const { code, syscall, path } = error as NodeJS.ErrnoException;
  // A worker listens only on its endpoint's port.
  const worker = config.role === 'worker';
  const where = `${config.host}:${worker ? (config.workerPort ?? '') : config.port}`;
  const portHint = worker ? 'AGENTIC_WORKER_PORT' : 'AGENTIC_PORT or --port';
  switch (code) {
    case 'EADDRINUSE':
      return `cannot listen on ${where}: the port is in use; pick another with ${portHint}`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${where}: the address is not one of this machine's; set AGENTIC_HOST or --host (e.g. 127.0.0.1)`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `cannot listen on ${where}: the host name does not resolve; set AGENTIC_HOST or --host (e.g. 127.0.0.1)`;
    case 'EACCES':
      if (syscall === 'listen' || syscall === 'bind') {
        return `cannot listen on ${where}: permission denied (ports below 1024 need privileges); set ${portHint}`;
      }
      return `cannot start: permission denied on ${path ?? 'a file'}`;
    case 'EEXIST':
    case 'ENOTDIR':
      if (path !== undefined && path.startsWith(config.runsDir)) {
        return `AGENTIC_RUNS_DIR=${config.runsDir} is not a directory (a file is in the way); remove it or set AGENTIC_RUNS_DIR`;
      }
      return undefined;
    case undefined:
    default:
      return undefined;
  }
}

export async function runService(env: Env, overrides: Partial<Config> = {}): Promise<void> {
  let config: Config;
  try {
    config = Object.freeze({ ...loadConfig(env), ...overrides });
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    throw error;
  }
  const logger = createLogger({ format: config.logFormat, level: config.logLevel });
  // A worker serves no API: it executes queued runs, with an endpoint for metrics and probes
  // when AGENTIC_WORKER_PORT (or AGENTIC_METRICS) asks for one. (Both check Redis first.)
  const starting: Promise<{ close(options: { exiting: boolean }): Promise<void> }> =
    config.role === 'worker'
      ? // The Redis side is loaded only by a worker (issue 25: start-up).
        Promise.all([import('../scale/worker-service.js'), import('./worker-endpoint.js')]).then(
          ([{ startWorker }, { startWorkerEndpoint }]) =>
            startWorker(config, logger, { serve: startWorkerEndpoint }),
        )
      : startServer({ config, logger });
  // Signals are handled from the start: one arriving just after the start-up log line still
  // shuts down gracefully (a failed start has nothing to close).
  onStopSignals(logger, () =>
    starting.then(
      // The signal handler exits the process right after.
      (running) => running.close({ exiting: true }),
      () => undefined,
    ),
  );
  try {
    await starting;
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    const line = startupProblem(error, config);
    if (line !== undefined) return fail(line);
    logger.fatal({ err: error }, 'start-up failed');
    process.exitCode = 1;
  }
}
