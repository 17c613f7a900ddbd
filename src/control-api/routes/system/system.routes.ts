/** @module Operational endpoints: liveness, readiness, Prometheus metrics and the OpenAPI document. */
import { Type } from '@sinclair/typebox';
import type { Registry } from 'prom-client';
import { defineRoute, type AnyRoute } from '../../route.js';

export interface Readiness {
  /** Null when ready; otherwise why not (draining, database unavailable, ...). */
  notReadyReason(): string | null;
}

export interface SystemRouteDeps {
  readiness: Readiness;
  metrics: Registry;
  /** The OpenAPI document, built once from every route (this module's included). */
  openApiDocument: () => Record<string, unknown>;
}

const Status = Type.Object({ status: Type.String(), reason: Type.Optional(Type.String()) });

export function systemRoutes(deps: SystemRouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/healthz', operationId: 'healthz', tags: ['system'], auth: 'none',
      summary: 'Liveness: the process is up and serving',
      responses: { 200: { description: 'Alive.', schema: Status } },
      handle: () => ({ status: 200, body: { status: 'ok' } }),
    }),
    defineRoute({
      method: 'GET', path: '/readyz', operationId: 'readyz', tags: ['system'], auth: 'none',
      summary: 'Readiness: the gateway takes new work (503 while draining)',
      responses: { 200: { description: 'Ready.', schema: Status } },
      errors: { 503: 'Draining or not yet ready (`unavailable`).' },
      handle() {
        const reason = deps.readiness.notReadyReason();
        return reason === null ? { status: 200, body: { status: 'ready' } } : { status: 503, body: { status: 'unavailable', reason } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/metrics', operationId: 'metrics', tags: ['system'], auth: 'none',
      summary: 'Prometheus metrics (expose only to your monitoring network)',
      responses: { 200: { description: 'Prometheus text format.', contentType: 'text/plain; version=0.0.4' } },
      async handle() {
        return { status: 200, body: await deps.metrics.metrics(), headers: { 'Content-Type': deps.metrics.contentType } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/openapi.json', operationId: 'openapi', tags: ['system'], auth: 'none',
      summary: 'The OpenAPI 3.1 document of this API',
      responses: { 200: { description: 'OpenAPI 3.1 document.', schema: Type.Object({}, { additionalProperties: true }) } },
      handle: () => ({ status: 200, body: deps.openApiDocument() }),
    }),
  ];
}
