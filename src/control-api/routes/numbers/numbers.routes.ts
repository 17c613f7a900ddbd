/** @module GET /v1/numbers: the tenant's phone numbers (added by the operator CLI), newest first; and their release. */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../../common/schema.js';
import { E164_PATTERN } from '../../../common/phone-number.js';
import type { NumberRecord } from '../../../storage/index.js';
import { component } from '../../openapi/openapi-document.js';
import { listRoute } from '../../pagination.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { releaseNumber, type NumberReleaseDeps } from '../../use-cases/release-number.js';

export const PhoneNumberSchema = Type.Object(
  {
    id: Type.String(),
    phone_number: Type.String({ description: 'E.164', examples: ['+15550100'] }),
    carrier: Type.String(),
    status: StringEnum(['active', 'released']),
    created_at: Type.String({ format: 'date-time' }),
    released_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  component('PhoneNumber'),
);

const ReleaseSchema = Type.Object({
  phone_number: Type.String(), carrier: Type.String(), status: Type.Literal('released'),
  released_at: Type.String({ format: 'date-time' }), routes_removed: Type.Integer({ description: 'How many routes of the DID were removed.' }),
});

export const presentNumber = (n: NumberRecord) => ({
  id: n.id, phone_number: n.phone_number, carrier: n.carrier, status: n.status, created_at: n.created_at, released_at: n.released_at,
});

export type NumberRouteDeps = NumberReleaseDeps;

export function numberRoutes(deps: NumberRouteDeps): AnyRoute[] {
  const { store } = deps;
  return [
    listRoute({
      path: '/v1/numbers', operationId: 'listNumbers', tag: 'numbers', summary: "The tenant's phone numbers, newest first",
      item: PhoneNumberSchema, list: (tenantId, page) => store.numbers.list(tenantId, page), present: presentNumber,
    }),
    defineRoute({
      method: 'POST', path: '/v1/numbers/release', operationId: 'releaseNumber', tags: ['numbers'], auth: 'tenant',
      summary: 'Release a phone number back to its carrier',
      description: 'Removes the routes of that DID; calls in progress finish normally. New INVITEs to it get SIP 404.',
      body: Type.Object({
        phone_number: Type.String({ pattern: E164_PATTERN, description: 'E.164' }),
        carrier: Type.String({ minLength: 1, maxLength: 63 }),
      }, { additionalProperties: false }),
      responses: { 200: { description: 'Released.', schema: ReleaseSchema } },
      errors: { 404: 'The tenant never held that number on that carrier (`not_found`).', 409: 'Already released (`number_already_released`).' },
      async handle({ body, principal: { tenantId } }) {
        const { number, routesRemoved } = await releaseNumber(deps, tenantId, body.phone_number, body.carrier);
        return { status: 200, body: { phone_number: number.phone_number, carrier: number.carrier, status: 'released', released_at: number.released_at, routes_removed: routesRemoved } };
      },
    }),
  ];
}
