/**
 * @module Webhook endpoints (docs/API.md "Call events", docs/EVENTS.md "Endpoints"): created with a
 * URL the outbound-address policy accepts, listed and read without their secret, which is shown
 * only when created and when rotated; another tenant's endpoint is 404 on every route.
 */
import { Type } from '@sinclair/typebox';
import type { Clock } from '../../../common/clock.js';
import { resolveChecked, type OutboundAddressPolicy } from '../../../common/outbound-policy.js';
import { newEndpointSecret } from '../../../events/signature.js';
import type { EventDeliveryRepository, WebhookEndpointRepository } from '../../../storage/index.js';
import { decodeCursor, DEFAULT_LIMIT, envelope, listRoute, pageEnvelope, PageQuery } from '../../pagination.js';
import type { HostResolver } from '../../ports.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { resolveWithin } from '../../use-cases/call-rules.js';
import { IdParams } from '../agents/agents.schemas.js';
import {
  CreateEndpointBody, DeliveryAttemptSchema, presentAttempt, presentEndpoint, UpdateEndpointBody, WebhookEndpointSchema, WebhookEndpointWithSecretSchema,
} from './events.schemas.js';

export interface WebhookEndpointDeps {
  endpoints: WebhookEndpointRepository;
  deliveries: Pick<EventDeliveryRepository, 'attempts'>;
  /** The policy of agent URLs (docs/SECURITY.md "Outbound addresses"). */
  policy: OutboundAddressPolicy;
  resolveHost: HostResolver;
  /** `events.allow_http`. */
  allowHttp: boolean;
  clock: Clock;
}

const refused = (message: string): Error => problems.validation([{ path: '/url', message }], 'The endpoint URL is not allowed.');

/**
 * The URL's scheme, and its host by the outbound-address policy: a non-public address, or a name
 * any of whose addresses is one, is refused. A name that does not resolve yet is kept, as for
 * agent URLs: each delivery checks again and fails while it does not.
 */
async function checkEndpointUrl(value: string, deps: WebhookEndpointDeps): Promise<void> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refused('is not a valid URL');
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && deps.allowHttp)) throw refused(deps.allowHttp ? 'must be an https:// or http:// URL' : 'must be an https:// URL');
  if (url.hostname === '') throw refused('has no host');
  if (url.username !== '' || url.password !== '') throw refused('must not carry credentials');
  const checked = await resolveChecked(url.hostname, deps.policy, (host) => resolveWithin(deps.resolveHost, host, deps.clock));
  if (!checked.ok && checked.reason === 'refused') {
    throw refused(`must not point at a loopback, private, link-local or otherwise non-public address (${checked.detail})`);
  }
}

export function webhookEndpointRoutes(deps: WebhookEndpointDeps): AnyRoute[] {
  const found = async (tenantId: Parameters<WebhookEndpointRepository['get']>[0], id: string) => {
    const endpoint = await deps.endpoints.get(tenantId, id);
    if (!endpoint) throw problems.notFound('webhook endpoint');
    return endpoint;
  };
  return [
    defineRoute({
      method: 'POST', path: '/v1/webhook-endpoints', operationId: 'createWebhookEndpoint', tags: ['events'], auth: 'tenant',
      summary: 'Add a webhook endpoint; its signing secret is in this answer only',
      body: CreateEndpointBody,
      responses: { 201: { description: 'Created, with its secret.', schema: WebhookEndpointWithSecretSchema } },
      async handle({ body, principal }) {
        await checkEndpointUrl(body.url, deps);
        const secret = newEndpointSecret();
        const created = await deps.endpoints.create(principal.tenantId, { url: body.url, events: body.events ?? ['*'], description: body.description ?? null, secret });
        return { status: 201, body: { ...presentEndpoint(created), secret } };
      },
    }),
    listRoute({
      path: '/v1/webhook-endpoints', operationId: 'listWebhookEndpoints', tag: 'events', summary: "The tenant's webhook endpoints, newest first",
      item: WebhookEndpointSchema, list: (tenantId, page) => deps.endpoints.list(tenantId, page), present: presentEndpoint,
    }),
    // The sub-resources first: in the OpenAPI document (and the isolation tests that walk it) they come before DELETE.
    defineRoute({
      method: 'POST', path: '/v1/webhook-endpoints/{id}/rotate-secret', operationId: 'rotateWebhookEndpointSecret', tags: ['events'], auth: 'tenant',
      summary: 'A new signing secret; the old one keeps signing beside it for 24 hours', params: IdParams,
      body: Type.Object({}, { additionalProperties: false }), bodyOptional: true,
      responses: { 200: { description: 'The endpoint with its new secret (shown only here).', schema: WebhookEndpointWithSecretSchema } },
      errors: { 404: 'No such endpoint for this tenant (`not_found`).' },
      async handle({ params, principal }) {
        const secret = newEndpointSecret();
        const rotated = await deps.endpoints.rotateSecret(principal.tenantId, params.id, secret);
        if (!rotated) throw problems.notFound('webhook endpoint');
        return { status: 200, body: { ...presentEndpoint(rotated), secret } };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/webhook-endpoints/{id}/deliveries', operationId: 'listWebhookEndpointDeliveries', tags: ['events'], auth: 'tenant',
      summary: 'Each delivery attempt to the endpoint, newest first', params: IdParams,
      query: Type.Object(PageQuery, { additionalProperties: false }),
      responses: { 200: { description: 'A page of attempts.', schema: pageEnvelope(DeliveryAttemptSchema) } },
      errors: { 404: 'No such endpoint for this tenant (`not_found`).' },
      async handle({ params, query, principal }) {
        await found(principal.tenantId, params.id);
        const page = await deps.deliveries.attempts(principal.tenantId, params.id, { limit: query.limit ?? DEFAULT_LIMIT, after: decodeCursor(query.cursor) });
        return { status: 200, body: envelope(page.items.map(presentAttempt), page.next) };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/webhook-endpoints/{id}', operationId: 'getWebhookEndpoint', tags: ['events'], auth: 'tenant',
      summary: 'One webhook endpoint (never its secret)', params: IdParams,
      responses: { 200: { description: 'The endpoint.', schema: WebhookEndpointSchema } },
      errors: { 404: 'No such endpoint for this tenant (`not_found`).' },
      async handle({ params, principal }) {
        return { status: 200, body: presentEndpoint(await found(principal.tenantId, params.id)) };
      },
    }),
    defineRoute({
      method: 'PATCH', path: '/v1/webhook-endpoints/{id}', operationId: 'updateWebhookEndpoint', tags: ['events'], auth: 'tenant',
      summary: 'Change an endpoint\'s URL, events, description or `disabled`', params: IdParams, body: UpdateEndpointBody,
      responses: { 200: { description: 'The endpoint as changed.', schema: WebhookEndpointSchema } },
      errors: { 404: 'No such endpoint for this tenant (`not_found`).' },
      async handle({ params, body, principal }) {
        await found(principal.tenantId, params.id);
        if (body.url !== undefined) await checkEndpointUrl(body.url, deps);
        const updated = await deps.endpoints.update(principal.tenantId, params.id, body);
        if (!updated) throw problems.notFound('webhook endpoint');
        return { status: 200, body: presentEndpoint(updated) };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/webhook-endpoints/{id}', operationId: 'deleteWebhookEndpoint', tags: ['events'], auth: 'tenant',
      summary: 'Delete an endpoint and its pending deliveries', params: IdParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: { 404: 'No such endpoint for this tenant (`not_found`).' },
      async handle({ params, principal }) {
        if (!(await deps.endpoints.delete(principal.tenantId, params.id))) throw problems.notFound('webhook endpoint');
        return { status: 204 };
      },
    }),
  ];
}
