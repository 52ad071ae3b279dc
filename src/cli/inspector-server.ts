/**
 * The inspector of `agentic run --inspect`: a loopback HTTP + WebSocket server that serves the
 * run's XState inspection events to whoever connects.
 *
 * The events are made by `@statelyai/inspect` (`createInspector`: its conversion of XState's
 * inspection events into the Stately inspector's, with actor definitions and snapshots) and
 * written to every connected WebSocket as JSON, the messages `createWebSocketReceiver` and the
 * Stately inspector read. `GET /` serves a page that opens https://stately.ai/inspect in a frame
 * and feeds it from the WebSocket.
 *
 * Not `createInspectorServer` from `@statelyai/inspect/server`: that one listens on every
 * interface (run inputs and outputs are in the snapshots), cannot report a free port it was given
 * as 0, starts a browser with `exec`, and its `stop()` does not wait. The source here is in the
 * same process, so no socket back to ourselves either (its 200-event start-up buffer drops the rest).
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInspector } from '@statelyai/inspect';
import type { InspectionEvent, Observer } from 'xstate';
import { WebSocket, WebSocketServer } from 'ws';

/** The Stately inspector the page frames. */
const STATELY_INSPECTOR = 'https://stately.ai/inspect';

export interface InspectorServer {
  /** The page to open in a browser: the Stately inspector fed by this run. */
  readonly page: string;
  /** The WebSocket address receivers connect to (`createWebSocketReceiver({ server })`). */
  readonly url: string;
  /** For `createRuntime({ inspect })`. */
  readonly inspect: Observer<InspectionEvent>;
  /** Resolves when the first receiver (page or WebSocket client) is connected. */
  receiverConnected(): Promise<void>;
  /** Sends what is still queued, closes every connection and the server. */
  close(): Promise<void>;
}

export interface InspectorServerOptions {
  /** TCP port; 0 picks a free one. @default 0 */
  port?: number;
  /** Address to listen on. @default '127.0.0.1' */
  host?: string;
}

export async function startInspectorServer(
  options: InspectorServerOptions = {},
): Promise<InspectorServer> {
  const host = options.host ?? '127.0.0.1';
  const http: Server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(bridgePage());
  });
  const wss = new WebSocketServer({ server: http, maxPayload: 1024 });
  const receivers = new Set<WebSocket>();
  let connected!: () => void;
  const firstReceiver = new Promise<void>((resolve) => (connected = resolve));
  wss.on('connection', (socket) => {
    receivers.add(socket);
    socket.on('close', () => receivers.delete(socket));
    // Receivers only listen; a client that talks gets nothing more than one that does not.
    socket.on('message', () => undefined);
    socket.on('error', () => socket.terminate());
    connected();
  });
  http.listen(options.port ?? 0, host);
  await once(http, 'listening');
  const { port } = http.address() as AddressInfo;
  const hostPart = host.includes(':') ? `[${host}]` : host;

  const inspector = createInspector({
    send(event) {
      let text: string;
      try {
        text = JSON.stringify(event);
      } catch {
        return;
      }
      for (const socket of receivers) if (socket.readyState === WebSocket.OPEN) socket.send(text);
    },
  });

  return {
    page: `http://${hostPart}:${port}/`,
    url: `ws://${hostPart}:${port}`,
    inspect: inspector.inspect,
    receiverConnected: () => firstReceiver,
    async close() {
      // The inspector converts events on a zero-delay timer; one more timer runs after them.
      await new Promise((resolve) => setTimeout(resolve, 0));
      for (const socket of receivers) socket.close(1001, 'run ended');
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** The page served at `/`: the Stately inspector in a frame, fed from this server's WebSocket. */
function bridgePage(): string {
  return `<!doctype html>
<html><head><meta charset="utf-8"><title>agentic run: inspector</title>
<style>html,body,iframe{margin:0;width:100%;height:100%;border:0}</style></head>
<body><iframe id="inspector" src="${STATELY_INSPECTOR}"></iframe>
<script>
const frame = document.getElementById('inspector');
const queued = [];
let ready = false;
window.addEventListener('message', (e) => {
  if (e.data && e.data.type === '@statelyai.connected') {
    ready = true;
    for (const event of queued.splice(0)) frame.contentWindow.postMessage(event, '*');
  }
});
const socket = new WebSocket('ws://' + location.host);
socket.onmessage = (e) => {
  const event = JSON.parse(e.data);
  if (ready) frame.contentWindow.postMessage(event, '*');
  else queued.push(event);
};
</script></body></html>
`;
}
