/**
 * @module An INVITE through a carrier: failover over the carrier's resolved hops (RFC 3263 4.3),
 * and the carrier's 3xx redirects followed through the same hops (RFC 3261 8.1.3.4). Outbound
 * calls and transfer legs place their INVITEs this way.
 */
import { inviteWithFailover, redirectTargets, type FailoverOptions, type FailoverOutcome, type InviteOptions, type InviteStarter, type SipTarget } from '../sip/index.js';
import type { Logger } from '../../common/logger.js';

/** 3xx responses followed per INVITE before the last one ends it (a loop of redirects ends too). */
export const MAX_REDIRECTS = 3;

/** What {@link inviteThroughCarrier} needs besides the INVITE. */
export interface CarrierInviteHooks extends FailoverOptions {
  /** True once the caller gave up (hang-up, ring time-out): a redirect is then not followed. */
  stopped(): boolean;
  log: Logger;
}

/**
 * Places `options` through `targets`. A 3xx is retried to its best Contact with only the
 * Request-URI changed (same From, To and offer), still to the carrier's own next hop: the carrier
 * routes it, and a redirect never sends our request or digest credentials to a host the operator
 * did not configure. Resolves with the last outcome.
 */
export async function inviteThroughCarrier(ua: InviteStarter, options: Omit<InviteOptions, 'proxy' | 'to'>, targets: readonly SipTarget[], hooks: CarrierInviteHooks): Promise<FailoverOutcome> {
  const to = options.target;
  let target = to;
  for (let redirects = 0; ; redirects++) {
    const outcome = await inviteWithFailover(ua, { ...options, target, to }, targets, hooks);
    if (outcome.kind !== 'failed' || !outcome.response || hooks.stopped() || redirects >= MAX_REDIRECTS) return outcome;
    const next = redirectTargets(outcome.response)[0];
    if (next === undefined) return outcome;
    hooks.log.info({ status: outcome.status, redirect_to: next }, 'carrier redirected the call');
    target = next;
  }
}
