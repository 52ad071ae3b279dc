/**
 * The Koa application (ARCHITECTURE §10). Middleware order: request context (id + access log)
 * → the request's turn slot (middleware/turn-slice.ts) → error funnel → CORS → security headers
 * → rate limit → auth (+ lockout) → body parse (size limit) → sanitization → SPA fallback/404 →
 * routes. With metrics on, the request timer goes first, the rate limit and auth are wrapped to
 * count their refusals, and the sanitizer's findings are counted in front of it. With tracing on, the request span comes first of all.
 */
import Router from '@koa/router';
import type { Tracer } from '@opentelemetry/api';
import Koa from 'koa';
import { join } from 'node:path';
import { packageRoot, packageVersion, type Config } from '../config/index.js';
import type { TurnSlicer } from '../engine/turn-slicer.js';
import type { RunService } from '../engine/types.js';
import type { ToolKit } from '../tools/index.js';
import { createDatasetCatalogue, type DatasetCatalogue } from '../eval/datasets.js';
import { resolveEvalDir } from '../eval/eval-dir.js';
import type { BatchManager } from '../eval/batch.js';
import type { Evaluator } from '../eval/evaluator.js';
import type { EventHub } from '../events/hub.js';
import type { Logger } from '../log.js';
import type { ServiceMetrics } from '../metrics/index.js';
import type { HistoryIndex } from '../store/history.js';
import type { CompiledWorkflow, WorkflowRegistry } from '../workflow/index.js';
import type { AuthGuard } from './middleware/auth.js';
import { createBodyParser } from './middleware/body.js';
import { createCors } from './middleware/cors.js';
import { createErrorFunnel } from './middleware/errors.js';
import { countRefusals, countSanitizerFindings, createHttpMetrics } from './middleware/metrics.js';
import { createRateLimiter, type RateLimiter } from './middleware/rate-limit.js';
import { createRequestContext } from './middleware/request-context.js';
import { createBodySanitizer, createSanitizer } from './middleware/sanitize.js';
import { createHttpTracing } from './middleware/tracing.js';
import { sliceRequests } from './middleware/turn-slice.js';
import { securityHeaders } from './middleware/security-headers.js';
import { registerApprovalRoutes } from './routes/approvals.js';
import { registerCatalogueRoutes, type AgentEntry } from './routes/catalogue.js';
import { registerDatasetRoutes } from './routes/datasets.js';
import { registerDocsRoutes, type PackageResolver } from './routes/docs.js';
import { registerHealthRoutes, type HealthRouteDeps } from './routes/health.js';
import { registerMetricsRoute } from './routes/metrics.js';
import { registerEvalRunRoutes } from './routes/eval-runs.js';
import { registerRunEvaluationRoute } from './routes/run-evaluation.js';
import { registerModelRoutes, type ModelRouteDeps } from './routes/models.js';
import { registerRunRoutes } from './routes/runs.js';
import { registerToolsRoute } from './routes/tools.js';
import { registerExplainRoute } from './routes/explain.js';
import type { BreakerLookup } from '../engine/run-explain.js';
import { createStreamRoute } from './routes/stream.js';
import { registerWorkflowRoutes } from './routes/workflows.js';
import { createSpaFallback } from './spa.js';
import { createMcpEndpoint, type McpEndpoint } from './mcp/mcp-endpoint.js';

export interface AppDeps {
  logger: Logger;
  history: HistoryIndex;
  hub: EventHub;
  /** The API-key guard; the WebSocket hub shares it so upgrades count toward the lockout. */
  guard: AuthGuard;
  /** The global rate limit; the WebSocket hub shares it so upgrades count. @default a new one */
  rateLimit?: RateLimiter;
  registry: WorkflowRegistry;
  /** Reads the agent catalogue (re-read per request). */
  loadAgents: () => Promise<readonly AgentEntry[]>;
  /** The compiled graph machine's JSON definition of a workflow. */
  machineDefinition: (workflow: CompiledWorkflow) => unknown;
  /** @default the package's `schemas/openapi.json` */
  openApiPath?: string;
  /** How `/docs` and `/redoc` find their optional UI packages (tests). @default Node's resolution */
  resolveDocsPackage?: PackageResolver;
  /** Evaluation datasets. @default repository datasets of the eval dir, local ones of the config */
  datasets?: DatasetCatalogue;
  /** Batch evaluations (`/api/eval/runs`). @default none (those routes are not registered) */
  batches?: BatchManager;
  /** Scores evaluated runs. @default none (`evaluation.enabled: true` is a 422) */
  evaluator?: Evaluator;
  /** The LLM probe and chat client. */
  llm: Omit<ModelRouteDeps, 'logger'>;
  /** The runtime's tool kit (`GET /api/tools`). @default none: that endpoint answers 503 */
  tools?: () => Promise<ToolKit>;
  /** SSE keepalive / idle timeout overrides (tests). */
  stream?: { keepaliveMs?: number; idleTimeoutMs?: number };
  /** The service's metrics: `/metrics` and the HTTP metrics are on when given. @default off */
  metrics?: ServiceMetrics;
  /** Traces requests (a span each, parent of the runs they start and of chat's model calls). @default off */
  tracer?: Tracer;
  /** Readiness checks of shared dependencies (`redis`, `queue`). @default none */
  dependencyChecks?: HealthRouteDeps['dependencyChecks'];
  /**
   * Asked before a new run is started: throws (a 503 DependencyError) while a shared dependency
   * the deployment needs is away. @default always admits
   */
  admitRun?: () => void;
  /**
   * What `GET /api/runs/{run_id}/explain` reads besides the runtime: the runtime executing runs
   * in this process when it is not the service's (role `all`), and the LLM circuit breakers.
   * @default the service's runtime, no breakers
   */
  explain?: { local?: Pick<RunService, 'explain' | 'approvals'>; breakers?: BreakerLookup };
  /**
   * Spreads requests arriving together over event-loop turns (the process's slicer, shared with
   * the WebSocket upgrades and run starts). @default none: each request goes on at once
   */
  slicer?: TurnSlicer;
}

/**
 * The app plus its router (tests check every route against the OpenAPI document) and its MCP
 * endpoint (`/mcp`, closed at shutdown).
 */
export type AgenticApp = Koa & { router: Router; mcp: McpEndpoint };

export function createApp(runtime: RunService, config: Config, deps: AppDeps): AgenticApp {
  const { logger, history, hub, registry, metrics } = deps;
  // ctx.ip (unused by the guards, which call clientIp) then means the same entry clientIp trusts.
  const app = new Koa({ proxy: config.trustProxy, maxIpsCount: config.trustedProxyHops });
  // Errors are rendered by the funnel; what still reaches Koa (a broken socket mid-stream) is logged.
  app.on('error', (error: unknown) => logger.warn({ err: error }, 'response error'));

  const router = new Router();
  registerHealthRoutes(router, {
    config,
    hub,
    runtime,
    history,
    version: packageVersion,
    ...(deps.dependencyChecks === undefined ? {} : { dependencyChecks: deps.dependencyChecks }),
  });
  registerCatalogueRoutes(router, { registry, loadAgents: deps.loadAgents });
  registerToolsRoute(router, { tools: deps.tools });
  registerModelRoutes(router, {
    ...deps.llm,
    logger,
    ...(deps.tracer === undefined
      ? {}
      : { tracing: { tracer: deps.tracer, sensitive: config.traceSensitive } }),
  });
  // A workflow saved over the API tells MCP clients their tool list changed (the endpoint is
  // made below; the route only runs once the app serves).
  const notifyingRegistry: WorkflowRegistry = Object.assign(Object.create(registry) as object, {
    save: async (name: string, yamlText: string) => {
      const saved = await registry.save(name, yamlText);
      mcp.toolsChanged();
      return saved;
    },
  }) as WorkflowRegistry;
  registerWorkflowRoutes(router, {
    registry: notifyingRegistry,
    machineDefinition: deps.machineDefinition,
  });
  router.get(
    '/api/runs/:run_id/stream',
    createStreamRoute({
      hub,
      history,
      logger,
      ...(deps.stream ?? {}),
      ...(metrics === undefined ? {} : { metrics }),
    }),
  );
  const runRoutes = {
    runtime,
    history,
    config,
    ...(deps.evaluator !== undefined ? { evaluator: deps.evaluator } : {}),
    ...(deps.admitRun !== undefined ? { admitRun: deps.admitRun } : {}),
  };
  registerRunRoutes(router, runRoutes);
  // Its tools/call starts runs through the same path as POST /api/run (runRoutes).
  const mcp = createMcpEndpoint({
    config,
    registry,
    runtime,
    hub,
    runs: runRoutes,
    sanitizeBody: createBodySanitizer(config, logger),
    logger,
  });
  registerExplainRoute(router, { runtime, history, ...deps.explain });
  registerRunEvaluationRoute(router, { history });
  registerApprovalRoutes(router, { runtime });
  if (deps.batches !== undefined) registerEvalRunRoutes(router, { batches: deps.batches });
  const datasets =
    deps.datasets ??
    createDatasetCatalogue({
      evalDir: resolveEvalDir(config.workflowsDir),
      localDir: config.localDatasetsDir,
      maxFileBytes: config.maxDatasetBytes,
      cacheBytes: config.datasetCacheBytes,
    });
  registerDatasetRoutes(router, { datasets, registry });
  if (metrics !== undefined) registerMetricsRoute(router, metrics.registry);
  registerDocsRoutes(router, {
    openApiPath: deps.openApiPath ?? join(packageRoot, 'schemas', 'openapi.json'),
    ...(deps.resolveDocsPackage === undefined ? {} : { resolvePackage: deps.resolveDocsPackage }),
  });

  // Without metrics the chain is exactly as before: no wrappers, nothing timed.
  const rateLimit = (deps.rateLimit ?? createRateLimiter(config)).middleware;
  if (deps.tracer !== undefined) app.use(createHttpTracing(deps.tracer));
  if (metrics !== undefined) app.use(createHttpMetrics(metrics));
  app.use(createRequestContext(logger));
  if (deps.slicer !== undefined) app.use(sliceRequests(deps.slicer));
  app.use(createErrorFunnel(logger));
  app.use(createCors(config));
  app.use(securityHeaders());
  app.use(metrics === undefined ? rateLimit : countRefusals(metrics, rateLimit, 'rate_limit'));
  app.use(
    metrics === undefined
      ? deps.guard.middleware
      : countRefusals(metrics, deps.guard.middleware, 'lockout'),
  );
  // Before the body parser: the SDK reads and parses MCP messages itself (JSON-RPC errors).
  app.use(mcp.middleware);
  app.use(createBodyParser(config));
  if (metrics !== undefined) app.use(countSanitizerFindings(metrics));
  app.use(createSanitizer(config, logger));
  app.use(createSpaFallback([config.frontendDir, config.consoleDir]));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  return Object.assign(app, { router, mcp });
}
