/** @module GET /v1/numbers: the tenant's phone numbers (added by the operator CLI), newest first. */
import { Type } from '@sinclair/typebox';
import { StringEnum } from '../../../common/schema.js';
import type { NumberRecord, NumberRepository } from '../../../storage/index.js';
import { component } from '../../openapi/openapi-document.js';
import { DEFAULT_LIMIT, PageQuery, decodeCursor, envelope, pageEnvelope } from '../../pagination.js';
import { defineRoute, type AnyRoute } from '../../route.js';

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

export const presentNumber = (n: NumberRecord) => ({
  id: n.id, phone_number: n.phone_number, carrier: n.carrier, status: n.status, created_at: n.created_at, released_at: n.released_at,
});

export function numberRoutes(deps: { numbers: Pick<NumberRepository, 'list'> }): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/numbers', operationId: 'listNumbers', tags: ['numbers'], auth: 'tenant',
      summary: "The tenant's phone numbers, newest first",
      query: Type.Object(PageQuery, { additionalProperties: false }),
      responses: { 200: { description: 'A page of numbers.', schema: pageEnvelope(PhoneNumberSchema) } },
      handle({ principal, query }) {
        const page = deps.numbers.list(principal.tenantId, { limit: query.limit ?? DEFAULT_LIMIT, after: decodeCursor(query.cursor) });
        return { status: 200, body: envelope(page.items.map(presentNumber), page.next) };
      },
    }),
  ];
}
