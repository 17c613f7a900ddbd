/** @module Stored SIP digest credentials (docs/API.md "Agents, routes, numbers and SIP credentials"): the password goes in, never out. */
import { Type } from '@sinclair/typebox';
import { ApiError } from '../../../common/errors.js';
import type { SipCredentialRecord, SipCredentialRepository } from '../../../storage/index.js';
import { component } from '../../openapi/openapi-document.js';
import { listRoute } from '../../pagination.js';
import { problems } from '../../problem.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { IdParams } from '../agents/agents.schemas.js';

// RFC 3261 25.1: user and realm are tokens/quoted strings; keep them printable and bounded.
const Printable = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[\\x21-\\x7e]+$' });

const SipCredentialSchema = Type.Object(
  { id: Type.String(), username: Type.String(), realm: Type.Union([Type.String(), Type.Null()]), created_at: Type.String({ format: 'date-time' }) },
  component('SipCredential'),
);

const present = (c: SipCredentialRecord) => ({ id: c.id, username: c.username, realm: c.realm, created_at: c.created_at });

export function sipCredentialRoutes(deps: { sipCredentials: Pick<SipCredentialRepository, 'create' | 'get' | 'list' | 'delete'> }): AnyRoute[] {
  return [
    defineRoute({
      method: 'POST', path: '/v1/sip-credentials', operationId: 'createSipCredential', tags: ['sip-credentials'], auth: 'tenant',
      summary: 'Store a SIP digest credential (the password is encrypted and never returned)',
      body: Type.Object({ username: Printable(128), password: Type.String({ minLength: 1, maxLength: 256 }), realm: Type.Optional(Printable(255)) }, { additionalProperties: false }),
      responses: { 201: { description: 'Stored.', schema: SipCredentialSchema } },
      async handle({ body, principal }) {
        const created = await deps.sipCredentials.create(principal.tenantId, { username: body.username, password: body.password, realm: body.realm ?? null });
        return { status: 201, body: present(created) };
      },
    }),
    listRoute({
      path: '/v1/sip-credentials', operationId: 'listSipCredentials', tag: 'sip-credentials', summary: "The tenant's SIP credentials, newest first",
      item: SipCredentialSchema, list: (tenantId, page) => deps.sipCredentials.list(tenantId, page), present,
    }),
    defineRoute({
      method: 'GET', path: '/v1/sip-credentials/{id}', operationId: 'getSipCredential', tags: ['sip-credentials'], auth: 'tenant',
      summary: 'One SIP credential', params: IdParams,
      responses: { 200: { description: 'The credential, without its password.', schema: SipCredentialSchema } },
      errors: { 404: 'No such credential for this tenant (`not_found`).' },
      async handle({ params, principal }) {
        const found = await deps.sipCredentials.get(principal.tenantId, params.id);
        if (!found) throw problems.notFound('SIP credential');
        return { status: 200, body: present(found) };
      },
    }),
    defineRoute({
      method: 'DELETE', path: '/v1/sip-credentials/{id}', operationId: 'deleteSipCredential', tags: ['sip-credentials'], auth: 'tenant',
      summary: 'Delete a SIP credential no agent uses', params: IdParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: { 404: 'No such credential (`not_found`).', 409: 'An agent still refers to it (`in_use`).' },
      async handle({ params, principal }) {
        const outcome = await deps.sipCredentials.delete(principal.tenantId, params.id);
        if (outcome === 'not_found') throw problems.notFound('SIP credential');
        if (outcome === 'in_use') throw new ApiError(409, 'in_use', 'An agent refers to this credential; change the agent first.');
        return { status: 204 };
      },
    }),
  ];
}
