/**
 * @module The carriers step of the engine's start: each configured carrier as the call layer's
 * profile (plus the built-in sandbox carrier), and the OPTIONS keep-alives toward their targets.
 */
import type { Logger } from '../common/logger.js';
import { SANDBOX_CARRIER, sdesExposure, type CarrierConfig } from '../config/carriers.js';
import type { CarrierProfile } from '../engine/calls/index.js';
import { hopUri, resolveNextHop, type OptionsPinger, type ServerLocator, type SipUserAgent } from '../engine/sip/index.js';
import type { CallMetrics } from './call-metrics.js';

function carrierProfile(c: CarrierConfig): CarrierProfile {
  return {
    name: c.name, outboundUri: c.outbound?.uri ?? null, credentials: c.outbound?.auth, numberFormat: c.outbound?.from_format ?? 'e164',
    countryCode: c.outbound?.country_code, codecs: c.codecs, maxConcurrentCalls: c.max_concurrent_calls, transfer: c.transfer, sandbox: false,
    didFrom: c.inbound?.did_from ?? 'request_uri', mediaEncryption: c.media_encryption, mediaNetworks: c.media_networks,
    trustAssertedIdentity: c.calls.trust_asserted_identity, carryHeaders: c.calls.carry_headers, callerIdPolicy: c.caller_id_policy, dtmf: c.dtmf,
  };
}

/**
 * The carriers by name, the sandbox's among them (its far end is on loopback, media toward it is
 * advertised at `sandboxMediaAddress`). A carrier whose SRTP keys would cross the network readable
 * is logged once here.
 */
export function carrierProfiles(o: {
  carriers: readonly CarrierConfig[]; sipTls: boolean; sandboxUri: string; sandboxMediaAddress: string; logger: Logger;
}): Map<string, CarrierProfile> {
  const carriers = new Map<string, CarrierProfile>(o.carriers.map((c) => [c.name, carrierProfile(c)]));
  for (const c of o.carriers) {
    const exposure = sdesExposure(c, o.sipTls);
    if (exposure) o.logger.warn({ carrier: c.name, media_encryption: c.media_encryption }, `SRTP keys of this carrier cross the network readable: ${exposure}`);
  }
  carriers.set(SANDBOX_CARRIER, {
    name: SANDBOX_CARRIER, outboundUri: o.sandboxUri, numberFormat: 'e164', codecs: ['PCMU', 'PCMA', 'telephone-event'],
    maxConcurrentCalls: 1000, transfer: 'bridge', sandbox: true, didFrom: 'request_uri', mediaEncryption: 'disabled',
    mediaAddress: o.sandboxMediaAddress,
  });
  return carriers;
}

/**
 * OPTIONS keep-alives to each carrier's outbound target (`options_ping_s`, 0 = off), resolved once
 * with RFC 3263; every change of state is logged and exported as `vgw_carrier_up`.
 */
export async function startCarrierPings(ua: SipUserAgent, locator: ServerLocator, carriers: readonly CarrierConfig[], metrics: CallMetrics, logger: Logger): Promise<OptionsPinger[]> {
  const pingers: OptionsPinger[] = [];
  for (const carrier of carriers) {
    const uri = carrier.outbound?.uri;
    if (!uri || carrier.options_ping_s === 0) continue;
    const first = (await resolveNextHop(locator, uri).catch(() => []))[0];
    if (!first) {
      logger.warn({ carrier: carrier.name, uri }, 'carrier target does not resolve; not pinging it');
      metrics.carrierState(carrier.name, false, 503);
      continue;
    }
    pingers.push(ua.pingTargets({
      targets: [{ id: carrier.name, uri: hopUri(first) }], intervalMs: carrier.options_ping_s * 1000,
      onTargetState: (id, state, status) => {
        metrics.carrierState(id, state === 'up', status);
        logger[state === 'up' ? 'info' : 'warn']({ carrier: id, status }, `carrier ${state}`);
      },
    }));
  }
  return pingers;
}
