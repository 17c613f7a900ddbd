/**
 * @module The tenant's event log and redelivery (docs/API.md "Call events", docs/EVENTS.md "Event
 * log"): newest first, filtered by type (or a `call.*` prefix) and call, paged like every list.
 */
import { Type } from '@sinclair/typebox';
import type { EventDeliveryRepository, EventRepository } from '../../../storage/index.js';
import { decodeCursor, DEFAULT_LIMIT, envelope, pageEnvelope, PageQuery } from '../../pagination.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { IdParams } from '../agents/agents.schemas.js';
import { EventSchema, presentEvent, TypeFilter } from './events.schemas.js';

export interface EventLogDeps {
  events: Pick<EventRepository, 'list' | 'get'>;
  deliveries: Pick<EventDeliveryRepository, 'redeliver'>;
}

export function eventLogRoutes(deps: EventLogDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/events', operationId: 'listEvents', tags: ['events'], auth: 'tenant',
      summary: "The tenant's events, newest first (kept `events.retention_days`, 30 by default)",
      query: Type.Object({ ...PageQuery, type: Type.Optional(TypeFilter), call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
      responses: { 200: { description: 'A page of events, as delivered.', schema: pageEnvelope(EventSchema) } },
      async handle({ query, principal }) {
        const page = await deps.events.list(principal.tenantId, { type: query.type, callId: query.call_id }, { limit: query.limit ?? DEFAULT_LIMIT, after: decodeCursor(query.cursor) });
        return { status: 200, body: envelope(page.items.map(presentEvent), page.next) };
      },
    }),
    defineRoute({
      method: 'POST', path: '/v1/events/{id}/redeliver', operationId: 'redeliverEvent', tags: ['events'], auth: 'tenant',
      summary: 'Deliver an event again to every enabled endpoint that subscribes to it', params: IdParams,
      body: Type.Object({}, { additionalProperties: false }), bodyOptional: true,
      responses: { 202: { description: 'Scheduled: the deliveries are due now, with a new 24-hour retry window.', schema: Type.Object({ event_id: Type.String(), deliveries: Type.Integer({ minimum: 0 }) }) } },
      errors: { 404: 'No such event for this tenant (`not_found`).' },
      async handle({ params, principal }) {
        if (!(await deps.events.get(principal.tenantId, params.id))) throw problems.notFound('event');
        const deliveries = await deps.deliveries.redeliver(principal.tenantId, params.id);
        return { status: 202, body: { event_id: params.id, deliveries } };
      },
    }),
  ];
}
