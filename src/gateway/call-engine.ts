/**
 * @module Starts the telephony side of the gateway from the configuration, in steps that read in
 * order: checks that need no socket, recovery of calls a crash left unfinished, the media ports,
 * the SIP transport and user agent, the built-in sandbox far end, the carriers as call-layer
 * profiles, and the call service wired from them (docs/ARCHITECTURE.md "Call layer layout"). Stops
 * in order: calls hung up, sandbox, user agent, transport.
 */
import type { Clock } from '../common/clock.js';
import type { RecordingFiles } from '../common/recording-files.js';
import type { Logger } from '../common/logger.js';
import { usesTls, type CarrierConfig } from '../config/carriers.js';
import { readSipTls, type SipTlsMaterial } from '../config/sip-tls.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load-config.js';
import type { ClusterAdmission, DialogSnapshots } from '../engine/calls/ports.js';
import { CallService, Heartbeat, loadAnnouncement, recoverUnfinishedCalls, SandboxFarEnd } from '../engine/calls/index.js';
import { locateAddresses, ServerLocator, type DialogSnapshot, type SipTraceEvent } from '../engine/sip/index.js';
import type { Registry } from 'prom-client';
import type { ProviderRegistry } from '../providers/index.js';
import { CdrJournal, DurableCallStore, type Store } from '../storage/index.js';
import { createCallMetrics } from './call-metrics.js';
import { callServiceDeps, loadHoldMusic } from './call-service-deps.js';
import { carrierProfiles, startCarrierPings } from './carrier-profiles.js';
import { isUnspecified, openMediaPorts, type MediaPorts } from './media-ports.js';
import { startSipStack, type SipStack } from './sip-stack.js';
import { startSipTraces, type SipTraces } from './observability/sip-traces.js';
import { createEngineMetrics } from './observability/engine-metrics.js';
import { HepExporter } from './observability/hep-exporter.js';
import { startEventDelivery, type EventDelivery } from './event-delivery.js';
import { NodeReaper, type ReaperState } from './node-reaper.js';

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
  /** Where calls' recordings are written. */
  recordings: RecordingFiles;
  /** Recovery ends only this engine's unfinished calls (and rows naming none); every one when absent. */
  recoveryNodeId?: string | undefined;
  /** The limits across every engine (docs/CLUSTER.md "Live state in Redis"); absent without `cluster.redis_url`. */
  cluster?: ClusterAdmission | undefined;
  /**
   * In a cluster (docs/CLUSTER.md "When an engine dies"): where this engine keeps its confirmed
   * dialogs, and the live state its reaper reads to end the calls of engines that died.
   */
  failover?: { snapshots: DialogSnapshots; state: ReaperState } | undefined;
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
  /** Calls' SIP traces (docs/API.md "SIP trace of a call"); null with `observability.sip_trace.enabled: false`. */
  sipTraces: Pick<SipTraces, 'read'> | null;
  /** Call events: the bus of committed events (the live stream listens) and the sender. */
  events: EventDelivery;
  /** Ends a dialog this process does not hold from its snapshot (docs/CLUSTER.md "When an engine dies"). */
  byeFromSnapshot(snapshot: DialogSnapshot): Promise<{ status: number; reason: string }>;
  stop(): Promise<void>;
}

/** What the configuration alone decides, read before any socket opens: a bad file or key stops the start (exit 78). */
async function readStartFiles(config: Readonly<Config>, carriers: readonly CarrierConfig[]): Promise<{
  holdMusic: Int16Array | null; tls: SipTlsMaterial | null; announcement: Awaited<ReturnType<typeof loadAnnouncement>>;
}> {
  const holdMusic = config.calls.hold_music_file ? await loadHoldMusic(config.calls.hold_music_file) : null;
  const tls = config.sip.tls ? readSipTls(config.sip.tls) : null;
  // Without sip.tls there is no TLS transport: a TLS carrier could never be pinged, registered or dialled.
  const tlsCarrier = tls ? undefined : carriers.find((c) => c.outbound && usesTls(c.outbound.uri));
  if (tlsCarrier) throw new ConfigError(`carriers: carrier "${tlsCarrier.name}": outbound.uri ${tlsCarrier.outbound!.uri} uses TLS, which needs sip.tls (a certificate) in the config`);
  return { holdMusic, tls, announcement: await loadAnnouncement(config.sandbox.announcement) };
}

/**
 * The durable call store, with final records a previous run could not write put in first, so
 * recovery does not take them for calls a crash left unfinished (docs/RELIABILITY.md, storage
 * failures and the CDR journal); then those calls are ended.
 */
async function recoverCalls(o: CallEngineOptions, events: EventDelivery): Promise<DurableCallStore> {
  const { config, clock, logger } = o;
  const callStore = new DurableCallStore({
    calls: o.store.calls, transcripts: o.store.transcripts, transaction: (fn) => o.store.transaction(fn), onEvents: (committed) => events.bus.publish(committed),
    journal: new CdrJournal(config.data_dir), clock, logger: logger.child({ component: 'call-store' }), retryMs: config.storage.retry_seconds * 1000,
  });
  await callStore.replayJournal();
  await recoverUnfinishedCalls(callStore, config.data_dir, clock, logger, { nodeId: o.recoveryNodeId, recordings: o.recordings });
  return callStore;
}

/** The sandbox far end on loopback; when it cannot start, the SIP stack started before it is stopped. */
async function startSandbox(o: CallEngineOptions, media: MediaPorts, sip: SipStack, announcement: Awaited<ReturnType<typeof loadAnnouncement>>): Promise<SandboxFarEnd> {
  try {
    return await SandboxFarEnd.start({
      clock: o.clock, ports: media.ports, host: '127.0.0.1', ringMs: o.config.sandbox.ring_ms, logger: o.logger.child({ component: 'sandbox' }), announcement,
    });
  } catch (err) {
    await sip.stop();
    sip.restoreListenerErrors();
    throw err;
  }
}

export async function startCallEngine(o: CallEngineOptions): Promise<CallEngine> {
  const { config, clock, logger } = o;
  const nodeId = o.recoveryNodeId ?? config.node_id ?? '';
  const files = await readStartFiles(config, o.carriers);
  // The sender starts first: deliveries a previous run left are resumed, recovery's events follow.
  // Without a recovery node id this process owns the SQLite file alone (the `all` role), its outbox too.
  const events = startEventDelivery(config, o.store, clock, logger, { nodeId, ownsOutbox: o.recoveryNodeId === undefined }, o.metrics);
  const callStore = await recoverCalls(o, events).catch(async (err: unknown) => {
    await events.stop();
    throw err;
  });
  const media = openMediaPorts(config, logger);
  const up: { sip?: SipStack; service?: CallService } = {};
  // The live-call gauge reads the service at scrape time, once it exists.
  const callMetrics = createCallMetrics(o.metrics, () => up.service?.registry, () => up.sip?.transport.inboundConnections ?? 0);
  const engineMetrics = createEngineMetrics(o.metrics, { calls: () => up.service?.registry, carriers: () => ['sandbox', ...o.carriers.map((c) => c.name)], ports: media.ports });
  const traces = startSipTraces({ config, clock, logger, store: o.store, metrics: callMetrics });
  const hepTo = config.observability.hep;
  const hep = hepTo ? new HepExporter({ ...hepTo, onFailure: () => callMetrics.sipTraceFailed('hep') }) : null;
  // Every SIP message is counted; with tracing on it is kept with its call, with `hep` sent to Homer too.
  const trace = {
    message: (event: SipTraceEvent) => {
      engineMetrics.sipMessage(event.direction, event.data);
      traces?.recorder.message(event);
      hep?.message(event);
    },
  };
  const sip = (up.sip = await startSipStack({ config, carriers: o.carriers, tls: files.tls, clock, logger, metrics: callMetrics, trace, isDraining: () => o.isDraining() }));
  const sandbox = await startSandbox(o, media, sip, files.announcement);
  // Media toward the sandbox far end is advertised on loopback too.
  const carriers = carrierProfiles({
    carriers: o.carriers, sipTls: config.sip.tls !== undefined, sandboxUri: sandbox.uri, logger,
    sandboxMediaAddress: isUnspecified(media.bindAddress) ? '127.0.0.1' : media.bindAddress,
  });
  const locator = new ServerLocator();
  const service = new CallService(await callServiceDeps({
    config, clock, logger, store: o.store, callStore, platforms: o.platforms, ua: sip.ua, locator, media, carriers,
    carrierConfigFor: sip.carrierConfigFor, holdMusic: files.holdMusic, metrics: callMetrics, recordings: o.recordings, ...(traces ? { sipTrace: traces.recorder } : {}),
    ...(o.failover ? { dialogSnapshots: o.failover.snapshots } : {}),
  }), {
    maxConcurrentPerTenant: config.calls.max_concurrent_per_tenant, isDraining: () => o.isDraining(), drainSeconds: config.shutdown.drain_seconds, capacity: config.cluster.capacity,
    ...(o.cluster ? { cluster: o.cluster } : {}),
    onCallEnded: (call) => {
      callMetrics.callEnded(call);
      engineMetrics.callEnded(call);
    },
  });
  up.service = service;
  const pingers = await startCarrierPings(sip.ua, locator, o.carriers, callMetrics, logger);
  sip.ua.events.on('invite', (invite) => {
    service.acceptInbound(invite).catch((err: unknown) => {
      logger.error({ err }, 'inbound call failed');
      if (!invite.isFinal) invite.reject(500);
    });
  });
  const listening = sip.listening();
  logger.info({ sip: listening, media_address: media.advertised, rtp_ports: `${config.rtp.port_min}-${config.rtp.port_max}`, media_io: media.mediaIo, relay_thread: media.mediaIo === 'native' && config.rtp.relay_thread, relay_thread_priority: media.priorityGranted ? config.rtp.relay_thread_priority : 0, sandbox: sandbox.uri }, 'SIP and media listening');

  // From here on calls may be live: the heartbeat dates them if the process dies (see recovery).
  const heartbeat = new Heartbeat(config.data_dir, clock, (err) => logger.warn({ err }, 'cannot write the engine heartbeat; calls cut off by a crash will end at the restart'));
  heartbeat.start();
  const reaper = o.failover && new NodeReaper({
    state: o.failover.state, calls: callStore, bye: (snapshot) => sip.ua.byeFromSnapshot(snapshot), selfNodeId: nodeId,
    clock, logger: logger.child({ component: 'reaper' }), metrics: o.metrics,
  });
  reaper?.start();
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => (stopping ??= (async () => {
    for (const pinger of pingers) pinger.stop();
    await reaper?.stop();
    await service.shutdown();
    await sandbox.stop();
    await sip.stop();
    heartbeat.stop();
    traces?.stop();
    hep?.close();
    await callStore.stop();
    await events.stop();
    sip.restoreListenerErrors();
  })());
  const locateSip = (uri: string) => locateAddresses(locator, uri);
  return { service, sip: listening, sandboxUri: sandbox.uri, locateSip, sipTraces: traces, events, byeFromSnapshot: (s) => sip.ua.byeFromSnapshot(s), stop };
}
