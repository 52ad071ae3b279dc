/**
 * A worker's own HTTP endpoint (`AGENTIC_WORKER_PORT`, on `AGENTIC_HOST`): what an orchestrator
 * and Prometheus need of a process that serves no API. `GET /metrics` (with AGENTIC_METRICS=1)
 * is the worker's registry: the runs, steps, retries, model and tool calls it executes, its
 * breaker states and its process defaults, under the same names and labels as the service's.
 * `GET /api/health` (liveness, public) and `GET /api/health/ready` (readiness: the runs
 * directory, run writes, the workflows directory, `redis` and `queue`) answer as the service's
 * do, so one probe configuration fits both. The service's key rule holds: `/metrics` and
 * readiness need AGENTIC_API_KEY when one is set (`/metrics` not with AGENTIC_METRICS_PUBLIC=1),
 * failures count towards the deployment's shared lockout. Every other path is a 404.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { packageVersion } from '../config/index.js';
import { NotFoundError } from '../errors.js';
import { createSharedLockout } from '../scale/shared-lockout.js';
import type { WorkerEndpoint, WorkerEndpointParts } from '../scale/worker-service.js';
import { createAuth } from './middleware/auth.js';
import { createErrorFunnel } from './middleware/errors.js';
import { countRefusals, createHttpMetrics } from './middleware/metrics.js';
import { createRequestContext } from './middleware/request-context.js';
import { securityHeaders } from './middleware/security-headers.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerMetricsRoute } from './routes/metrics.js';

/** Starts the endpoint of `parts.config.workerPort` (rejects when the port cannot be bound). */
export async function startWorkerEndpoint(parts: WorkerEndpointParts): Promise<WorkerEndpoint> {
  const { config, logger, metrics, scale } = parts;
  const port = config.workerPort;
  if (port === undefined) throw new Error('startWorkerEndpoint needs AGENTIC_WORKER_PORT');
  const app = new Koa({ proxy: config.trustProxy, maxIpsCount: config.trustedProxyHops });
  app.on('error', (error: unknown) => logger.warn({ err: error }, 'response error'));
  const router = new Router();
  registerHealthRoutes(router, {
    config,
    runtime: parts.runtime,
    version: packageVersion,
    dependencyChecks: parts.dependencyChecks,
  });
  if (metrics !== undefined) registerMetricsRoute(router, metrics.registry);
  const guard = createAuth(config, {
    logger,
    lockout: createSharedLockout({
      redis: scale.redis,
      keys: scale.keys,
      settings: config.authLockout,
      logger,
    }),
  });
  if (metrics !== undefined) app.use(createHttpMetrics(metrics));
  app.use(createRequestContext(logger));
  app.use(createErrorFunnel(logger));
  app.use(securityHeaders());
  app.use(
    metrics === undefined ? guard.middleware : countRefusals(metrics, guard.middleware, 'lockout'),
  );
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: true }));
  app.use(() => {
    throw new NotFoundError(
      'Not Found: a worker serves /metrics, /api/health and /api/health/ready',
    );
  });

  const handle = app.callback();
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
