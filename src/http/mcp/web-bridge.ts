/**
 * Node's `req`/`res` as the web-standard `Request`/`Response` the MCP SDK's `createMcpHandler`
 * serves (its `fetch` face). The SDK's own Node adapter is a separate package
 * (`@modelcontextprotocol/node`); these two functions are all of it this service needs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/**
 * A `Request` reading the body from `req` as it streams (the SDK bounds its size), whose
 * signal aborts when the client goes away before the answer is complete: the SDK then aborts
 * the exchange and the handler's `ctx.mcpReq.signal` (a closed per-request stream is the
 * 2026-07-28 protocol's cancellation).
 */
export function toWebRequest(
  req: IncomingMessage,
  res: ServerResponse,
  url: string,
): { request: Request; abort: AbortController } {
  const abort = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) abort.abort(new Error('the client closed the connection'));
  });
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
  const request = new Request(url, {
    method: req.method ?? 'GET',
    headers,
    signal: abort.signal,
    ...(hasBody
      ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' as const }
      : {}),
  });
  return { request, abort };
}

/**
 * Writes `response` to `res`, streaming its body (an SSE stream stays open until the SDK ends
 * it or the client goes away). Headers already set on `res` (security, CORS, rate limit) stay.
 */
export async function writeWebResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  // Each SSE frame must reach the client when it is written, not when a buffer fills.
  res.flushHeaders();
  const reader: ReadableStreamDefaultReader<Uint8Array> = response.body.getReader();
  const stop = (): void => {
    reader.cancel().catch(() => undefined);
  };
  res.once('close', stop);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || res.destroyed) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const go = (): void => {
            res.off('drain', go);
            res.off('close', go);
            resolve();
          };
          res.once('drain', go);
          res.once('close', go);
        });
      }
    }
  } catch {
    // The stream failed under us (the client left, the exchange was aborted): end what was sent.
  } finally {
    res.off('close', stop);
    if (!res.destroyed) res.end();
  }
}
