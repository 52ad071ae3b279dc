/** The collector stand-in of the HTTP benchmarks' tracing runs. */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TraceSink {
  /** Base URL for OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  /** OTLP exports received so far. */
  exports: number;
  /** Bytes received so far. */
  bytes: number;
  close(): Promise<void>;
}

/**
 * An OTLP/HTTP endpoint on 127.0.0.1 that reads every export, counts it and answers an empty
 * ExportTraceServiceResponse.
 */
export async function startTraceSink(): Promise<TraceSink> {
  const stats = { exports: 0, bytes: 0 };
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (stats.bytes += chunk.length));
    req.on('end', () => {
      stats.exports++;
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(stats, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
