/**
 * @module Starts the telephony side of the gateway from the configuration: recovery of calls a
 * crash left unfinished, the SIP transport and user agent, the RTP port pool, the built-in
 * sandbox far end, the carriers as call-layer profiles, and the call service. Stops in order:
 * calls hung up, sandbox, user agent, transport.
 */
import { mkdir, rm } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { isAddressOrCidr, SANDBOX_CARRIER, sdesExposure, usesTls, type CarrierConfig } from '../config/carriers.js';
import { readSipTls } from '../config/sip-tls.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load-config.js';
import {
  CallService, Heartbeat, loadAnnouncement, loadWavPcm8k, recoverUnfinishedCalls, SandboxFarEnd, type CallEngineContext, type CarrierProfile,
} from '../engine/calls/index.js';
import type { TranscriptionSettings } from '../engine/calls/engine-context.js';
import { LoopingPcmSource, PortPool, relayThreadPriorityOutcome, useMediaIo } from '../engine/media/index.js';
import {
  DigestServer, hopUri, locateAddresses, reportListenerErrors, resolveNextHop, ServerLocator, SipUserAgent, TransportLayer, type InboundAuth, type OptionsPinger, type SipRequest, type SipSource,
} from '../engine/sip/index.js';
import type { Registry } from 'prom-client';
import { OWN_PROTOCOL_VENDOR, type ProviderRegistry } from '../providers/index.js';
import { PocketsphinxRecognizer } from '../providers/speech/index.js';
import { CdrJournal, DurableCallStore, type Store } from '../storage/index.js';
import { createAgentConnector } from './agent-connector.js';
import { createCallMetrics, type CallMetrics } from './call-metrics.js';
import { createSipTrunkResolver, openImportedAgent } from './agent-targets.js';
import { matchingAddress, sourceMatches } from './carrier-sources.js';
import { descriptorBudget, softNofileLimit } from './descriptor-budget.js';
import { outboundPolicies } from './outbound-policies.js';

export interface CallEngineOptions {
  config: Readonly<Config>;
  carriers: readonly CarrierConfig[];
  store: Store;
  clock: Clock;
  logger: Logger;
  /** Where the call and carrier metrics are registered. */
  metrics: Registry;
  /** Provider adapters (endpoints, SIP edges) for imported agents. */
  platforms: ProviderRegistry;
  isDraining(): boolean;
}

export interface CallEngine {
  service: CallService;
  /** Where the gateway's SIP listens (port 0 in the configuration picks free ports). */
  /** Where SIP listens; `tlsPort` is null without `sip.tls`. */
  sip: { host: string; udpPort: number; tcpPort: number; tlsPort: number | null };
  /** The sandbox carrier's far end URI. */
  sandboxUri: string;
  /** RFC 3263 location of a SIP URI with the engine's resolver, for the API's checks of stored `sip_uri`s. */
  readonly locateSip: (uri: string) => Promise<{ host: string; addresses: string[] } | { invalid: string }>;
  stop(): Promise<void>;
}

const isUnspecified = (address: string): boolean => address === '0.0.0.0' || address === '::';

/** The address we advertise when bound to every interface: the first external IPv4 one. */
function firstExternalIpv4(): string {
  for (const list of Object.values(networkInterfaces())) {
    const found = list?.find((i) => i.family === 'IPv4' && !i.internal);
    if (found) return found.address;
  }
  return '127.0.0.1';
}

function carrierProfile(c: CarrierConfig): CarrierProfile {
  return {
    name: c.name, outboundUri: c.outbound?.uri ?? null, credentials: c.outbound?.auth, numberFormat: c.outbound?.from_format ?? 'e164',
    countryCode: c.outbound?.country_code, codecs: c.codecs, maxConcurrentCalls: c.max_concurrent_calls, transfer: c.transfer, sandbox: false,
    didFrom: c.inbound?.did_from ?? 'request_uri', mediaEncryption: c.media_encryption, mediaNetworks: c.media_networks,
    trustAssertedIdentity: c.calls.trust_asserted_identity,
  };
}

/** The hold music, decoded once; a file that cannot be read stops the start (exit 78), naming the key. */
async function loadHoldMusic(file: string): Promise<Int16Array> {
  try {
    const pcm = await loadWavPcm8k(file);
    if (pcm.length === 0) throw new Error('no audio in it');
    return pcm;
  } catch (err) {
    throw new ConfigError(`config: calls.hold_music_file ${file} is not a usable WAV: ${(err as Error).message}`);
  }
}

/**
 * The configured speech recognizer (docs/API.md "Calls" `source: "gateway"` transcripts), or null when off.
 * Its per-call audio pipes live in `<data_dir>/asr/`, emptied here: a gateway killed mid-call
 * leaves its pipe folders behind, and no other process uses them (one gateway per data folder).
 */
async function transcriptionOf(config: Readonly<Config>, clock: Clock, logger: Logger): Promise<TranscriptionSettings | null> {
  const t = config.transcription;
  if (t.engine === 'none' || t.channels.length === 0) return null;
  const p = t.pocketsphinx;
  const tmpDir = join(config.data_dir, 'asr');
  await rm(tmpDir, { recursive: true, force: true });
  await mkdir(tmpDir, { recursive: true, mode: 0o700 });
  const recognizer = new PocketsphinxRecognizer({ command: p.command, model: p.model, args: p.args, clock, tmpDir, logger: logger.child({ component: 'transcription' }) });
  logger.info({ engine: recognizer.name, channels: t.channels }, 'gateway transcription on');
  return { recognizer, channels: t.channels };
}

/** The carrier an out-of-dialog request belongs to (`inbound.sources`, docs/CONFIGURATION.md), by its matching address. */
type CarrierMatcher = (source: SipSource, request: SipRequest) => CarrierConfig | undefined;

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

/**
 * OPTIONS keep-alives to each carrier's outbound target (`options_ping_s`, 0 = off), resolved once
 * with RFC 3263; every change of state is logged and exported as `vgw_carrier_up`.
 */
async function startCarrierPings(ua: SipUserAgent, locator: ServerLocator, carriers: readonly CarrierConfig[], metrics: CallMetrics, logger: Logger): Promise<OptionsPinger[]> {
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

export async function startCallEngine(o: CallEngineOptions): Promise<CallEngine> {
  const { config, clock, logger } = o;
  // Everything that can fail on configuration alone comes before any socket is opened.
  const holdMusic = config.calls.hold_music_file ? await loadHoldMusic(config.calls.hold_music_file) : null;
  const tls = config.sip.tls ? readSipTls(config.sip.tls) : null;
  // Without sip.tls there is no TLS transport: a TLS carrier could never be pinged, registered or dialled.
  const tlsCarrier = tls ? undefined : o.carriers.find((c) => c.outbound && usesTls(c.outbound.uri));
  if (tlsCarrier) throw new ConfigError(`carriers: carrier "${tlsCarrier.name}": outbound.uri ${tlsCarrier.outbound!.uri} uses TLS, which needs sip.tls (a certificate) in the config`);
  const announcement = await loadAnnouncement(config.sandbox.announcement);
  // Final records a previous run could not write go in first, so recovery does not take them for
  // calls a crash left unfinished (docs/RELIABILITY.md, storage failures and the CDR journal).
  const callStore = new DurableCallStore({
    calls: o.store.calls, transcripts: o.store.transcripts, transaction: (fn) => o.store.transaction(fn),
    journal: new CdrJournal(config.data_dir), clock, logger: logger.child({ component: 'call-store' }), retryMs: config.storage.retry_seconds * 1000,
  });
  callStore.replayJournal();
  await recoverUnfinishedCalls(callStore, config.data_dir, clock, logger);

  const mediaIo = useMediaIo(config.rtp.socket_io, { relayThread: config.rtp.relay_thread, relayThreadPriority: config.rtp.relay_thread_priority });
  if (mediaIo === null) throw new ConfigError('config: rtp.socket_io is native, but the media I/O addon is not built (npm run build:native)');
  const priorityOutcome = relayThreadPriorityOutcome();
  if (priorityOutcome !== null && priorityOutcome !== 'granted') {
    // Not fatal: the relay works time-sharing, only its tail latency is worse on a busy host.
    logger.warn({ relay_thread_priority: config.rtp.relay_thread_priority, error: priorityOutcome }, 'rtp.relay_thread_priority refused by the kernel; the relay thread runs time-sharing (grant CAP_SYS_NICE or LimitRTPRIO)');
  }
  const ports = new PortPool({ min: config.rtp.port_min, max: config.rtp.port_max });
  const rtpBindAddress = config.rtp.bind_address ?? config.sip.host;
  const advertised = config.sip.public_ip ?? (isUnspecified(config.sip.host) ? firstExternalIpv4() : config.sip.host);
  const up: { ua?: SipUserAgent; service?: CallService } = {};
  // The live-call gauge reads the service at scrape time, once it exists.
  const callMetrics = createCallMetrics(o.metrics, () => up.service?.registry, () => transport.inboundConnections);
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
  const transport = new TransportLayer({
    listen: [
      { protocol: 'UDP', host: config.sip.host, port: config.sip.port }, { protocol: 'TCP', host: config.sip.host, port: config.sip.port },
      ...(tls && config.sip.tls ? [{ protocol: 'TLS' as const, host: config.sip.host, port: config.sip.tls.port, tls }] : []),
    ],
    delegate: {
      onMessage: (message, source) => up.ua?.receive(message, source), onDropped: (reason) => callMetrics.sipDropped(reason),
      onConnectionRefused: (reason) => callMetrics.sipConnectionRefused(reason),
    },
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
  });
  up.ua = ua;
  // A listener's bug is logged and contained, never the end of the process and its calls
  // (docs/RELIABILITY.md "Ending a call").
  const restoreListenerErrors = reportListenerErrors((event, err) => logger.error({ err, event }, 'an event listener threw; contained, the process and its calls go on'));

  // The sandbox far end lives on loopback; media toward it is advertised there too.
  let sandbox: SandboxFarEnd;
  try {
    sandbox = await SandboxFarEnd.start({
      clock, ports, host: '127.0.0.1', ringMs: config.sandbox.ring_ms, logger: logger.child({ component: 'sandbox' }), announcement,
    });
  } catch (err) {
    ua.dispose();
    await transport.stop();
    restoreListenerErrors();
    throw err;
  }
  const carriers = new Map<string, CarrierProfile>(o.carriers.map((c) => [c.name, carrierProfile(c)]));
  for (const c of o.carriers) {
    const exposure = sdesExposure(c, config.sip.tls !== undefined);
    if (exposure) logger.warn({ carrier: c.name, media_encryption: c.media_encryption }, `SRTP keys of this carrier cross the network readable: ${exposure}`);
  }
  carriers.set(SANDBOX_CARRIER, {
    name: SANDBOX_CARRIER, outboundUri: sandbox.uri, numberFormat: 'e164', codecs: ['PCMU', 'PCMA', 'telephone-event'],
    maxConcurrentCalls: 1000, transfer: 'bridge', sandbox: true, didFrom: 'request_uri', mediaEncryption: 'disabled',
    mediaAddress: isUnspecified(rtpBindAddress) ? '127.0.0.1' : rtpBindAddress,
  });

  const connectTimeoutMs = config.calls.agent_connect_timeout_seconds * 1000;
  const sipTrunkEncryption = Object.fromEntries(Object.entries(config.providers).map(([name, p]) => [name, p.media_encryption]));
  const policies = outboundPolicies(config);
  const targets = { store: o.store, platforms: o.platforms, clock, logger, connectTimeoutMs, sipTrunkEncryption, agentUrls: policies.agentUrls };
  const ctx: CallEngineContext = {
    clock, logger, store: callStore, ua, locator: new ServerLocator(), ports, rtpBindAddress,
    mediaAddress: advertised, sipHost: advertised, carriers, dataDir: config.data_dir,
    timings: { ringTimeoutMs: config.calls.ring_timeout_seconds * 1000, mediaTimeoutMs: config.calls.media_timeout_seconds * 1000 },
    holdMusic: () => (holdMusic ? new LoopingPcmSource(holdMusic, 'hold music') : null),
    connectAgent: createAgentConnector({
      clock, logger, websocketAgent: (options) => o.platforms.streaming(OWN_PROTOCOL_VENDOR.name)!(options),
      importedAgent: (request) => openImportedAgent(targets, request),
      agentUrls: policies.agentUrls, connectTimeoutMs,
    }),
    carrierForSource: (source, request) => {
      const c = carrierConfigFor(source, request);
      return c && carriers.get(c.name);
    },
    routeFor: (did, carrier) => {
      const route = o.store.routes.liveForDid(did, carrier);
      const agent = route && o.store.agents.get(route.tenant_id, route.agent_id);
      return route && agent ? { tenantId: route.tenant_id, agentId: agent.id, connectionMode: agent.connection_mode } : undefined;
    },
    resolveSipTrunk: createSipTrunkResolver(targets),
    sipTargets: policies.sipTargets,
    recordInbound: config.calls.record_inbound,
    transcription: await transcriptionOf(config, clock, logger),
    mediaSources: { strict: config.rtp.strict_source, refusals: { refused: (reason) => callMetrics.rtpRefused(reason) } },
  };
  const service = new CallService(ctx, {
    maxConcurrentPerTenant: config.calls.max_concurrent_per_tenant, isDraining: () => o.isDraining(), drainSeconds: config.shutdown.drain_seconds,
    onCallEnded: (call) => callMetrics.callEnded(call),
  });
  up.service = service;
  const pingers = await startCarrierPings(ua, ctx.locator, o.carriers, callMetrics, logger);
  ua.events.on('invite', (invite) => {
    service.acceptInbound(invite).catch((err: unknown) => {
      logger.error({ err }, 'inbound call failed');
      if (!invite.isFinal) invite.reject(500);
    });
  });
  const udp = transport.localAddress('UDP');
  const sip = { host: udp.host, udpPort: udp.port, tcpPort: transport.localAddress('TCP').port, tlsPort: tls ? transport.localAddress('TLS').port : null };
  logger.info({ sip, media_address: advertised, rtp_ports: `${config.rtp.port_min}-${config.rtp.port_max}`, media_io: mediaIo, relay_thread: mediaIo === 'native' && config.rtp.relay_thread, relay_thread_priority: priorityOutcome === 'granted' ? config.rtp.relay_thread_priority : 0, sandbox: sandbox.uri }, 'SIP and media listening');

  // From here on calls may be live: the heartbeat dates them if the process dies (see recovery).
  const heartbeat = new Heartbeat(config.data_dir, clock, (err) => logger.warn({ err }, 'cannot write the engine heartbeat; calls cut off by a crash will end at the restart'));
  heartbeat.start();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= (async () => {
    for (const pinger of pingers) pinger.stop();
    await service.shutdown();
    await sandbox.stop();
    ua.dispose();
    await transport.stop();
    heartbeat.stop();
    await callStore.stop();
    restoreListenerErrors();
  })());
  const locateSip = (uri: string) => locateAddresses(ctx.locator, uri);
  return { service, sip, sandboxUri: sandbox.uri, locateSip, stop };
}
