/**
 * @module The SIP step of the engine's start: the transport layer (UDP, TCP and TLS listeners
 * with their connection caps and flood limits), the user agent above it with its source checks and
 * inbound digest challenges, and the containment of listener errors.
 */
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { isAddressOrCidr, type CarrierConfig } from '../config/carriers.js';
import type { Config } from '../config/schema.js';
import type { SipTlsMaterial } from '../config/sip-tls.js';
import { ConfigError } from '../config/load-config.js';
import { DigestServer, reportListenerErrors, SipUserAgent, TransportLayer, type InboundAuth, type SipRequest, type SipSource, type SipTraceTap } from '../engine/sip/index.js';
import type { CallMetrics } from './call-metrics.js';
import { matchingAddress, sourceMatches } from './carrier-sources.js';
import { descriptorBudget, softNofileLimit } from './descriptor-budget.js';

/** The carrier an out-of-dialog request belongs to (`inbound.sources`, docs/CONFIGURATION.md), by its matching address. */
export type CarrierMatcher = (source: SipSource, request: SipRequest) => CarrierConfig | undefined;

export interface SipStack {
  transport: TransportLayer;
  ua: SipUserAgent;
  carrierConfigFor: CarrierMatcher;
  /** Where SIP listens; `tlsPort` is null without `sip.tls`. */
  listening(): { host: string; udpPort: number; tcpPort: number; tlsPort: number | null };
  /** Stops the user agent and the transport. */
  stop(): Promise<void>;
  /** Ends the containment of listener errors: the very last step of a stop. */
  restoreListenerErrors(): void;
}

export interface SipStackOptions {
  config: Readonly<Config>;
  carriers: readonly CarrierConfig[];
  /** The TLS listener's certificate (`sip.tls`), or null without one. */
  tls: SipTlsMaterial | null;
  clock: Clock;
  logger: Logger;
  metrics: CallMetrics;
  /** Told every SIP message (docs/API.md "SIP trace of a call"); none when absent. */
  trace?: SipTraceTap;
  /** Whether the engine is draining: OPTIONS to it get 503 so the SIP edge's probes mark it inactive (docs/CLUSTER.md "Drain"). */
  isDraining?: () => boolean;
}

/** Digest challenges (RFC 3261 22.4) for INVITEs from carriers configured with `inbound.auth`. */
function inboundDigest(carriers: readonly CarrierConfig[], carrierFor: CarrierMatcher, clock: Clock): (source: SipSource, request: SipRequest) => InboundAuth | undefined {
  const servers = new Map(carriers.flatMap((c) => (c.inbound?.auth ? [[c.name, new DigestServer({ realm: c.inbound.auth.realm ?? c.name, clock })] as const] : [])));
  return (source, request) => {
    const carrier = carrierFor(source, request);
    const auth = carrier?.inbound?.auth;
    const server = carrier && servers.get(carrier.name);
    if (!auth || !server) return undefined;
    return { server, passwordOf: (username) => (username === auth.username ? auth.password : undefined) };
  };
}

export async function startSipStack(o: SipStackOptions): Promise<SipStack> {
  const { config, clock, logger } = o;
  const trusted = config.sip.trusted_proxies;
  for (const proxy of trusted) {
    if (!isAddressOrCidr(proxy)) throw new ConfigError(`config: sip.trusted_proxies has "${proxy}", which is not an IP address or CIDR`);
  }
  // A connection's own address: a carrier's, or a trusted edge proxy's (which carries many carriers' traffic).
  const isCarrierOrEdge = (address: string): boolean =>
    sourceMatches(trusted, address) || o.carriers.some((c) => sourceMatches(c.inbound?.sources ?? [], address));
  const softLimit = softNofileLimit();
  const budget = softLimit === null ? null : descriptorBudget(config.sip, o.carriers, softLimit);
  if (budget && budget.leftForCalls < 0) logger.warn(budget, 'the SIP TCP/TLS connection caps exceed the open-file limit (RLIMIT_NOFILE): raise it or lower sip.tcp.max_connections (docs/RELIABILITY.md, "Descriptor budget")');
  const tcp = config.sip.tcp;
  // The transport delivers to the user agent built on it just below.
  const up: { ua?: SipUserAgent } = {};
  const transport = new TransportLayer({
    listen: [
      { protocol: 'UDP', host: config.sip.host, port: config.sip.port }, { protocol: 'TCP', host: config.sip.host, port: config.sip.port },
      ...(o.tls && config.sip.tls ? [{ protocol: 'TLS' as const, host: config.sip.host, port: config.sip.tls.port, tls: o.tls }] : []),
    ],
    delegate: {
      onMessage: (message, source) => up.ua?.receive(message, source), onDropped: (reason) => o.metrics.sipDropped(reason),
      onConnectionRefused: (reason) => o.metrics.sipConnectionRefused(reason),
      onTraceFailed: (err) => {
        o.metrics.sipTraceFailed('record');
        o.logger.warn({ err }, 'a SIP message could not be traced');
      },
    },
    ...(o.trace ? { trace: o.trace } : {}),
    maxMessageSize: config.sip.max_message_bytes,
    // Carriers' addresses have a cap of their own outside the overall one: a flood from elsewhere cannot lock them out.
    connectionLimits: {
      maxConnections: tcp.max_connections, maxPerSource: tcp.max_connections_per_source,
      maxPerTrustedSource: tcp.max_connections_per_carrier_source, isTrustedSource: isCarrierOrEdge,
    },
    idleTimeoutMs: tcp.idle_timeout_seconds * 1000, firstMessageTimeoutMs: tcp.first_message_timeout_seconds * 1000,
    // Per-source flood protection before parsing (a scanner on port 5060 costs a map lookup per datagram).
    rateLimit: { perSecond: config.sip.rate_limit_per_second, burst: config.sip.rate_limit_burst },
    clock,
  });
  await transport.start();
  // First match wins: two carriers behind one edge are told apart by the source it forwards.
  const carrierConfigFor: CarrierMatcher = (source, request) => {
    const address = matchingAddress(source, request, trusted);
    return o.carriers.find((c) => sourceMatches(c.inbound?.sources ?? [], address));
  };
  const ua = new SipUserAgent({
    transport, clock, userAgent: 'voice-gateway', contactUser: 'gateway',
    timers: { T1: config.sip.t1_ms, T2: config.sip.t2_ms, T4: config.sip.t4_ms },
    // docs/CONFIGURATION.md "Operator surface": INVITEs only from configured carrier sources.
    authorizeSource: (source: SipSource, request: SipRequest) => (carrierConfigFor(source, request) ? 'allow' : config.sip.unknown_source === 'drop' ? 'drop' : 'reject'),
    inboundAuth: inboundDigest(o.carriers, carrierConfigFor, clock),
    // docs/CONFIGURATION.md sip.outbound_proxy: carriers and agent edges see the SIP edge's address.
    ...(config.sip.outbound_proxy ? { outboundProxy: config.sip.outbound_proxy } : {}),
    unavailableFor: () => (o.isDraining?.() ? config.shutdown.drain_seconds : undefined),
  });
  up.ua = ua;
  // A listener's bug is logged and contained, never the end of the process and its calls
  // (docs/RELIABILITY.md "Ending a call").
  const restoreListenerErrors = reportListenerErrors((event, err) => logger.error({ err, event }, 'an event listener threw; contained, the process and its calls go on'));
  return {
    transport, ua, carrierConfigFor,
    listening: () => {
      const udp = transport.localAddress('UDP');
      return { host: udp.host, udpPort: udp.port, tcpPort: transport.localAddress('TCP').port, tlsPort: o.tls ? transport.localAddress('TLS').port : null };
    },
    stop: async () => {
      ua.dispose();
      await transport.stop();
    },
    restoreListenerErrors,
  };
}
