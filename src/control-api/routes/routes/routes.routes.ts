/** @module Inbound routes (DID → agent): list, read, delete. Routes are created by agent import. */
import { Type } from '@sinclair/typebox';
import type { RouteRepository } from '../../../storage/index.js';
import { DEFAULT_LIMIT, PageQuery, decodeCursor, envelope, pageEnvelope } from '../../pagination.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { presentRoute } from '../agents/agents.routes.js';
import { IdParams, RouteSchema } from '../agents/agents.schemas.js';

export function routeRoutes(deps: { routes: Pick<RouteRepository, 'list' | 'get' | 'delete'> }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/routes', operationId: 'listRoutes', tags: ['routes'], auth: 'tenant',
      summary: "The tenant's inbound routes, newest first",
      query: Type.Object(PageQuery, { additionalProperties: false }),
      responses: { 200: { description: 'A page of routes.', schema: pageEnvelope(RouteSchema) } },
      handle({ query, principal }) {
        const page = deps.routes.list(principal.tenantId, { limit: query.limit ?? DEFAULT_LIMIT, after: decodeCursor(query.cursor) });
        return { status: 200, body: envelope(page.items.map(presentRoute), page.next) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/routes/{id}', operationId: 'getRoute', tags: ['routes'], auth: 'tenant',
      summary: 'One inbound route', params: IdParams,
      responses: { 200: { description: 'The route.', schema: RouteSchema } },
      errors: { 404: 'No such route for this tenant (`not_found`).' },
      handle({ params, principal }) {
        const route = deps.routes.get(principal.tenantId, params.id);
        if (!route) throw problems.notFound('route');
        return { status: 200, body: presentRoute(route) };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/routes/{id}', operationId: 'deleteRoute', tags: ['routes'], auth: 'tenant',
      summary: 'Delete an inbound route', description: 'New INVITEs to the DID get SIP 404 from then on; calls in progress continue.',
      params: IdParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: { 404: 'No such route for this tenant (`not_found`).' },
      handle({ params, principal }) {
        if (!deps.routes.delete(principal.tenantId, params.id)) throw problems.notFound('route');
        return { status: 204 };
      },
    }),
  ];
}
