/**
 * @module A call engine's dependencies for unit tests of the call layer, in one place: a fake
 * clock, an in-memory call store, a fake agent connector, the gateway's SIP user agent on the
 * fake clock, RTP ports on loopback, and a remote party (a carrier's phone: a real SIP user agent
 * and an RTP socket on 127.0.0.1). Every call-layer test builds its engine here, so a change of
 * how the call classes take their dependencies is made once, in {@link callRig}.
 */
import { join } from 'node:path';
import { FolderRecordingFiles } from '../../src/common/recording-files.js';
import { FakeClock } from '../../src/common/clock.js';
import type { TenantId } from '../../src/common/ids.js';
import { silentLogger, type Logger } from '../../src/common/logger.js';
import { OutboundAddressPolicy } from '../../src/common/outbound-policy.js';
import { CallService, type CallServiceDeps, type CallServiceOptions } from '../../src/engine/calls/call-service.js';
import type { CallRecord } from '../../src/engine/calls/call-record.js';
import type { CarrierProfile } from '../../src/engine/calls/setup/carrier-profile.js';
import { legMedia } from '../../src/engine/calls/setup/leg-media.js';
import type { CallerIdDirectory, InboundRoute, SipTrunkResolver } from '../../src/engine/calls/ports.js';
import { FakeAgentLink, FakeAgents, MemoryCallStore } from './call-engine-fakes.js';
import type { PortPool } from '../../src/engine/media/index.js';
import { ServerLocator, type InboundCall, type OutboundCall, type SessionDialog, type SipUserAgent } from '../../src/engine/sip/index.js';
import { RtpPeer, testPortPool } from './rtp-peer.js';
import { startGatewayUaOnTestTransport } from './sip-sipp.js';
import type { TestTransport } from './sip-test-transport.js';

export { FakeAgentLink, FakeAgents, MemoryCallStore };

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export const TENANT = 'ten_unit' as TenantId;
export const OTHER_TENANT = 'ten_other' as TenantId;

/** Resolves once `check()` holds, looking after each turn of the event loop; rejects after `ms` (a hang guard, never a timing check). */
export async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * A far end on loopback: a SIP user agent with an RTP socket, for SDP that points at it. Its SIP
 * timers run on a fake clock of its own that never moves: loopback loses nothing, and no
 * retransmission or transaction timer outlives a test.
 */
export class Phone {
  readonly ua: SipUserAgent;
  readonly transport: TestTransport;
  readonly rtp: RtpPeer;
  /** INVITEs received, in order. */
  readonly invites: InboundCall[] = [];
  /** Answers INVITEs as they come; absent: the test answers them. */
  onInvite: ((call: InboundCall) => void) | undefined;

  constructor(ua: SipUserAgent, transport: TestTransport, rtp: RtpPeer) {
    this.ua = ua;
    this.transport = transport;
    this.rtp = rtp;
    ua.events.on('invite', (call) => {
      this.invites.push(call);
      this.onInvite?.(call);
    });
  }

  static async open(t: Teardown): Promise<Phone> {
    const { ua, transport } = await startGatewayUaOnTestTransport(t, { clock: new FakeClock() });
    return new Phone(ua, transport, await RtpPeer.open(t));
  }

  get uri(): string {
    return `sip:127.0.0.1:${this.transport.udpPort}`;
  }

  /** An SDP offer or answer with media at this phone's RTP socket. */
  sdp(o: { codecs?: readonly [number, string][]; direction?: string; version?: number } = {}): Buffer {
    const codecs = o.codecs ?? [[0, 'PCMU'], [8, 'PCMA'], [101, 'telephone-event']];
    return Buffer.from([
      'v=0', `o=phone 1 ${o.version ?? 1} IN IP4 127.0.0.1`, 's=-', 'c=IN IP4 127.0.0.1', 't=0 0',
      `m=audio ${this.rtp.port} RTP/AVP ${codecs.map(([pt]) => pt).join(' ')}`,
      ...codecs.map(([pt, name]) => `a=rtpmap:${pt} ${name}/8000`),
      ...(codecs.some(([, n]) => n === 'telephone-event') ? ['a=fmtp:101 0-16'] : []),
      `a=${o.direction ?? 'sendrecv'}`, '',
    ].join('\r\n'));
  }

  /** Waits for the `n`th INVITE (1-based). */
  async invite(n = 1): Promise<InboundCall> {
    await until(() => this.invites.length >= n, `INVITE ${n} at the phone`);
    return this.invites[n - 1]!;
  }
}

export interface RigOptions {
  carrier?: Partial<CarrierProfile>;
  timings?: Partial<{ ringTimeoutMs: number; mediaTimeoutMs: number }>;
  service?: Partial<CallServiceOptions>;
  route?: InboundRoute | null;
  resolveSipTrunk?: SipTrunkResolver;
  recordInbound?: boolean;
  /** The tenants' numbers for the caller-ID policy; by default TENANT holds ROUTED_DID on the carrier. */
  callerIds?: CallerIdDirectory;
  dataDir?: string;
  /** Whether sip_trunk targets on loopback are allowed (docs/SECURITY.md "Outbound addresses"). */
  allowLoopbackTargets?: boolean;
}

export interface CallRig {
  clock: FakeClock;
  store: MemoryCallStore;
  agents: FakeAgents;
  ports: PortPool;
  ua: SipUserAgent;
  /** The gateway's SIP port (UDP) on 127.0.0.1. */
  uaPort: number;
  /** The carrier's side: takes the gateway's INVITEs, and calls the gateway. */
  phone: Phone;
  carrier: CarrierProfile;
  /** What the service was built with (the composition root builds the same in src/gateway/). */
  deps: CallServiceDeps;
  service: CallService;
  draining: { value: boolean };
  ended: CallRecord[];
}

export const RING_TIMEOUT_MS = 30_000;
export const MEDIA_TIMEOUT_MS = 10_000;
/** A DID routed to {@link TENANT}'s agent when the rig's route is left as it is. */
export const ROUTED_DID = '+15550100';
/** The number each tenant holds on the rig's carrier (the caller-ID policy `owned` lets it present it). */
export const HELD_NUMBERS: Readonly<Record<string, string>> = { [TENANT]: ROUTED_DID, [OTHER_TENANT]: '+15550111' };

/** The engine under test on the fake clock, with one carrier (`unit`) whose outbound INVITEs reach `phone`. */
export async function callRig(t: Teardown, o: RigOptions = {}): Promise<CallRig> {
  const clock = new FakeClock();
  const store = new MemoryCallStore();
  const agents = new FakeAgents();
  const ports = testPortPool();
  const phone = await Phone.open(t);
  const { ua, transport } = await startGatewayUaOnTestTransport(t, { clock });
  const carrier: CarrierProfile = {
    name: 'unit', outboundUri: phone.uri, numberFormat: 'e164', codecs: ['PCMU', 'PCMA', 'telephone-event'], maxConcurrentCalls: 10,
    didFrom: 'request_uri', transfer: 'bridge', mediaEncryption: 'disabled', sandbox: false, ...o.carrier,
  };
  const route: InboundRoute | null = o.route === undefined ? { tenantId: TENANT, agentId: 'agt_unit', connectionMode: 'media_bridge' } : o.route;
  const timings = { ringTimeoutMs: RING_TIMEOUT_MS, mediaTimeoutMs: MEDIA_TIMEOUT_MS, ...o.timings };
  const media = legMedia({ clock, ports, bindAddress: '127.0.0.1', address: '127.0.0.1', mediaTimeoutMs: timings.mediaTimeoutMs });
  const dialling = { ua, locator: new ServerLocator(), sipHost: '127.0.0.1', ringTimeoutMs: timings.ringTimeoutMs };
  const holdMusic = (): null => null;
  const agent = { clock, connectAgent: agents.connect, holdMusic };
  const sipTargets = new OutboundAddressPolicy({ allowPrivate: o.allowLoopbackTargets ?? true });
  const connected = { clock, outputs: { clock, recordings: new FolderRecordingFiles(join(o.dataDir ?? '/nonexistent', 'recordings')) }, transfer: { clock, dialling, media, holdMusic, sipTargets }, deniedTransferPrefixes: ['+1900'] };
  const trunk = {
    clock, dialling, media, holdMusic,
    resolveSipTrunk: o.resolveSipTrunk ?? (() => Promise.resolve({ error: 'no sip_trunk target in this test' })),
    sipTargets,
  };
  const deps: CallServiceDeps = {
    calls: { clock, store, logger: silentLogger() }, carriers: new Map([[carrier.name, carrier]]),
    carrierForSource: () => carrier,
    routeFor: (did, name) => Promise.resolve(route && did === ROUTED_DID && name === carrier.name ? route : undefined),
    // Each tenant holds one number on the carrier, which its calls present as `from`.
    callerIds: o.callerIds ?? { holds: (tenantId, number, name) => Promise.resolve(HELD_NUMBERS[tenantId] === number && name === carrier.name), isVerified: () => Promise.resolve(false) },
    recordInbound: o.recordInbound ?? false, media,
    outbound: { clock, dialling, mediaAddress: media.address, connected, agent, trunk },
    inbound: { mediaAddress: media.address, connected, agent, trunk },
  };
  const draining = { value: false };
  const ended: CallRecord[] = [];
  const service = new CallService(deps, {
    maxConcurrentPerTenant: 10, isDraining: () => draining.value, drainSeconds: 30, onCallEnded: (c) => ended.push(c), ...o.service,
  });
  // Live calls are hung up at the end, before the phone and the user agent close (teardowns run
  // last-registered first). The fake clock moves meanwhile, a second per event-loop turn, so that
  // waits bounded by it (a BYE's answer, a CANCEL's 64*T1) end even if a peer is gone.
  t.teardown(async () => {
    let finished = false;
    const done = service.shutdown().finally(() => { finished = true; });
    for (let turns = 0; turns < 120 && !finished; turns++) {
      clock.advance(1000);
      await new Promise((resolve) => setImmediate(resolve));
    }
    await done;
  });
  ua.events.on('invite', (call) => void service.acceptInbound(call));
  return { clock, store, agents, ports, ua, uaPort: transport.udpPort, phone, carrier, deps, service, draining, ended };
}

/** Places an outbound call from the API's side; the call's id. */
export async function placeCall(rig: CallRig, tenantId: TenantId = TENANT, to = '+15550199'): Promise<string> {
  const result = await rig.service.place({ tenantId, carrier: rig.carrier.name, from: HELD_NUMBERS[tenantId] ?? ROUTED_DID, to, record: false, agentUrl: 'wss://agent.example/stream' });
  if (!('call' in result)) throw new Error(`place failed: ${JSON.stringify(result)}`);
  return result.call.id;
}

/** The live record of a call as the store has it (throws when unknown). */
export function recordOf(rig: CallRig, id: string): CallRecord {
  const r = rig.store.records.get(id);
  if (!r) throw new Error(`no record of ${id}`);
  return r;
}

/** Waits until the call's final record is written; returns it. */
export async function finalRecord(rig: CallRig, id: string): Promise<CallRecord> {
  await until(() => rig.store.final(id) !== undefined, `the final record of ${id}`);
  return rig.store.final(id)!;
}

/** An outbound call answered by the phone with its agent connected: the call's id, the phone's dialog and the agent's link. */
export async function answeredCall(rig: CallRig, tenantId: TenantId = TENANT): Promise<{ id: string; dialog: SessionDialog; link: FakeAgentLink }> {
  const before = rig.agents.links.length;
  const id = await placeCall(rig, tenantId);
  const invite = await rig.phone.invite(rig.phone.invites.length + 1);
  const dialog = invite.accept(rig.phone.sdp());
  if (!dialog) throw new Error('the phone could not answer');
  await until(() => rig.agents.links[before]?.started === true, 'the agent to connect');
  return { id, dialog, link: rig.agents.links[before]! };
}

/** A call from `phone` to the gateway, as a carrier would place it: what it heard, as it arrives. */
export interface GatewayDial {
  call: OutboundCall;
  provisional: number[];
  /** The final status, once there is one. */
  final: number | null;
  session: SessionDialog | null;
  answer: string;
}

/** The phone calls `did` at the gateway (an INVITE with its offer, or `sdp`). */
export function dialGateway(rig: CallRig, o: { did?: string; from?: string; sdp?: Buffer; phone?: Phone; headers?: [string, string][] } = {}): GatewayDial {
  const phone = o.phone ?? rig.phone;
  const call = phone.ua.invite({
    target: `sip:${o.did ?? ROUTED_DID}@127.0.0.1:${rig.uaPort}`, from: `sip:${o.from ?? '+15550123'}@127.0.0.1`, sdp: o.sdp ?? phone.sdp(),
    ...(o.headers ? { headers: o.headers } : {}),
  });
  const dial: GatewayDial = { call, provisional: [], final: null, session: null, answer: '' };
  call.events.on('progress', (r) => dial.provisional.push(r.status));
  call.events.on('accepted', (session, r) => Object.assign(dial, { final: r.status, session, answer: r.body.toString() }));
  call.events.on('failed', (status) => { dial.final = status; });
  return dial;
}

/** The only live call's id (an inbound call has no id the test could know before). */
export async function onlyCall(rig: CallRig): Promise<string> {
  await until(() => rig.store.records.size === 1, 'the call record');
  return [...rig.store.records.keys()][0]!;
}

/** What a {@link Call} needs, for tests of classes that take a call without an engine. */
export function callContext(): { clock: FakeClock; store: MemoryCallStore; logger: Logger } {
  return { clock: new FakeClock(), store: new MemoryCallStore(), logger: silentLogger() };
}
