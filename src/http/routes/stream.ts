import type { Middleware } from 'koa';
import { ERROR_CODES, NotFoundError } from '../../errors.js';
import { attachFeed } from '../../events/feed.js';
import type { EventHub, RunHistoryLookup } from '../../events/hub.js';
import type { Logger } from '../../log.js';
import type { ServiceMetrics } from '../../metrics/index.js';
import { RUN_ID } from '../../store/history.js';
import { DEFAULT_SSE_MAX_BUFFERED_BYTES, SseWriter } from '../sse.js';
import { safeDecode } from '../safe-decode.js';

/** Spec: keepalive frames "about every 15 seconds". */
export const DEFAULT_KEEPALIVE_MS = 15_000;
/** Spec: the stream ends "after a 30-second keepalive timeout" without events. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

export interface StreamRouteOptions {
  hub: EventHub;
  /** Run files, for runs the hub holds no buffer for. @default the hub's own lookup */
  history?: RunHistoryLookup;
  logger: Logger;
  /** Interval between keepalive frames, in ms. @default 15000 */
  keepaliveMs?: number;
  /** The stream closes after this many ms without a run event. @default 30000 */
  idleTimeoutMs?: number;
  /** Queued bytes above which a client that does not read is dropped. @default 1 MiB */
  maxBufferedBytes?: number;
  /** Counts connected and dropped SSE clients. @default none */
  metrics?: Pick<ServiceMetrics, 'streamClients' | 'droppedClients'>;
}

const STREAM_PATH = /^\/api\/runs\/([^/]+)\/stream$/;

/**
 * `GET /api/runs/{run_id}/stream` (spec endpoint 18): `text/event-stream` with one
 * `data: <event json>` frame per wire event. Buffered events are replayed first, then live ones;
 * the stream closes after the run's last event (`workflow_end`, or `evaluation_complete` when
 * evaluation was requested), after `idleTimeoutMs` without events, at once after the replay
 * for a finished run, and when the client goes away. Unknown run → 404 `{detail}`.
 *
 * Mount it on the router (`router.get('/api/runs/:run_id/stream', route)`) or as plain
 * middleware (it matches the path itself and passes other requests on).
 */
export function createStreamRoute(options: StreamRouteOptions): Middleware {
  const { hub, logger } = options;
  const keepaliveMs = options.keepaliveMs ?? DEFAULT_KEEPALIVE_MS;
  const idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const maxBufferedBytes = options.maxBufferedBytes ?? DEFAULT_SSE_MAX_BUFFERED_BYTES;

  return async (ctx, next) => {
    const params = (ctx as { params?: Record<string, string | undefined> }).params;
    let runId = params?.run_id;
    if (runId === undefined) {
      const match = STREAM_PATH.exec(ctx.path);
      if (ctx.method !== 'GET' || match?.[1] === undefined) {
        await next();
        return;
      }
      runId = safeDecode(match[1]);
    }
    if (runId === undefined || !RUN_ID.test(runId)) {
      throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    }

    const { req, res } = ctx;
    const controller = new AbortController();
    const writer = new SseWriter(res, { maxBufferedBytes });
    const { metrics } = options;
    metrics?.streamClients.inc({ transport: 'sse' });
    let counted = metrics !== undefined;
    let keepalive: NodeJS.Timeout | undefined;
    let idle: NodeJS.Timeout | undefined;
    let resolveDone: () => void = () => undefined;
    const done = new Promise<void>((resolve) => {
      resolveDone = resolve;
    });
    const finish = (): void => {
      if (counted) {
        counted = false;
        metrics?.streamClients.dec({ transport: 'sse' });
      }
      clearInterval(keepalive);
      clearTimeout(idle);
      if (!controller.signal.aborted) controller.abort();
      writer.end();
      resolveDone();
    };
    const onClientGone = (): void => {
      if (writer.dropped) {
        logger.info({ runId }, 'SSE client dropped: not reading');
        metrics?.droppedClients.inc({ transport: 'sse' });
      }
      finish();
    };
    res.once('close', onClientGone);
    req.once('error', onClientGone);

    const found = await attachFeed(
      hub,
      runId,
      {
        open: () => {
          ctx.respond = false;
          writer.open();
          keepalive = setInterval(() => {
            if (!writer.keepalive()) finish();
          }, keepaliveMs);
          idle = setTimeout(() => {
            logger.debug({ runId }, 'SSE stream idle timeout');
            finish();
          }, idleTimeoutMs);
        },
        event: (event) => {
          idle?.refresh();
          if (!writer.send(event)) finish();
        },
        end: () => finish(),
      },
      { signal: controller.signal, ...(options.history ? { history: options.history } : {}) },
    );
    if (!found) {
      res.off('close', onClientGone);
      req.off('error', onClientGone);
      throw new NotFoundError('Run not found', ERROR_CODES.RUN_NOT_FOUND);
    }
    await done;
  };
}
