/** @module RFC 3263 §4.3 failover for an outgoing INVITE: try each resolved target in order until one answers. */
import type { SessionDialog } from '../dialogs/session-dialog.js';
import type { SipResponse } from '../messages/sip-message.js';
import { hopUri } from '../resolver/next-hop.js';
import type { InviteOptions, OutboundCall } from './outbound-call.js';
import type { SipTarget } from './transport-port.js';

/** What {@link inviteWithFailover} needs of the UA (a `SipUserAgent`). */
export interface InviteStarter {
  invite(options: InviteOptions): OutboundCall;
  /** With one (RFC 3261 §8.1.2), every attempt would reach the same proxy: it fails over itself. */
  readonly outboundProxy?: string | undefined;
}

/** How the call ended up: accepted through one target, or failed (the last target's failure). */
export type FailoverOutcome =
  | { kind: 'accepted'; call: OutboundCall; session: SessionDialog; response: SipResponse; target: SipTarget }
  | { kind: 'failed'; status: number; reason: string; response: SipResponse | undefined; target: SipTarget | undefined };

/** Options of {@link inviteWithFailover}. */
export interface FailoverOptions {
  /** Called with each attempt before it starts: listen to `progress`, keep the handle to cancel. */
  onAttempt?: (call: OutboundCall, target: SipTarget) => void;
}

type AttemptResult = { ok: true; session: SessionDialog; response: SipResponse } | { ok: false; status: number; reason: string; response: SipResponse | undefined; provisional: boolean };

/**
 * Places the call through `targets` in order (from `resolveNextHop`), each as the `proxy` hop.
 * RFC 3263 §4.3: a transaction timeout or transport error (no response at all) or a 503 moves on
 * to the next target. A 503 after a provisional response does not: the call reached the far end,
 * and trying again elsewhere could ring it twice. Any other final response ends the attempt.
 */
export async function inviteWithFailover(ua: InviteStarter, options: Omit<InviteOptions, 'proxy'>, targets: readonly SipTarget[], o: FailoverOptions = {}): Promise<FailoverOutcome> {
  let last: FailoverOutcome = { kind: 'failed', status: 503, reason: 'No Target', response: undefined, target: undefined };
  for (const target of ua.outboundProxy === undefined ? targets : targets.slice(0, 1)) {
    const call = ua.invite({ ...options, proxy: hopUri(target) });
    o.onAttempt?.(call, target);
    const r = await attempt(call);
    if (r.ok) return { kind: 'accepted', call, session: r.session, response: r.response, target };
    last = { kind: 'failed', status: r.status, reason: r.reason, response: r.response, target };
    const retryable = r.response === undefined || (r.status === 503 && !r.provisional);
    if (!retryable) return last;
  }
  return last;
}

function attempt(call: OutboundCall): Promise<AttemptResult> {
  let provisional = false;
  call.events.on('progress', () => { provisional = true; });
  return new Promise((resolve) => {
    call.events.on('accepted', (session, response) => resolve({ ok: true, session, response }));
    call.events.on('failed', (status, reason, response) => resolve({ ok: false, status, reason, response, provisional }));
  });
}
