/**
 * Starts the service: recovers interrupted run files, builds the history index, the event hub,
 * the security guard and the app, listens, and attaches the WebSocket hub. `close()` is the
 * graceful shutdown: stop accepting, let running runs finish within the grace period, then
 * cancel them (persisted as failed), drain the run-file write queue, close WebSocket/SSE
 * clients and the server. Requests arriving meanwhile get 503 "shutting down" (shutdown-gate.ts).
 */
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stat } from 'node:fs/promises';
import type { Config } from '../config/index.js';
import { createRuntime } from '../engine/runtime.js';
import type { AdapterName, Runtime } from '../engine/types.js';
import { listAgents } from '../agents/agent-listing.js';
import { loadAgentsModule } from '../agents/agents-module.js';
import { loadAgentCatalogue } from '../agents/catalogue.js';
import { customAgentNames } from '../agents/custom-agents.js';
import { shippedAgentCatalogue } from '../config/index.js';
import { createEventHub, type EventHub } from '../events/hub.js';
import { createLlmService, type LlmService } from '../llm/llm-service.js';
import { createNoLlmClient } from '../llm/no-llm.js';
import type { Logger } from '../log.js';
import { createHistoryIndex, type HistoryIndex } from '../store/history.js';
import { recoverInterruptedRuns } from '../store/run-files.js';
import { removeStaleTempFiles } from '../store/stale-temp-files.js';
import type { FileWriter } from '../store/write-thread.js';
import { createWorkflowRegistry } from '../workflow/index.js';
import { loadAdapters } from './adapters.js';
import { createApp, type AgenticApp, type AppDeps } from './app.js';
import { createAuth } from './middleware/auth.js';
import { createShutdownGate } from './shutdown-gate.js';
import { attachWebSocketHub } from './ws-hub.js';

export interface ServerOptions {
  config: Config;
  logger: Logger;
  /** An existing runtime (embedding, tests); created from `config` when absent. */
  runtime?: Runtime;
  /** Overrides for app dependencies (tests: SSE timings). */
  stream?: AppDeps['stream'];
  /** The run-file writer of the runtime created from `config` (tests inject failures). */
  writeFile?: FileWriter;
  /** The LLM layer (providers, router, probe). @default built from `config.llm` */
  llm?: LlmService;
}

export interface RunningServer {
  server: Server;
  app: AgenticApp;
  runtime: Runtime;
  history: HistoryIndex;
  hub: EventHub;
  llm: LlmService;
  /** `http://host:port` actually bound (port 0 resolved). */
  url: string;
  port: number;
  /** Graceful shutdown (idempotent). */
  close(): Promise<void>;
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { config, logger } = options;
  const adapters = await loadAdapters(config.defaultAdapter as AdapterName);
  await mkdir(config.runsDir, { recursive: true });
  const stale = await removeStaleTempFiles(config.runsDir);
  if (stale.length > 0) logger.warn({ count: stale.length }, 'removed stale temp files');
  await recoverInterruptedRuns(config.runsDir);
  const agents =
    config.agentsModule === undefined ? {} : await loadAgentsModule(config.agentsModule);
  await warnIfMissingWorkflowsDir(config, logger);
  const llm = options.llm ?? createLlmService(config.llm);

  const runtime =
    options.runtime ??
    createRuntime({
      workflowsDir: config.workflowsDir,
      runsDir: config.runsDir,
      noLlm: config.noLlm,
      llm: llm.router,
      maxConcurrency: config.maxConcurrency,
      defaultAdapter: config.defaultAdapter as AdapterName,
      logger,
      writeConcurrency: config.writeConcurrency,
      writeQueueMax: config.writeQueueMax,
      writeRetryMaxMs: config.writeRetryMaxMs,
      ...(options.writeFile !== undefined ? { writeFile: options.writeFile } : {}),
      agents,
      ...(config.externalAgentsDir !== undefined
        ? { externalAgentsDir: config.externalAgentsDir }
        : {}),
    });
  const history = createHistoryIndex({ runsDir: config.runsDir, logger });
  // Subscribe before loading so a run that starts meanwhile is not missed (upserts are idempotent).
  const offRecord = runtime.onRecord((record, filename) => history.upsert(record, filename));
  await history.load();
  const hub = createEventHub({
    runtime,
    history,
    finishedBuffers: config.finishedBuffers,
    logger,
  });
  const guard = createAuth(config, { logger });
  const registry = createWorkflowRegistry({
    dir: config.workflowsDir,
    readOnlyReason: config.workflowsReadOnlyReason,
    customAgents: customAgentNames(agents),
  });
  const agentSources = {
    files: [shippedAgentCatalogue()],
    dirs: config.externalAgentsDir === undefined ? [] : [config.externalAgentsDir],
  };
  const app = createApp(runtime, config, {
    logger,
    history,
    hub,
    guard,
    registry,
    loadAgents: async () => listAgents(await loadAgentCatalogue(agentSources), Object.keys(agents)),
    machineDefinition: adapters.machineDefinition,
    llm: {
      probe: (signal) => llm.probe(signal),
      client: config.noLlm ? createNoLlmClient() : llm.router,
    },
    ...(options.stream !== undefined ? { stream: options.stream } : {}),
  });

  const handle = app.callback();
  const gate = createShutdownGate((req, res) => void handle(req, res), logger);
  const server = createServer(gate.handle);
  const wsHub = attachWebSocketHub(server, { hub, history, guard, config, logger });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  logger.info(
    {
      url,
      adapter: config.defaultAdapter,
      runsDir: config.runsDir,
      workflowsDir: config.workflowsDir,
      workflowsSource: config.workflowsSource,
    },
    'agentic-runtime listening',
  );
  // The start-up probe only informs the log; it never delays or fails the start.
  const startupProbe = new AbortController();
  llm.probe(startupProbe.signal).then(
    (probe) =>
      logger.info(
        {
          available: probe.available_providers,
          unavailable: probe.unavailable_reasons,
          tierDefaults: probe.tier_defaults,
        },
        'LLM providers probed',
      ),
    (error: unknown) => logger.warn({ err: error }, 'LLM provider probe failed'),
  );

  let closing: Promise<void> | undefined;
  async function shutdown(): Promise<void> {
    gate.close();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const active = runtime.activeRuns().length;
    if (active > 0)
      logger.info({ active, graceSeconds: config.shutdownGraceSeconds }, 'waiting for runs');
    await runtime.shutdown({ graceMs: config.shutdownGraceSeconds * 1000 });
    await wsHub.close();
    hub.close();
    startupProbe.abort();
    await llm.close();
    offRecord();
    server.closeAllConnections();
    await closed;
    if (gate.refused > 0)
      logger.info({ refused: gate.refused }, 'requests refused while shutting down');
    logger.info('agentic-runtime stopped');
  }

  return {
    server,
    app,
    runtime,
    history,
    hub,
    llm,
    url,
    port: address.port,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };
}

/** A missing workflows directory is not fatal (workflows can be sent inline) but is surprising. */
async function warnIfMissingWorkflowsDir(config: Config, logger: Logger): Promise<void> {
  const info = await stat(config.workflowsDir).catch(() => undefined);
  if (info?.isDirectory() === true) return;
  logger.warn(
    { workflowsDir: config.workflowsDir },
    'workflows directory not found: no named workflows until it exists (set AGENTIC_WORKFLOWS_DIR or create ./workflows)',
  );
}
