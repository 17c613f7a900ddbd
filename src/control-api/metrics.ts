/** @module Prometheus metrics of the control API (prom-client), on a registry owned by the app. */
import type { Middleware } from 'koa';
import type { Registry } from 'prom-client';
import { Counter, Histogram } from 'prom-client';
import type { ApiState } from './api-state.js';

export interface ApiMetrics {
  registry: Registry;
  middleware: Middleware<ApiState>;
}

export function createApiMetrics(registry: Registry): ApiMetrics {
  const requests = new Counter({
    name: 'vgw_http_requests_total', help: 'HTTP API requests by route template, method and status.',
    labelNames: ['method', 'route', 'status'] as const, registers: [registry],
  });
  const duration = new Histogram({
    name: 'vgw_http_request_duration_seconds', help: 'HTTP API request duration.',
    labelNames: ['method', 'route'] as const, buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1], registers: [registry],
  });
  const middleware: Middleware<ApiState> = async (ctx, next) => {
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      // The template, never the raw path: ids in labels would grow the series without bound.
      const route = ctx.state.routeTemplate ?? 'unmatched';
      requests.inc({ method: ctx.method, route, status: String(ctx.status) });
      duration.observe({ method: ctx.method, route }, Number(process.hrtime.bigint() - start) / 1e9);
    }
  };
  return { registry, middleware };
}
