/**
 * @module GET /v1/caller-ids: the calling numbers the operator verified for the tenant
 * (`vgw caller-id add`), newest first (docs/API.md "Caller IDs").
 */
import { Type } from '@sinclair/typebox';
import type { CallerIdRecord, Store } from '../../../storage/index.js';
import { component } from '../../openapi/openapi-document.js';
import { listRoute } from '../../pagination.js';
import type { AnyRoute } from '../../route.js';

export const CallerIdSchema = Type.Object(
  {
    id: Type.String(),
    phone_number: Type.String({ description: 'E.164', examples: ['+15550100'] }),
    created_at: Type.String({ format: 'date-time', description: 'When the operator verified it.' }),
  },
  component('CallerId'),
);

export const presentCallerId = (c: CallerIdRecord) => ({ id: c.id, phone_number: c.phone_number, created_at: c.created_at });

export function callerIdRoutes(deps: { store: Pick<Store, 'callerIds'> }): AnyRoute[] {
  return [
    listRoute({
      path: '/v1/caller-ids', operationId: 'listCallerIds', tag: 'caller-ids', summary: "The tenant's verified caller IDs, newest first",
      item: CallerIdSchema, list: (tenantId, page) => deps.store.callerIds.list(tenantId, page), present: presentCallerId,
    }),
  ];
}
