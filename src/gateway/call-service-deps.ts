/**
 * @module The call service step of the engine's start: what each class of the call layer uses,
 * built here and nowhere else (docs/ARCHITECTURE.md "Call layer layout"): the media and SIP side
 * of new legs, the agent connector, the sip_trunk resolver, hold music, recordings and the
 * gateway's transcription. Each class gets only the part it reads.
 */
import type { RecordingFiles } from '../common/recording-files.js';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../config/load-config.js';
import {
  legMedia, loadWavPcm8k, type CallRecordStore, type CallSipTrace, type DialogSnapshots, type CallServiceDeps, type CarrierProfile, type TransferPolicy, type SipDialling, type TranscriptionSettings,
} from '../engine/calls/index.js';
import { LoopingPcmSource, type AudioSource } from '../engine/media/index.js';
import type { ServerLocator, SipUserAgent } from '../engine/sip/index.js';
import { OWN_PROTOCOL_VENDOR, type ProviderRegistry } from '../providers/index.js';
import { PocketsphinxRecognizer } from '../providers/speech/index.js';
import type { AgentTransferPolicy, Store } from '../storage/index.js';
import type { TenantId } from '../common/ids.js';
import { createAgentConnector } from './agent-connector.js';
import { createSipTrunkResolver, openImportedAgent } from './agent-targets.js';
import type { CallMetrics } from './call-metrics.js';
import type { MediaPorts } from './media-ports.js';
import { outboundPolicies } from './outbound-policies.js';
import type { CarrierMatcher } from './sip-stack.js';

/** A stored `transfer_policy` as the call layer reads it. */
const transferPolicyOf = (stored: AgentTransferPolicy | null): TransferPolicy | null => (stored ? { allow: stored.allow, maxPerCall: stored.max_per_call } : null);

/** The hold music, decoded once; a file that cannot be read stops the start (exit 78), naming the key. */
export async function loadHoldMusic(file: string): Promise<Int16Array> {
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

export interface CallServiceWiring {
  config: Readonly<Config>;
  clock: Clock;
  logger: Logger;
  /** The tenants' agents, routes and sip_trunk targets. */
  store: Store;
  /** Where calls' records go (durable, with the CDR journal). */
  callStore: CallRecordStore;
  platforms: ProviderRegistry;
  ua: SipUserAgent;
  locator: ServerLocator;
  media: MediaPorts;
  carriers: ReadonlyMap<string, CarrierProfile>;
  carrierConfigFor: CarrierMatcher;
  /** The decoded `calls.hold_music_file`, or null for silence. */
  holdMusic: Int16Array | null;
  metrics: CallMetrics;
  /** Where calls' recordings are written. */
  recordings: RecordingFiles;
  /** Where calls' SIP messages are kept (docs/API.md "SIP trace of a call"); none when absent. */
  sipTrace?: CallSipTrace;
  /** Where an engine in a cluster keeps its confirmed dialogs for the reaper (docs/CLUSTER.md "When an engine dies"). */
  dialogSnapshots?: DialogSnapshots;
}

/** What the call service and, below it, each flow and call side use. */
export async function callServiceDeps(w: CallServiceWiring): Promise<CallServiceDeps> {
  const { config, clock, logger } = w;
  const music = w.holdMusic;
  const holdMusic = (): AudioSource | null => (music ? new LoopingPcmSource(music, 'hold music') : null);
  const media = legMedia({
    clock, ports: w.media.ports, bindAddress: w.media.bindAddress, address: w.media.advertised,
    mediaTimeoutMs: config.calls.media_timeout_seconds * 1000,
    strictSource: config.rtp.strict_source, refusals: { refused: (reason) => w.metrics.rtpRefused(reason) },
  });
  const dialling: SipDialling = { ua: w.ua, locator: w.locator, sipHost: w.media.advertised, ringTimeoutMs: config.calls.ring_timeout_seconds * 1000 };

  const connectTimeoutMs = config.calls.agent_connect_timeout_seconds * 1000;
  const sipTrunkEncryption = Object.fromEntries(Object.entries(config.providers).map(([name, p]) => [name, p.media_encryption]));
  const policies = outboundPolicies(config);
  const targets = {
    store: w.store, platforms: w.platforms, clock, logger, connectTimeoutMs, sipTrunkEncryption, agentUrls: policies.agentUrls, observeConnect: w.metrics.agentConnect,
  };
  const a = config.amd;
  const agent = {
    clock, holdMusic, transferPolicyOf: async (tenantId: TenantId, agentId: string) => transferPolicyOf((await w.store.agents.get(tenantId, agentId))?.transfer_policy ?? null),
    amd: {
      initialSilenceMs: a.initial_silence_ms, maxHumanGreetingMs: a.max_human_greeting_ms, afterGreetingSilenceMs: a.after_greeting_silence_ms,
      minWordMs: a.min_word_ms, beepMs: a.beep_ms, faxToneMs: a.fax_tone_ms,
    },
    beepWait: { greetingEndSilenceMs: a.greeting_end_silence_ms, maxBeepWaitMs: a.max_beep_wait_ms },
    connectAgent: createAgentConnector({
      clock, logger, websocketAgent: (options) => w.platforms.streaming(OWN_PROTOCOL_VENDOR.name)!(options),
      importedAgent: (request) => openImportedAgent(targets, request),
      agentUrls: policies.agentUrls, connectTimeoutMs, observe: w.metrics.agentConnect,
    }),
  };
  const trunk = { clock, dialling, media, holdMusic, resolveSipTrunk: createSipTrunkResolver(targets), sipTargets: policies.sipTargets, observeConnect: w.metrics.agentConnect };
  const connected = {
    clock, outputs: { clock, recordings: w.recordings, transcription: await transcriptionOf(config, clock, logger) },
    transfer: { clock, dialling, media, holdMusic, sipTargets: policies.sipTargets },
    deniedTransferPrefixes: config.calls.transfer_denied_prefixes,
    tenantTransferPolicy: async (tenantId: TenantId) => transferPolicyOf(await w.store.tenants.transferPolicy(tenantId)),
  };
  return {
    calls: { clock, logger, store: w.callStore, ...(w.sipTrace ? { sipTrace: w.sipTrace } : {}), ...(w.dialogSnapshots ? { dialogSnapshots: w.dialogSnapshots } : {}) },
    carriers: w.carriers,
    carrierForSource: (source, request) => {
      const c = w.carrierConfigFor(source, request);
      return c && w.carriers.get(c.name);
    },
    routeFor: async (did, carrier) => {
      const route = await w.store.routes.liveForDid(did, carrier);
      const found = route && await w.store.agents.get(route.tenant_id, route.agent_id);
      return route && found ? { tenantId: route.tenant_id, agentId: found.id, connectionMode: found.connection_mode } : undefined;
    },
    callerIds: {
      holds: (tenantId, number, carrier) => w.store.numbers.isHeldOn(tenantId, number, carrier),
      isVerified: (tenantId, number) => w.store.callerIds.isVerified(tenantId, number),
    },
    recordInbound: config.calls.record_inbound,
    media,
    outbound: { clock, dialling, mediaAddress: media.address, connected, agent, trunk },
    inbound: { mediaAddress: media.address, connected, agent, trunk },
  };
}
