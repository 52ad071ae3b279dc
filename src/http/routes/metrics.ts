/**
 * `GET /metrics` (issue 14): the Prometheus text exposition of the service's registry.
 * Registered only when AGENTIC_METRICS=1; behind the API key unless AGENTIC_METRICS_PUBLIC=1
 * (see middleware/auth.ts).
 */
import type Router from '@koa/router';
import type { Registry } from 'prom-client';

export function registerMetricsRoute(router: Router, registry: Registry): void {
  router.get('/metrics', async (ctx) => {
    const body = await registry.metrics();
    ctx.type = registry.contentType;
    ctx.body = body;
  });
}
