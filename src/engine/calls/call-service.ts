/**
 * @module The engine's side of CallControl: admission (carrier, limits, media ports, draining),
 * then the outbound flow; commands on live calls through the registry; ended calls answer
 * `call_not_active`, unknown or foreign ones `not_found`.
 */
import type { TenantId } from '../../common/ids.js';
import { Call, type CallContext } from './call.js';
import type { CallRecord } from './call-record.js';
import type { CallCommandFailure, CallCommandResult, CallControl, PlaceCallRequest } from './call-control.js';
import { CallRegistry, type LiveCall } from './call-registry.js';
import type { CarrierProfile } from './setup/carrier-profile.js';
import type { LegMedia } from './setup/leg-media.js';
import { OutboundCallFlow, type OutboundAgent, type OutboundFlowDeps } from './setup/outbound-call-flow.js';
import { InboundCallFlow, type InboundFlowDeps } from './setup/inbound-call-flow.js';
import type { CallerIdDirectory, ClusterAdmission, InboundRoute } from './ports.js';
import { admitInCluster, withClusterUpdates } from './cluster-admission.js';
import { isCallerIdAllowed } from './setup/caller-id-policy.js';
import { callerIdentity } from './setup/caller-identity.js';
import { carriedHeaders } from './setup/carried-headers.js';
import { toE164, uriUser } from './setup/dialled-number.js';
import type { InboundCall, SipRequest, SipSource } from '../sip/index.js';
import type { CallSessionSnapshot } from './session-snapshot.js';

/** What the call service uses: the carriers and routes that admit a call, its first RTP port, and what each call and flow needs. */
export interface CallServiceDeps {
  /** Where each call's record is written, on which clock, with which logger. */
  calls: CallContext;
  carriers: ReadonlyMap<string, CarrierProfile>;
  /**
   * The carrier an INVITE belongs to (`inbound.sources`, docs/CONFIGURATION.md): by its source address,
   * or the one a trusted edge proxy forwarded (docs/ARCHITECTURE.md "Trusted edge proxies").
   */
  carrierForSource(source: SipSource, request: SipRequest): CarrierProfile | undefined;
  /** The live route of a DID on a carrier, or undefined (unrouted or released). */
  routeFor(did: string, carrier: string): Promise<InboundRoute | undefined>;
  /** The tenants' held numbers and verified caller IDs, for the carriers' caller-ID policy. */
  callerIds: CallerIdDirectory;
  /** Whether inbound calls are recorded (media_bridge and sip_trunk alike). */
  recordInbound: boolean;
  media: LegMedia;
  outbound: OutboundFlowDeps;
  inbound: InboundFlowDeps;
}

export interface CallServiceOptions {
  /** Live calls a tenant may have at once (docs/API.md "Errors": 429 `concurrency_limit`). */
  maxConcurrentPerTenant: number;
  /** Whether the gateway is draining: no new calls. */
  isDraining(): boolean;
  /** `shutdown.drain_seconds`: the Retry-After of an INVITE refused while draining. */
  drainSeconds: number;
  /** `cluster.capacity`: live calls this engine takes at most (docs/CLUSTER.md "Drain"); no limit when absent. */
  capacity?: number;
  /** Told of every call's final record (metrics). */
  onCallEnded?(call: CallRecord): void;
  /** The limits across every engine (docs/CLUSTER.md "Live state in Redis"); absent on a single process. */
  cluster?: ClusterAdmission;
}

/** Seconds a client is told to wait after a concurrency refusal: calls end in seconds to minutes. */
const CONCURRENCY_RETRY_AFTER_S = 5;

/**
 * Marks a 503 as the call's own (a tenant's or carrier's limit), not this engine's: the SIP edge
 * relays it to the carrier instead of trying another engine, which would refuse it too
 * (docs/CLUSTER.md "Drain"). A 503 without it is node-level: draining, at capacity.
 */
const CALL_SCOPE: [string, string] = ['X-VGW-Scope', 'call'];

export class CallService implements CallControl {
  readonly registry = new CallRegistry();
  readonly #deps: CallServiceDeps;
  readonly #o: CallServiceOptions;
  /** The calls' context; with a cluster, each saved record also updates the call's live entry. */
  readonly #calls: CallContext;
  /** Admissions between the limit check and the registry (an RTP port is being opened). */
  readonly #admitting = new Map<string, number>();

  constructor(deps: CallServiceDeps, options: CallServiceOptions) {
    this.#deps = deps;
    this.#o = options;
    this.#calls = withClusterUpdates(deps.calls, options.cluster);
  }

  carrierNames(): readonly string[] {
    return [...this.#deps.carriers.keys()];
  }

  async place(request: PlaceCallRequest): Promise<CallCommandResult> {
    const carrier = this.#deps.carriers.get(request.carrier);
    if (!carrier) return { error: 'unknown_carrier' };
    if (!(await isCallerIdAllowed(carrier, request.tenantId, request.from, this.#deps.callerIds))) return { error: 'caller_id_not_allowed' };
    if (this.#o.isDraining()) return { error: 'unavailable', detail: 'The gateway is shutting down.' };
    if (this.#atCapacity()) return { error: 'unavailable', detail: 'This engine is at its capacity of live calls.' };
    if (!carrier.outboundUri) return { error: 'carrier_unavailable', detail: `Carrier "${carrier.name}" takes no outbound calls.` };
    const full = this.#admissionRefused(request.tenantId, carrier.name, carrier.maxConcurrentCalls);
    if (full) return full;
    const agent: OutboundAgent = request.agentId !== undefined
      ? { kind: 'imported', agentId: request.agentId, mode: request.agentMode ?? 'media_bridge' }
      : { kind: 'websocket', url: request.agentUrl ?? '' };
    // The record is made before media so the cluster can count it; it is stored once media is open.
    const call = new Call({
      tenantId: request.tenantId, direction: 'outbound', from: request.from, to: request.to, carrier: carrier.name, record: request.record,
      agent: agent.kind === 'imported' ? { type: 'imported', agentId: agent.agentId } : { type: 'websocket', url: agent.url },
      machineDetection: request.machineDetection, onMachine: request.onMachine, waitForBeep: request.waitForBeep,
      ...(request.customParameters ? { customParameters: request.customParameters } : {}),
    }, this.#calls);
    this.#bumpAdmitting(request.tenantId, carrier.name, 1);
    let rtp;
    try {
      const refused = await admitInCluster(this.#o.cluster, call, carrier, this.#o.maxConcurrentPerTenant, CONCURRENCY_RETRY_AFTER_S);
      if (refused) return refused;
      rtp = await this.#deps.media.open(carrier);
    } finally {
      this.#bumpAdmitting(request.tenantId, carrier.name, -1);
    }
    if (!rtp) {
      this.#o.cluster?.release(call.id);
      return { error: 'unavailable', detail: 'No media ports are free.' };
    }
    try {
      await this.#calls.store.insert(call.snapshot());
    } catch (err) {
      // The call could not be recorded (storage unavailable): nothing was placed; the API answers 503.
      rtp.close();
      this.#o.cluster?.release(call.id);
      throw err;
    }
    const flow = new OutboundCallFlow(this.#deps.outbound, call, carrier, rtp, agent, request.sipHeaders);
    this.#track(flow);
    call.log.info({ carrier: carrier.name }, 'placing outbound call');
    void flow.run();
    return { call: call.snapshot() };
  }

  /**
   * An INVITE from a carrier (its source already allowed): the dialled number, read where the
   * carrier puts it and normalized to E.164, must have a live route (else 404 Not Found); the
   * tenant and the carrier must be under their limits and media ports free (else 503, RFC 3261
   * 21.5.4, so the carrier may try another route).
   */
  async acceptInbound(invite: InboundCall): Promise<void> {
    const carrier = this.#deps.carrierForSource(invite.source, invite.request);
    if (!carrier) return invite.reject(403);
    const dialled = carrier.didFrom === 'to' ? invite.request.headers.get('To') ?? '' : invite.request.uri;
    const did = toE164(uriUser(dialled), carrier);
    const route = did ? await this.#deps.routeFor(did, carrier.name) : undefined;
    const log = this.#deps.calls.logger.child({ carrier: carrier.name, did: did ?? uriUser(dialled) });
    if (!did || !route) {
      log.info('inbound call to an unrouted number');
      return invite.reject(404);
    }
    if (this.#o.isDraining()) {
      log.warn({ tenant_id: route.tenantId }, 'inbound call refused: draining');
      // RFC 3261 21.5.4 and RFC 3263 4.3: a proxy or carrier tries another node, and leaves this one
      // alone for the drain time, after which this process is gone.
      return invite.reject(503, undefined, [['Retry-After', String(this.#o.drainSeconds)]]);
    }
    if (this.#atCapacity()) {
      log.warn({ tenant_id: route.tenantId, capacity: this.#o.capacity }, 'inbound call refused: this engine is at capacity');
      return invite.reject(503, undefined, [['Retry-After', String(CONCURRENCY_RETRY_AFTER_S)]]);
    }
    if (this.#admissionRefused(route.tenantId, carrier.name, carrier.maxConcurrentCalls)) {
      log.warn({ tenant_id: route.tenantId }, 'inbound call refused: over a concurrency limit');
      return invite.reject(503, undefined, [['Retry-After', String(CONCURRENCY_RETRY_AFTER_S)], CALL_SCOPE]);
    }
    const caller = callerIdentity(invite.request, carrier);
    // The record is made before media so the cluster can count it; it is stored once media is open.
    const call = new Call({
      tenantId: route.tenantId, direction: 'inbound', from: caller.number, callerPrivacy: caller.private, verification: caller.verification, to: did,
      sipHeaders: carriedHeaders(invite.request, carrier.carryHeaders ?? []), carrier: carrier.name, record: this.#deps.recordInbound, agent: { type: 'imported', agentId: route.agentId },
    }, this.#calls);
    this.#bumpAdmitting(route.tenantId, carrier.name, 1);
    let rtp;
    try {
      if (await admitInCluster(this.#o.cluster, call, carrier, this.#o.maxConcurrentPerTenant, CONCURRENCY_RETRY_AFTER_S)) {
        log.warn({ tenant_id: route.tenantId }, 'inbound call refused: over a concurrency limit across the cluster');
        return invite.reject(503, undefined, [['Retry-After', String(CONCURRENCY_RETRY_AFTER_S)], CALL_SCOPE]);
      }
      rtp = await this.#deps.media.open(carrier);
    } finally {
      this.#bumpAdmitting(route.tenantId, carrier.name, -1);
    }
    if (!rtp || invite.isFinal) {
      rtp?.close();
      this.#o.cluster?.release(call.id);
      return rtp ? undefined : invite.reject(503);
    }
    try {
      await this.#calls.store.insert(call.snapshot());
    } catch (err) {
      // A call that cannot be recorded is not taken: 503, so the carrier may try another route (RFC 3261 21.5.4).
      log.error({ err, tenant_id: route.tenantId }, 'inbound call refused: the call record cannot be written');
      rtp.close();
      this.#o.cluster?.release(call.id);
      return invite.reject(503);
    }
    call.traceSip(invite.callId, 'carrier');
    const flow = new InboundCallFlow(this.#deps.inbound, call, invite, carrier, route, rtp);
    this.#track(flow);
    call.log.info({ carrier: carrier.name, mode: route.connectionMode, transport: invite.source.protocol }, 'inbound call');
    await flow.run();
  }

  hold(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    return this.#command(tenantId, this.registry.get(tenantId, callId), callId, (live) => live.hold());
  }

  unhold(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    return this.#command(tenantId, this.registry.get(tenantId, callId), callId, (live) => live.unhold());
  }

  sendDigits(tenantId: TenantId, callId: string, digits: string): Promise<CallCommandResult> {
    return this.#command(tenantId, this.registry.get(tenantId, callId), callId, (live) => live.sendDigits(digits));
  }

  async hangup(tenantId: TenantId, callId: string): Promise<CallCommandResult> {
    const live = this.registry.get(tenantId, callId);
    if (!live) return this.#notLive(tenantId, callId);
    await live.hangup();
    return { call: live.call.snapshot() };
  }

  async transfer(tenantId: TenantId, callControlId: string, to: string): Promise<CallCommandResult> {
    const live = this.registry.byControlId(tenantId, callControlId);
    if (!live) {
      const stored = await this.#deps.calls.store.getByControlId(tenantId, callControlId);
      return stored ? { error: 'call_not_active' } : { error: 'not_found' };
    }
    return this.#command(tenantId, live, live.call.id, (l) => (l.call.snapshot().state === 'active' ? l.transfer(to) : { error: 'call_not_active' }));
  }

  sessionOf(tenantId: TenantId, callId: string): CallSessionSnapshot | null {
    return this.registry.get(tenantId, callId)?.session() ?? null;
  }

  /** Hangs up every live call (gateway shutdown), waiting for each to end. */
  async shutdown(): Promise<void> {
    await Promise.all(this.registry.all().map((live) => live.shutdown()));
  }

  #track(live: LiveCall): void {
    this.registry.add(live);
    live.call.onEnd((call) => this.#o.onCallEnded?.(call.snapshot()));
  }

  async #command(tenantId: TenantId, live: LiveCall | undefined, callId: string, act: (live: LiveCall) => CallCommandFailure | null): Promise<CallCommandResult> {
    if (!live) return this.#notLive(tenantId, callId);
    const failure = act(live);
    return failure ?? { call: live.call.snapshot() };
  }

  /** An ended call of the tenant is a state conflict; anything else is unknown to this tenant. */
  async #notLive(tenantId: TenantId, callId: string): Promise<CallCommandFailure> {
    return (await this.#deps.calls.store.get(tenantId, callId)) ? { error: 'call_not_active' } : { error: 'not_found' };
  }

  #admissionRefused(tenantId: string, carrier: string, carrierLimit: number): CallCommandFailure | null {
    const tenant = this.registry.countForTenant(tenantId) + (this.#admitting.get(`t:${tenantId}`) ?? 0);
    const onCarrier = this.registry.countOnCarrier(carrier) + (this.#admitting.get(`c:${carrier}`) ?? 0);
    if (tenant >= this.#o.maxConcurrentPerTenant || onCarrier >= carrierLimit) {
      return { error: 'concurrency_limit', retryAfterSeconds: CONCURRENCY_RETRY_AFTER_S };
    }
    return null;
  }

  /** Live calls plus those being admitted (counted once, under their tenant) at `capacity`. */
  #atCapacity(): boolean {
    const capacity = this.#o.capacity;
    if (capacity === undefined) return false;
    let admitting = 0;
    for (const [key, n] of this.#admitting) if (key.startsWith('t:')) admitting += n;
    return this.registry.size + admitting >= capacity;
  }

  #bumpAdmitting(tenantId: string, carrier: string, by: number): void {
    for (const key of [`t:${tenantId}`, `c:${carrier}`]) {
      const n = (this.#admitting.get(key) ?? 0) + by;
      if (n > 0) this.#admitting.set(key, n);
      else this.#admitting.delete(key);
    }
  }
}
