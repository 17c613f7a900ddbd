/**
 * @module An INVITE through a carrier: failover over the carrier's resolved hops (RFC 3263 4.3),
 * and the carrier's 3xx redirects followed through the same hops (RFC 3261 8.1.3.4). Outbound
 * calls and transfer legs place their INVITEs this way.
 */
import { inviteWithFailover, redirectTargets, type FailoverOptions, type FailoverOutcome, type InviteOptions, type InviteStarter, type SipTarget } from '../../sip/index.js';
import type { Logger } from '../../../common/logger.js';

/** Retries per INVITE to targets learnt from 3xx responses. */
const MAX_REDIRECTS = 3;

/** What {@link inviteThroughCarrier} needs besides the INVITE. */
export interface CarrierInviteHooks extends FailoverOptions {
  /** True once the caller gave up (hang-up, ring time-out): a redirect is then not followed. */
  stopped(): boolean;
  log: Logger;
}

/**
 * Places `options` through `targets`. A 3xx adds its Contacts to the target set (RFC 3261
 * 8.1.3.4: best q first, each URI once, so two redirects pointing at each other end), and the
 * next target is tried whenever an attempt fails with a response, until the set is exhausted or
 * {@link MAX_REDIRECTS} retries were made. Each retry changes only the Request-URI (same From, To
 * and offer) and still goes to the carrier's own next hop: the carrier routes it, and a redirect
 * never sends our request or digest credentials to a host the operator did not configure. An
 * attempt with no response at all (the carrier unreachable) ends it. Resolves with the last outcome.
 */
export async function inviteThroughCarrier(ua: InviteStarter, options: Omit<InviteOptions, 'proxy' | 'to'>, targets: readonly SipTarget[], hooks: CarrierInviteHooks): Promise<FailoverOutcome> {
  const to = options.target;
  const seen = new Set([to]);
  const pending: string[] = [];
  let target = to;
  for (let retries = 0; ; retries++) {
    const outcome = await inviteWithFailover(ua, { ...options, target, to }, targets, hooks);
    if (outcome.kind === 'failed' && !outcome.response && !hooks.stopped()) {
      // No response at all: the CDR says unreachable; the log keeps why (timeout, refused, a TLS certificate).
      hooks.log.warn({ status: outcome.status, reason: outcome.reason }, 'carrier unreachable');
    }
    if (outcome.kind !== 'failed' || !outcome.response || hooks.stopped()) return outcome;
    const redirected = redirectTargets(outcome.response).filter((uri) => !seen.has(uri));
    for (const uri of redirected) seen.add(uri);
    pending.unshift(...redirected);
    const next = pending.shift();
    if (next === undefined || retries >= MAX_REDIRECTS) return outcome;
    hooks.log.info({ status: outcome.status, next_target: next }, redirected.length > 0 ? 'carrier redirected the call' : 'redirect target failed, trying the next');
    target = next;
  }
}
