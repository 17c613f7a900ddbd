/** @module Schemas of webhook endpoints, events and delivery attempts (docs/API.md "Call events", docs/EVENTS.md). */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../../common/schema.js';
import { EVENT_TYPES } from '../../../events/event-types.js';
import type { DeliveryAttemptRecord, EventRecord, WebhookEndpointRecord } from '../../../storage/index.js';
import { component } from '../../openapi/openapi-document.js';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);
const DateTime = Type.String({ format: 'date-time' });

export const EventTypeSchema = StringEnum([...EVENT_TYPES], component('EventType'));

const Subscriptions = Type.Array(Type.Union([EventTypeSchema, Type.Literal('*')]), {
  minItems: 1, maxItems: EVENT_TYPES.length + 1, uniqueItems: true,
  description: 'Event types, or `["*"]` (every type but `call.dtmf`, which is delivered only to endpoints that name it). Default `["*"]`.',
});
const EndpointUrl = Type.String({ minLength: 1, maxLength: 2048, description: '`https://` (or `http://` where `events.allow_http` allows); must not point at a non-public address (docs/SECURITY.md "Outbound addresses").' });
const Description = Type.String({ maxLength: 500 });

export const CreateEndpointBody = Type.Object(
  { url: EndpointUrl, events: Type.Optional(Subscriptions), description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const UpdateEndpointBody = Type.Object(
  { url: Type.Optional(EndpointUrl), events: Type.Optional(Subscriptions), description: Type.Optional(Nullable(Description)), disabled: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);

const endpointFields = {
  id: Type.String({ description: '`whe_…`' }),
  url: Type.String(),
  events: Type.Array(Type.String()),
  description: Nullable(Type.String()),
  disabled: Type.Boolean(),
  failing: Type.Object({
    consecutive_failures: Type.Integer({ description: 'Deliveries failed for good in a row (0 after a success).' }),
    failed_deliveries: Type.Integer(),
    flagged_at: Nullable(DateTime),
  }),
  created_at: DateTime,
  updated_at: DateTime,
};
export const WebhookEndpointSchema = Type.Object(endpointFields, component('WebhookEndpoint'));
export const WebhookEndpointWithSecretSchema = Type.Object(
  { ...endpointFields, secret: Type.String({ description: '`whsec_…`: shown only in this answer. Keep it to verify `VGW-Signature` (docs/EVENTS.md).' }) },
  component('WebhookEndpointWithSecret'),
);

export const presentEndpoint = (e: WebhookEndpointRecord) => ({
  id: e.id, url: e.url, events: e.events, description: e.description, disabled: e.disabled,
  failing: { consecutive_failures: e.consecutive_failures, failed_deliveries: e.failed_deliveries, flagged_at: e.flagged_at },
  created_at: e.created_at, updated_at: e.updated_at,
});

export const EventSchema = Type.Object(
  {
    id: Type.String({ description: '`evt_…`: the same on every delivery of the event.' }),
    type: EventTypeSchema,
    created_at: DateTime,
    api_version: Type.Literal('1.0.0'),
    data: Type.Object({
      call: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The Call as `GET /v1/calls/{id}` shows it, without `session` and `transcript`; with `cdr` once ended.' })),
      digit: Type.Optional(Type.String({ pattern: '^[0-9*#A-D]$', description: '`call.dtmf`: the key the remote party pressed.' })),
      conversation_id: Type.Optional(Nullable(Type.String({ description: '`call.agent.connected`: the platform\'s conversation id; null for a WebSocket agent.' }))),
      reason: Type.Optional(Type.String({ description: '`call.agent.failed`: the end reason (`agent_unreachable`, `agent_error`).' })),
      transfer_to: Type.Optional(Type.String({ description: '`call.transfer.*`: the transfer\'s target.' })),
      sources: Type.Optional(Type.Array(Type.String(), { description: '`call.transcript.ready`: the transcripts written (`provider`, `gateway`).' })),
    }, { additionalProperties: true }),
  },
  component('Event'),
);

/** The stored envelope, as delivered. */
export const presentEvent = (e: EventRecord): unknown => JSON.parse(e.payload);

export const DeliveryAttemptSchema = Type.Object(
  {
    id: Type.String({ description: '`dla_…`' }),
    event_id: Type.String(),
    attempt: Type.Integer({ minimum: 1 }),
    ok: Type.Boolean(),
    status: Type.Union([Type.Integer(), Type.Null()], { description: 'The endpoint\'s HTTP status; null when it gave none (refused address, connection error, time-out).' }),
    duration_ms: Type.Integer(),
    error: Nullable(Type.String()),
    response_body: Nullable(Type.String({ description: 'At most 4 KiB of the answer.' })),
    next_attempt_at: Nullable(DateTime),
    created_at: DateTime,
  },
  component('DeliveryAttempt'),
);

export const presentAttempt = (a: DeliveryAttemptRecord) => ({
  id: a.id, event_id: a.event_id, attempt: a.attempt, ok: a.ok, status: a.status, duration_ms: a.duration_ms, error: a.error,
  response_body: a.response_body, next_attempt_at: a.next_attempt_at, created_at: a.created_at,
});

/** `type` filter: one type or a prefix ending in `*` (`call.*`, `call.transfer.*`). */
export const TypeFilter = Type.String({ pattern: '^call(\\.[a-z_]+)*(\\.\\*)?$', maxLength: 64, description: 'One event type, or a prefix form such as `call.*` or `call.transfer.*`.' });
