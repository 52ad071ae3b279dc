/**
 * The service process (`npm start`, `agentic serve`): configuration from the environment,
 * start-up, and signal handling. Configuration errors (bad variables, an adapter that cannot be
 * loaded) print one message without a stack and exit 1. SIGTERM/SIGINT shut down gracefully
 * and exit 0; a second signal exits at once with 1.
 */
import { loadConfig, type Config } from '../config/index.js';
import { ConfigError, errorMessage } from '../errors.js';
import { createLogger } from '../log.js';
import { startServer } from './server.js';

type Env = Record<string, string | undefined>;

function fail(message: string): void {
  process.stderr.write(`${message}\n`);
  process.exitCode = 1;
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
  let running;
  try {
    running = await startServer({ config, logger });
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message);
    const listen = (error as NodeJS.ErrnoException).code;
    if (listen === 'EADDRINUSE' || listen === 'EACCES') {
      return fail(`cannot listen on ${config.host}:${config.port}: ${errorMessage(error)}`);
    }
    logger.fatal({ err: error }, 'start-up failed');
    process.exitCode = 1;
    return;
  }
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
