/**
 * Outermost middleware: assigns the request id, a child logger, and writes one access-log record
 * per request once the final status is known (5xx at error, 4xx at info, the rest at info; the
 * liveness probe at debug so probes do not flood the log; an error may choose its level:
 * AppError.logLevel).
 *
 * The child logger is created on first use (`ctx.state.log`), and the access record is built
 * only when its level is enabled: a request that logs nothing costs no logger allocation.
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../log.js';
import type { RequestState } from '../context.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createRequestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    const requestId = given !== '' && REQUEST_ID.test(given) ? given : randomUUID();
    let child: Logger | undefined;
    const log = (): Logger => (child ??= logger.child({ req_id: requestId }));
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    Object.defineProperty(state, 'log', { get: log, enumerable: true, configurable: true });
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const status = ctx.status;
      const level =
        state.logLevel ??
        (status >= 500 ? 'error' : ctx.path === '/api/health' ? 'debug' : ('info' as const));
      if (logger.isLevelEnabled(level)) {
        const record = {
          method: ctx.method,
          path: ctx.path,
          status,
          ms: Math.round((performance.now() - started) * 100) / 100,
        };
        log()[level](record, status >= 500 ? 'request failed' : 'request');
      }
    }
  };
}
