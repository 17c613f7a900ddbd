/**
 * @module The transfer target's leg (docs/API.md "Calls" and "Transfers asked by the agent"): a
 * number is dialled over the call's carrier, as any outbound call; a SIP address an agent's policy
 * allows is dialled directly, after every address it resolves to passed the outbound-address
 * policy (docs/SECURITY.md "Outbound addresses"), each INVITE sent to a checked numeric hop.
 */
import { CODECS, createOffer, isSdpRejection, processAnswer, type NegotiatedAudio, type RtpSession } from '../../media/index.js';
import { inviteWithFailover, resolveNextHop, type FailoverOutcome, type OutboundCall, type SessionDialog, type SipTarget } from '../../sip/index.js';
import type { Clock } from '../../../common/clock.js';
import type { OutboundAddressPolicy } from '../../../common/outbound-policy.js';
import type { Call } from '../call.js';
import { sendBye } from './bye.js';
import { inviteThroughCarrier } from '../setup/carrier-invite.js';
import { carrierCodecs, formatNumber, preferCodec, requestUriFor, type CarrierProfile } from '../setup/carrier-profile.js';
import { newSdpSessionId, type LegMedia } from '../setup/leg-media.js';
import type { SipDialling } from '../setup/sip-dialling.js';
import { carrierLegCapabilities, legCapabilities } from './remote-leg.js';

/** What dialling a transfer target uses. */
export interface TransferDialDeps {
  clock: Clock;
  dialling: SipDialling;
  media: LegMedia;
  /** The outbound-address policy of SIP-address targets (the `calls.allow_private_sip_targets` family). */
  sipTargets: OutboundAddressPolicy;
}

/** How the call hears of the attempt in flight (to cancel it) and whether it still wants the target. */
export interface TransferDialHooks {
  onAttempt(attempt: OutboundCall): void;
  stopped(): boolean;
}

export type TransferDialOutcome =
  | { kind: 'answered'; dialog: SessionDialog; rtp: RtpSession; audio: NegotiatedAudio }
  | { kind: 'failed'; status: number; reason: string }
  /** The call no longer wants the target (it ended meanwhile): whatever was opened is released. */
  | { kind: 'stopped' };

/** A target the agent named as a SIP address rather than a number (transfer-policy.ts). */
export const isSipAddress = (to: string): boolean => /^sips?:/i.test(to);

/** Dials `to` (a `+E164` number or a SIP URI) for the call whose remote leg talks `current`. */
export async function dialTransferTarget(
  deps: TransferDialDeps, call: Call, carrier: CarrierProfile, current: NegotiatedAudio, to: string, hooks: TransferDialHooks,
): Promise<TransferDialOutcome> {
  const plan = isSipAddress(to) ? await planSipAddress(deps, call, current, to) : await planCarrier(deps, call, carrier, current, to);
  if ('failed' in plan) return { kind: 'failed', ...plan.failed };
  const { rtp } = plan;
  if (hooks.stopped()) {
    rtp.close();
    return { kind: 'stopped' };
  }
  let attempt: OutboundCall | null = null;
  const ring = deps.clock.setTimeout(() => attempt?.cancel(), deps.dialling.ringTimeoutMs);
  const outcome = await plan.invite({
    stopped: () => hooks.stopped(),
    onAttempt: (a) => { attempt = a; call.traceSip(a.callId, 'transfer_target'); hooks.onAttempt(a); },
  }).finally(() => ring.cancel());
  if (outcome.kind === 'failed') {
    call.log.info({ status: outcome.status, reason: outcome.reason }, 'transfer target did not answer');
    rtp.close();
    return hooks.stopped() ? { kind: 'stopped' } : { kind: 'failed', status: outcome.status, reason: outcome.reason };
  }
  const audio = processAnswer(outcome.session.remoteAnswer?.toString('utf8') ?? '', plan.caps);
  if (hooks.stopped() || isSdpRejection(audio)) {
    void sendBye(outcome.session, call.log, 'transfer target answered too late or unusably');
    rtp.close();
    return hooks.stopped() ? { kind: 'stopped' } : { kind: 'failed', status: 488, reason: 'Not Acceptable Here' };
  }
  return { kind: 'answered', dialog: outcome.session, rtp, audio };
}

type Plan =
  | { failed: { status: number; reason: string } }
  | { rtp: RtpSession; caps: ReturnType<typeof legCapabilities>; invite(o: { onAttempt: (a: OutboundCall) => void; stopped: () => boolean }): Promise<FailoverOutcome> };

/** Who the target sees calling: the remote party's number (the callee of an outbound call, the caller of an inbound one is the DID's). */
function callerIdOf(call: Call): string {
  const record = call.snapshot();
  return record.direction === 'outbound' ? record.from_number : record.to_number;
}

/** A number over the call's carrier: its outbound URI, codecs, media encryption and credentials; its 3xx followed. */
async function planCarrier(deps: TransferDialDeps, call: Call, carrier: CarrierProfile, current: NegotiatedAudio, to: string): Promise<Plan> {
  const uri = carrier.outboundUri;
  const rtp = uri ? await deps.media.open(carrier) : null;
  if (!uri || !rtp) {
    call.log.warn({ reason: uri ? 'no media ports' : 'carrier takes no outbound calls' }, 'transfer not possible');
    return { failed: { status: 503, reason: 'Service Unavailable' } };
  }
  const caps = carrierLegCapabilities(deps.media.address, carrier, rtp, preferCodec(current.codec, carrierCodecs(carrier)));
  const targets = await resolveNextHop(deps.dialling.locator, uri);
  const options = {
    target: requestUriFor(uri, formatNumber(to, carrier)),
    from: `sip:${formatNumber(callerIdOf(call), carrier)}@${deps.dialling.sipHost}`,
    sdp: Buffer.from(createOffer(caps)),
    credentials: carrier.credentials,
  };
  return {
    rtp, caps,
    invite: ({ onAttempt, stopped }) => inviteThroughCarrier(deps.dialling.ua, options, targets, { onAttempt, stopped, log: call.log }),
  };
}

/**
 * A SIP address (a PBX the tenant's policy names): resolved (RFC 3263) and every hop checked
 * before anything is sent; plain RTP in G.711 (the remote party's codec first), no credentials, no redirects followed (a 3xx could
 * name an address the policy was never asked about).
 */
async function planSipAddress(deps: TransferDialDeps, call: Call, current: NegotiatedAudio, uri: string): Promise<Plan> {
  const targets: SipTarget[] = await resolveNextHop(deps.dialling.locator, uri).catch(() => []);
  if (targets.length === 0) {
    call.log.warn({ uri }, 'transfer target does not resolve');
    return { failed: { status: 404, reason: 'Not Found' } };
  }
  const refused = targets.find((hop) => !deps.sipTargets.permits(hop.address));
  if (refused) {
    call.log.warn({ uri, address: refused.address }, 'transfer target refused by the outbound-address policy');
    return { failed: { status: 403, reason: 'Forbidden' } };
  }
  const rtp = await deps.media.open();
  if (!rtp) return { failed: { status: 503, reason: 'Service Unavailable' } };
  // The remote party's codec first, so the bridge relays without transcoding.
  const caps = legCapabilities(deps.media.address, rtp, preferCodec(current.codec, [CODECS.PCMU, CODECS.PCMA, CODECS.TELEPHONE_EVENT]), newSdpSessionId());
  const options = {
    target: uri, to: uri,
    from: `sip:${callerIdOf(call)}@${deps.dialling.sipHost}`,
    sdp: Buffer.from(createOffer(caps)),
  };
  return { rtp, caps, invite: ({ onAttempt }) => inviteWithFailover(deps.dialling.ua, options, targets, { onAttempt }) };
}
