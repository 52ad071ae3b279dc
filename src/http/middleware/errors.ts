/**
 * The one error funnel (STYLE: Errors). Every error thrown below it becomes a JSON body:
 * an {@link AppError} → `{detail}` (or the 422 `{detail: [{loc, msg, type}]}` list) with its
 * headers; an http-errors style error (status + expose, e.g. the router's 405) → `{detail}`;
 * anything else → a logged 500 `{detail: "Internal Server Error"}`. Never a stack trace.
 */
import type { Context, Middleware } from 'koa';
import { isAppError } from '../../errors.js';
import type { Logger } from '../../log.js';
import { requestLog, type RequestState } from '../context.js';

interface HttpLikeError {
  status?: unknown;
  statusCode?: unknown;
  expose?: unknown;
  message?: unknown;
  headers?: unknown;
}

const BODY_HEADERS = [
  'content-type',
  'content-length',
  'content-encoding',
  'content-disposition',
  'etag',
  'last-modified',
];

function render(
  ctx: Context,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  ctx.status = status;
  for (const [name, value] of Object.entries(headers)) ctx.set(name, value);
  ctx.body = body;
}

export function createErrorFunnel(logger: Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const log = requestLog(ctx, logger);
      if (ctx.headerSent || !ctx.writable) {
        log.warn({ err: error }, 'error after the response started');
        return;
      }
      // Body headers of a half-built response must not describe the error body; request id,
      // CORS and security headers stay.
      for (const name of BODY_HEADERS) ctx.remove(name);
      if (isAppError(error)) {
        if (error.logLevel !== undefined) (ctx.state as RequestState).logLevel = error.logLevel;
        else if (error.status >= 500) log.error({ err: error, code: error.code }, error.message);
        const detail =
          error.details !== undefined && error.details.length > 0
            ? error.details
            : error.expose
              ? error.message
              : 'Internal Server Error';
        render(ctx, error.status, { detail }, error.headers);
        return;
      }
      const like = (typeof error === 'object' && error !== null ? error : {}) as HttpLikeError;
      const status = Number(like.status ?? like.statusCode);
      if (Number.isInteger(status) && status >= 400 && status < 500 && like.expose !== false) {
        const headers =
          typeof like.headers === 'object' && like.headers !== null
            ? (like.headers as Record<string, string>)
            : {};
        const detail =
          typeof like.message === 'string' && like.message !== '' ? like.message : 'Bad Request';
        render(ctx, status, { detail }, headers);
        return;
      }
      log.error({ err: error }, 'unhandled error');
      render(ctx, 500, { detail: 'Internal Server Error' }, {});
    }
  };
}
