/**
 * An api instance's view of the deployment's active runs: the claimed run ids (run-claims.ts),
 * kept in memory so `isActive` and `activeRuns` answer synchronously (the event hub, retention
 * and the health check call them per request). Claim and release notices keep it current; it is
 * loaded again from Redis whenever the notice channel (re)connects and every
 * {@link RESYNC_MS}, since a notice sent while the connection was down is lost.
 */
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';

/** How often the view is reloaded from Redis even without a reconnect. */
export const RESYNC_MS = 10_000;

export interface ActiveMirrorOptions {
  /** Reads every claimed run id. */
  load: () => Promise<string[]>;
  logger: Logger;
  /** A run found released by a reload (its notice was lost). */
  onGone: (runId: string) => void;
}

export interface ActiveMirror {
  has(runId: string): boolean;
  list(): string[];
  /** A notice: the run was claimed (`active`) or released. */
  apply(runId: string, active: boolean): void;
  /** Reloads from Redis (after a reconnect). */
  resync(): void;
  close(): void;
}

export function createActiveMirror(options: ActiveMirrorOptions): ActiveMirror {
  const active = new Set<string>();
  /** Notices applied since the reload in flight began: the reload must not undo them. */
  let noticed: Map<string, boolean> | undefined;
  let loading = false;
  let closed = false;
  const timer = setInterval(() => resync(), RESYNC_MS);
  timer.unref();

  function resync(): void {
    if (loading || closed) return;
    loading = true;
    noticed = new Map();
    options.load().then(
      (ids) => {
        loading = false;
        const since = noticed ?? new Map<string, boolean>();
        noticed = undefined;
        if (closed) return;
        const loaded = new Set(ids);
        for (const [runId, isActive] of since) {
          if (isActive) loaded.add(runId);
          else loaded.delete(runId);
        }
        for (const runId of [...active]) {
          if (loaded.has(runId)) continue;
          active.delete(runId);
          options.onGone(runId);
        }
        for (const runId of loaded) active.add(runId);
      },
      (error: unknown) => {
        loading = false;
        noticed = undefined;
        options.logger.warn({ err: errorMessage(error) }, 'active runs not reloaded from Redis');
      },
    );
  }

  return {
    has: (runId) => active.has(runId),
    list: () => [...active],
    apply(runId, isActive) {
      noticed?.set(runId, isActive);
      if (isActive) active.add(runId);
      else active.delete(runId);
    },
    resync,
    close() {
      closed = true;
      clearInterval(timer);
    },
  };
}
