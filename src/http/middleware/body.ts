import type {} from 'koa-body';
import type { Context, Middleware, Request } from 'koa';
import type { Config } from '../../config/index.js';
import { AppError, ERROR_CODES } from '../../errors.js';

/** The parsed body as routes see it on `ctx.request.body`. */
export type RequestBody = Exclude<Request['body'], undefined>;

/**
 * The raw bytes of each parsed body, for the sanitizer's `input_hash` only (hashing the bytes
 * as received avoids re-encoding the decoded text). Taken, and so dropped, by
 * {@link takeRawBody} before any route runs; the entry dies with the request otherwise.
 */
const rawBodies = new WeakMap<Request, Buffer>();

/** Removes and returns the raw bytes of the request's parsed body, if any. */
export function takeRawBody(request: Request): Buffer | undefined {
  const raw = rawBodies.get(request);
  rawBodies.delete(request);
  return raw;
}

const UTF8 = new TextDecoder('utf-8');

/** Methods whose requests may carry a body we parse. */
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Reads every request body (size-limited) and parses it as JSON whenever either the content
 * type is any JSON spelling (`application/json`, `APPLICATION/JSON; charset=utf-8`,
 * `application/vnd.api+json`, `text/json`, ...) or the body itself looks like JSON (starts
 * with `{`, `[` or `"`), whatever content type — or none — was sent. Sanitization runs on
 * `ctx.request.body` next, so relabelling the content type cannot smuggle a body past it:
 * a body that is not JSON becomes a string and is sanitized as one.
 *
 * Errors: 413 over AGENTIC_MAX_BODY_BYTES (checked against Content-Length first, then while
 * streaming), 400 for malformed JSON, 415 for a non-UTF-8 charset or a Content-Encoding.
 */
export function createBodyParser(config: Config): Middleware {
  const limit = config.maxBodyBytes;
  return async (ctx, next) => {
    if (BODY_METHODS.has(ctx.method)) {
      const bytes = await readBody(ctx, limit);
      const parsed =
        bytes === undefined ? undefined : parseBody(UTF8.decode(bytes), ctx.get('Content-Type'));
      if (parsed !== undefined && bytes !== undefined) {
        ctx.request.body = parsed as RequestBody;
        rawBodies.set(ctx.request, bytes);
      }
    }
    await next();
  };
}

async function readBody(ctx: Context, limit: number): Promise<Buffer | undefined> {
  const req = ctx.req;
  const declared = req.headers['content-length'];
  const chunked = req.headers['transfer-encoding'] !== undefined;
  if (declared === undefined && !chunked) return undefined;
  if (declared !== undefined && Number(declared) > limit) {
    req.resume();
    throw tooLarge(limit);
  }
  const encoding = (req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding !== 'identity' && encoding !== '') {
    req.resume();
    throw new AppError(ERROR_CODES.BAD_REQUEST, 'Content-Encoding is not supported', {
      status: 415,
    });
  }
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(ctx.get('Content-Type'))?.[1];
  if (charset !== undefined && !/^utf-?8$/i.test(charset)) {
    req.resume();
    throw new AppError(ERROR_CODES.BAD_REQUEST, 'Only UTF-8 request bodies are accepted', {
      status: 415,
    });
  }
  const buffer = await collect(req, limit);
  return buffer.length === 0 ? undefined : buffer;
}

/**
 * Collects the body without async iteration: breaking out of `for await` would destroy the
 * socket before the 413 could be written. On overflow the rest is discarded and the
 * response closes the connection.
 */
function collect(req: Context['req'], limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        req.resume();
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(
        new AppError(ERROR_CODES.BAD_REQUEST, 'Request body aborted', {
          status: 400,
          cause: error,
        }),
      );
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

function tooLarge(limit: number): AppError {
  return new AppError(
    ERROR_CODES.PAYLOAD_TOO_LARGE,
    `Request body exceeds the limit of ${limit} bytes`,
    { status: 413, headers: { Connection: 'close' } },
  );
}

/** Any media type whose subtype is `json` or ends in `+json`. */
const JSON_TYPE = /^\s*[a-z0-9.+-]+\/(?:[a-z0-9.-]+\+)?json\s*(?:;|$)/i;

function parseBody(text: string, contentType: string): unknown {
  const trimmed = text.replace(/^\uFEFF/, '').trim();
  const first = trimmed[0];
  const looksJson = first === '{' || first === '[' || first === '"';
  if (!looksJson && !JSON_TYPE.test(contentType)) return text;
  if (trimmed === '') return undefined;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    throw new AppError(ERROR_CODES.BAD_REQUEST, 'Malformed JSON body', { status: 400 });
  }
}
