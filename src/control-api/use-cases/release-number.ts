/**
 * @module Releasing a phone number (docs/API.md "Agents, routes, numbers and SIP credentials"): the
 * number and the routes of its DID go in one transaction; calls in progress finish normally.
 */
import { ApiError } from '../../common/errors.js';
import type { TenantId } from '../../common/ids.js';
import type { NumberRecord, Store } from '../../storage/index.js';
import { problems } from '../problem.js';

export interface NumberReleaseDeps {
  store: Pick<Store, 'numbers' | 'transaction'>;
}

/** Releases `phoneNumber` on `carrier`; 404 if the tenant never held it there, 409 if already released. */
export async function releaseNumber(deps: NumberReleaseDeps, tenantId: TenantId, phoneNumber: string, carrier: string): Promise<{ number: NumberRecord; routesRemoved: number }> {
  const result = await deps.store.transaction(async (tx) => {
    const released = await tx.numbers.release(tenantId, phoneNumber, carrier);
    if (released.outcome !== 'released') return released;
    return { ...released, routesRemoved: await tx.routes.deleteForDid(tenantId, phoneNumber, carrier) };
  });
  if (result.outcome === 'released') return { number: result.number, routesRemoved: result.routesRemoved };
  if (result.outcome === 'not_found') throw problems.notFound('number held by this tenant on that carrier');
  throw new ApiError(409, 'number_already_released', 'That number is already released.');
}
