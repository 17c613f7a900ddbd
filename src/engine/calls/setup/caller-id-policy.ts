/**
 * @module Which calling numbers a tenant may present on a carrier (docs/API.md "Caller IDs"): the
 * carrier's `caller_id_policy` decides, from the numbers the tenant holds there and the caller IDs
 * the operator verified for it. Carriers reject or flag a From the caller does not own, and a shared
 * trunk must not let one tenant present another's number.
 */
import type { TenantId } from '../../../common/ids.js';
import type { CallerIdDirectory } from '../ports.js';
import type { CarrierProfile } from './carrier-profile.js';

/**
 * `owned`: a number the tenant holds on that carrier, or one verified for it. `verified`: only a
 * verified caller ID. `any`: no check (the operator's explicit choice).
 */
export type CallerIdPolicy = 'owned' | 'verified' | 'any';

/**
 * The sandbox's calling number that is always refused, so a tenant can see its handling of
 * `caller_id_not_allowed` without a live carrier (docs/SANDBOX.md "Caller IDs"). It is in the
 * fictional 1-500-555-0xxx block, like the reserved called numbers.
 */
export const SANDBOX_REFUSED_CALLER_ID = '+15005550001';

export async function isCallerIdAllowed(
  carrier: Pick<CarrierProfile, 'name' | 'sandbox' | 'callerIdPolicy'>, tenantId: TenantId, from: string, directory: CallerIdDirectory,
): Promise<boolean> {
  // The sandbox far end is inside the gateway: no one else ever sees the calling number.
  if (carrier.sandbox) return from !== SANDBOX_REFUSED_CALLER_ID;
  switch (carrier.callerIdPolicy ?? 'owned') {
    case 'any': return true;
    case 'verified': return directory.isVerified(tenantId, from);
    case 'owned': return (await directory.holds(tenantId, from, carrier.name)) || directory.isVerified(tenantId, from);
  }
}
