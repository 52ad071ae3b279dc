/**
 * How a service or worker process stops: apart from ./worker-service.ts so that a process that
 * is no worker does not load the Redis side to handle its signals (issue 25).
 */
import type { Logger } from '../log.js';

/** Installs the signal handling of a service process around `close`. */
export function onStopSignals(logger: Logger, close: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      logger.warn({ signal }, 'second signal: exiting now');
      process.exit(1);
    }
    stopping = true;
    logger.info({ signal }, 'shutting down');
    close().then(
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
