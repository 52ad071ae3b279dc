/**
 * Outermost middleware: assigns the request id, a child logger, and writes one access-log record
 * per request once the final status is known (5xx at error, 4xx at info, the rest at info; the
 * liveness probe at debug so probes do not flood the log).
 */
import { randomUUID } from 'node:crypto';
import type { Middleware } from 'koa';
import type { Logger } from '../../log.js';
import type { RequestState } from '../context.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function createRequestContext(logger: Logger): Middleware {
  return async (ctx, next) => {
    const given = ctx.get('x-request-id');
    const requestId = REQUEST_ID.test(given) ? given : randomUUID();
    const log = logger.child({ req_id: requestId });
    const state = ctx.state as RequestState;
    state.requestId = requestId;
    state.log = log;
    ctx.set('X-Request-Id', requestId);
    const started = performance.now();
    try {
      await next();
    } finally {
      const record = {
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        ms: Math.round((performance.now() - started) * 100) / 100,
      };
      if (ctx.status >= 500) log.error(record, 'request failed');
      else if (ctx.path === '/api/health') log.debug(record, 'request');
      else log.info(record, 'request');
    }
  };
}
