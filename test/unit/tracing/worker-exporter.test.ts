import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { ExportResultCode, TraceState, type ExportResult } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { MAX_FAILED_STARTS, WorkerSpanExporter } from '../../../src/tracing/worker-exporter.js';

const require = createRequire(import.meta.url);

/** An OTLP/HTTP endpoint keeping each request's raw body. */
async function startRawReceiver(): Promise<{
  url: string;
  bodies: Buffer[];
  close: () => Promise<void>;
}> {
  const bodies: Buffer[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks));
      res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1/traces`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Finished spans covering what a span can carry: a remote parent with a trace state, kinds,
 * links, events, error status, array attributes, two scopes and a second resource.
 */
function sampleSpans(): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = (attributes: Record<string, string>) =>
    new BasicTracerProvider({
      resource: resourceFromAttributes(attributes),
      spanProcessors: [new SimpleSpanProcessor(memory)],
    });
  const main = provider({ 'service.name': 'agentic-runtime', 'service.version': '9.9.9' });
  const other = provider({ 'service.name': 'other' });
  const remote = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: '0af7651916cd43dd8448eb211c80319c',
    spanId: 'b7ad6b7169203331',
    traceFlags: 1,
    isRemote: true,
    traceState: new TraceState('vendor=value,other=x'),
  });
  const http = main.getTracer('agentic-runtime').startSpan(
    'POST /api/run',
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.route': '/api/run', 'http.response.status_code': 200 },
    },
    remote,
  );
  const run = main.getTracer('agentic-runtime', '1.0.0').startSpan(
    'run demo',
    {
      attributes: { 'agentic.run_id': 'r-1', tags: ['a', 'b'], ratio: 0.5, ok: true },
      links: [{ context: http.spanContext(), attributes: { why: 'started by' } }],
    },
    trace.setSpan(ROOT_CONTEXT, http),
  );
  run.addEvent('iteration', { iteration: 2 });
  run.setStatus({ code: SpanStatusCode.ERROR, message: 'boom: step failed' });
  run.end();
  http.end();
  other.getTracer('x').startSpan('lonely', { kind: SpanKind.CLIENT }).end();
  return memory.getFinishedSpans();
}

/** Runs `test` with an exporter to a fresh raw receiver, and shuts both down after it. */
async function withCollector(
  test: (exporter: WorkerSpanExporter, bodies: Buffer[]) => Promise<void>,
): Promise<void> {
  const receiver = await startRawReceiver();
  const exporter = new WorkerSpanExporter({
    protocol: 'http/protobuf',
    url: receiver.url,
    timeoutMillis: 3000,
  });
  try {
    await test(exporter, receiver.bodies);
  } finally {
    await exporter.shutdown();
    await receiver.close();
  }
}

function exportVia(exporter: WorkerSpanExporter, spans: ReadableSpan[]): Promise<ExportResult> {
  return new Promise((resolve) => exporter.export(spans, resolve));
}

describe('WorkerSpanExporter (OTLP export in a worker thread)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'agentic-otlp-worker-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('sends the collector the bytes the OTLP serializer makes of the same spans on the main thread', () =>
    withCollector(async (exporter, bodies) => {
      const spans = sampleSpans();
      const result = await exportVia(exporter, spans);
      expect(result.code, String(result.error)).to.equal(ExportResultCode.SUCCESS);
      expect(bodies).to.have.length(1);
      const expected = ProtobufTraceSerializer.serializeRequest(spans);
      expect(expected).to.not.equal(undefined);
      expect(Buffer.compare(bodies[0]!, Buffer.from(expected!))).to.equal(0);
    }));

  it('fails a batch that cannot be copied to the worker, and exports the next one', () =>
    withCollector(async (exporter, bodies) => {
      const [span] = sampleSpans();
      // An exporter can be handed spans from anywhere; a function does not survive the copy.
      const broken = Object.assign(Object.create(span!) as object, {
        attributes: { bad: () => 1 },
      });
      const refused = await exportVia(exporter, [broken as unknown as ReadableSpan]);
      expect(refused.code).to.equal(ExportResultCode.FAILED);
      expect(refused.error?.name).to.equal('DataCloneError');
      const next = await exportVia(exporter, sampleSpans());
      expect(next.code, String(next.error)).to.equal(ExportResultCode.SUCCESS);
      expect(bodies).to.have.length(1);
    }));

  it('fails an export when the collector is down, and every export after shutdown', async () => {
    const receiver = await startRawReceiver();
    const url = receiver.url;
    await receiver.close();
    const exporter = new WorkerSpanExporter({ protocol: 'http/protobuf', url, timeoutMillis: 500 });
    try {
      const down = await exportVia(exporter, sampleSpans());
      expect(down.code).to.equal(ExportResultCode.FAILED);
      expect(down.error).to.be.instanceOf(Error);
    } finally {
      await exporter.shutdown();
    }
    const later = await exportVia(exporter, sampleSpans());
    expect(later.code).to.equal(ExportResultCode.FAILED);
    expect(later.error?.message).to.match(/shut down/);
  });

  it('fails the exports a dying worker held, starts a new one for the next, and stops after repeated deaths', async () => {
    const starts = join(dir, 'starts');
    const dying = join(dir, 'dying-worker.mjs');
    await writeFile(
      dying,
      `import { appendFileSync } from 'node:fs';\nimport { parentPort } from 'node:worker_threads';\nappendFileSync(${JSON.stringify(starts)}, 'x');\nparentPort.on('message', () => process.exit(7));\n`,
    );
    const exporter = new WorkerSpanExporter({
      protocol: 'http/protobuf',
      url: 'http://127.0.0.1:9/v1/traces',
      timeoutMillis: 500,
      workerPath: dying,
    });
    for (let death = 1; death <= MAX_FAILED_STARTS; death++) {
      const result = await exportVia(exporter, sampleSpans());
      expect(result.code).to.equal(ExportResultCode.FAILED);
      expect(result.error?.message).to.match(/exited with code 7/);
    }
    const given = await exportVia(exporter, sampleSpans());
    expect(given.code).to.equal(ExportResultCode.FAILED);
    expect(given.error?.message).to.match(/keeps dying: .*code 7/);
    expect(await readFile(starts, 'utf8')).to.equal('x'.repeat(MAX_FAILED_STARTS));
    await exporter.shutdown();
  });

  it('does not keep an idle process alive once its exports are answered', async function () {
    this.timeout(30_000);
    const receiver = await startRawReceiver();
    try {
      const script = join(dir, 'exits.mts');
      await writeFile(
        script,
        [
          // Absolute paths: the script lives in a temp dir, outside the package's node_modules.
          `import { BasicTracerProvider, BatchSpanProcessor } from ${JSON.stringify(pathToFileURL(require.resolve('@opentelemetry/sdk-trace-base')).href)};`,
          `import { WorkerSpanExporter } from ${JSON.stringify(join(process.cwd(), 'src/tracing/worker-exporter.ts'))};`,
          `const exporter = new WorkerSpanExporter({ protocol: 'http/protobuf', url: ${JSON.stringify(receiver.url)}, timeoutMillis: 3000 });`,
          `const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter)] });`,
          `provider.getTracer('t').startSpan('one').end();`,
          `await provider.forceFlush();`,
          `console.log('flushed');`,
        ].join('\n'),
      );
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        cwd: process.cwd(),
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      child.stdout.on('data', (data: Buffer) => (out += data.toString()));
      const code = await new Promise<number | null>((resolve, reject) => {
        const timer = setTimeout(() => {
          child.kill();
          reject(new Error('the process was kept alive'));
        }, 20_000);
        child.on('exit', (exitCode) => {
          clearTimeout(timer);
          resolve(exitCode);
        });
      });
      expect(code).to.equal(0);
      expect(out.trim()).to.equal('flushed');
      expect(receiver.bodies).to.have.length(1);
    } finally {
      await receiver.close();
    }
  });
});
