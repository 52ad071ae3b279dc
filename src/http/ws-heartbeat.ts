import type { WebSocket } from 'ws';

/** Interval between WebSocket pings (`AGENTIC_WS_PING_INTERVAL_SECONDS`), in ms. */
export const DEFAULT_WS_PING_INTERVAL_MS = 30_000;

export interface Heartbeat {
  /** Counts a new client as alive until the next round. */
  track(ws: WebSocket): void;
  /** Stops pinging (shutdown). Idempotent. */
  stop(): void;
}

/**
 * WebSocket ping/pong keepalive (RFC 6455 §5.5.2): every `intervalMs`, each client that answered
 * the previous ping gets a new one; a client that did not is terminated. Sockets stay open after
 * their run ends (the client decides when to leave), so a client that vanished without a close
 * (a sleeping laptop, a dropped NAT entry) would otherwise be noticed only when a send fails,
 * and a finished run sends nothing. Browsers and `ws` answer pings on their own. The timer is
 * unref'd: it never keeps the process alive.
 */
export function startHeartbeat(clients: ReadonlySet<WebSocket>, intervalMs: number): Heartbeat {
  const answered = new WeakSet<WebSocket>();
  const timer = setInterval(() => {
    for (const ws of clients) {
      if (ws.readyState !== ws.OPEN) continue;
      if (!answered.has(ws)) {
        ws.terminate();
        continue;
      }
      answered.delete(ws);
      ws.ping();
    }
  }, intervalMs);
  timer.unref();
  // One listener for every client (`this` is the client that answered), not a closure per client.
  function onPong(this: WebSocket): void {
    answered.add(this);
  }
  return {
    track(ws) {
      answered.add(ws);
      ws.on('pong', onPong);
    },
    stop() {
      clearInterval(timer);
    },
  };
}
