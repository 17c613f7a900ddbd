/**
 * @module Which calls a key may see and command (docs/SANDBOX.md, Keys and calls): a sandbox key
 * only calls on the sandbox carrier, a live key only calls on every other carrier. A call outside
 * the key's scope answers exactly like a call that does not exist (docs/DECISIONS.md).
 */
import type { CallRecord, CarrierFilter } from '../../../storage/index.js';
import type { Principal } from '../../api-state.js';
import { problems } from '../../problem.js';
import { SANDBOX_CARRIER } from '../../use-cases/call-rules.js';

/** The list filter of a key: the same rule as {@link isInKeyScope}, applied by the repository. */
export function carrierScopeOf(principal: Pick<Principal, 'keyKind'>): CarrierFilter {
  return principal.keyKind === 'sandbox' ? { is: SANDBOX_CARRIER } : { isNot: SANDBOX_CARRIER };
}

/** True when the key may see and command the call: sandbox keys sandbox calls, live keys live calls. */
export function isInKeyScope(principal: Pick<Principal, 'keyKind'>, call: Pick<CallRecord, 'carrier'>): boolean {
  return (principal.keyKind === 'sandbox') === (call.carrier === SANDBOX_CARRIER);
}

/**
 * The call when it exists for the tenant and is in the key's scope; otherwise the same 404 a
 * missing id gets (the engine's `not_found` answers with this very problem).
 */
export function callInScope<C extends Pick<CallRecord, 'carrier'>>(principal: Pick<Principal, 'keyKind'>, call: C | undefined): C {
  if (!call || !isInKeyScope(principal, call)) throw problems.notFound('call');
  return call;
}
