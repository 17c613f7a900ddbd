/**
 * @module The SIP trace of every call (docs/API.md "SIP trace of a call"): the transport layer's
 * tap hands over each message received and sent; the call layer names the SIP Call-ID of each of
 * a call's legs as it learns it (carrier, sip_trunk agent, transfer target). Messages are masked
 * (sip-trace-masking.ts) and kept per call in memory, the oldest dropped past
 * `max_bytes_per_call`; a call's trace is written to the database a few seconds after the call
 * ends (the answer to its BYE comes after the end), and read from memory until then.
 *
 * Messages seen before their Call-ID is claimed (the INVITE that creates the call arrives before
 * the call exists; an outbound INVITE may be sent before its attempt is reported) wait a short
 * time in a bounded pending buffer. Nothing here may throw into the SIP stack: the tap is guarded
 * by the transport layer, and failures are logged and counted.
 */
import type { Clock, TimerHandle } from '../../common/clock.js';
import type { TenantId } from '../../common/ids.js';
import type { Logger } from '../../common/logger.js';
import { isoTime } from '../../common/time.js';
import type { CallLegName, CallSipTrace } from '../../engine/calls/index.js';
import type { SipTraceEvent, SipTraceTap } from '../../engine/sip/index.js';
import type { SipTraceMessage, SipTraceRecord } from '../../storage/index.js';
import { maskSipMessage, sipCallIdOf } from './sip-trace-masking.js';

export interface SipTraceRecorderOptions {
  clock: Clock;
  logger: Logger;
  maxBytesPerCall: number;
  /** Writes a finished call's trace, not waited for; may throw or reject (counted and logged). */
  save(tenantId: TenantId, callId: string, trace: SipTraceRecord): void | Promise<void>;
  /** A trace entry or a trace write was lost. */
  onFailure?(what: 'record' | 'save'): void;
  /** Also told every message, masked (the HEP export); optional. */
  forward?(event: SipTraceEvent, text: string): void;
}

/** How long after the end a call's trace still takes messages (the BYE's answer, retransmissions). */
export const SIP_TRACE_GRACE_MS = 4_000;
/** How long messages of an unclaimed Call-ID wait for a call, and how many Call-IDs may wait. */
const PENDING_MS = 32_000;
const MAX_PENDING_IDS = 2_000;
const MAX_PENDING_BYTES = 65_536;

/** One message as kept: its text and where it went, not its bytes (the text is the copy kept). */
interface Entry {
  seq: number;
  at: number;
  direction: SipTraceEvent['direction'];
  protocol: SipTraceEvent['protocol'];
  source: SipTraceEvent['source'];
  destination: SipTraceEvent['destination'];
  sipCallId: string;
  text: string;
}

interface CallTrace {
  tenantId: TenantId;
  callId: string;
  legs: Map<string, CallLegName>;
  entries: Entry[];
  bytes: number;
  dropped: number;
  closing: TimerHandle | null;
}

interface Pending {
  firstAt: number;
  entries: Entry[];
  bytes: number;
}

const endpoint = (e: { address: string; port: number }): string => (e.address.includes(':') ? `[${e.address}]:${e.port}` : `${e.address}:${e.port}`);

export class SipTraceRecorder implements SipTraceTap, CallSipTrace {
  readonly #o: SipTraceRecorderOptions;
  readonly #bySipCallId = new Map<string, CallTrace>();
  readonly #calls = new Map<string, CallTrace>();
  /** In insertion order: the oldest first, so expiry looks at the head only. */
  readonly #pending = new Map<string, Pending>();
  #seq = 0;

  constructor(options: SipTraceRecorderOptions) {
    this.#o = options;
  }

  /** The transport layer's tap: one message received or sent. */
  message(event: SipTraceEvent): void {
    try {
      const raw = event.data.toString('utf8');
      const sipCallId = sipCallIdOf(raw);
      if (sipCallId === null) return;
      const text = maskSipMessage(raw);
      this.#o.forward?.(event, text);
      const entry: Entry = {
        seq: this.#seq++, at: event.at, direction: event.direction, protocol: event.protocol, source: event.source, destination: event.destination, sipCallId, text,
      };
      const trace = this.#bySipCallId.get(sipCallId);
      if (trace) this.#append(trace, [entry]);
      else this.#hold(entry);
    } catch (err) {
      this.#o.onFailure?.('record');
      this.#o.logger.warn({ err }, 'a SIP message could not be added to its call trace');
    }
  }

  attach(call: { tenantId: TenantId; id: string }, sipCallId: string, leg: CallLegName): void {
    const key = `${call.tenantId}/${call.id}`;
    let trace = this.#calls.get(key);
    if (!trace) {
      trace = { tenantId: call.tenantId, callId: call.id, legs: new Map(), entries: [], bytes: 0, dropped: 0, closing: null };
      this.#calls.set(key, trace);
    }
    if (trace.legs.has(sipCallId)) return;
    trace.legs.set(sipCallId, leg);
    this.#bySipCallId.set(sipCallId, trace);
    const waiting = this.#pending.get(sipCallId);
    if (waiting) {
      this.#pending.delete(sipCallId);
      this.#append(trace, waiting.entries);
    }
  }

  finish(call: { tenantId: TenantId; id: string }): void {
    const trace = this.#calls.get(`${call.tenantId}/${call.id}`);
    if (!trace || trace.closing) return;
    trace.closing = this.#o.clock.setTimeout(() => this.#close(trace), SIP_TRACE_GRACE_MS);
  }

  /** A live (or just ended) call's trace, from memory; undefined when it is not here. */
  read(tenantId: TenantId, callId: string): SipTraceRecord | undefined {
    const trace = this.#calls.get(`${tenantId}/${callId}`);
    return trace && this.#record(trace);
  }

  /** Writes every ended call's trace now (shutdown); live calls' traces are written when they end. */
  flush(): void {
    for (const trace of [...this.#calls.values()]) {
      if (trace.closing) {
        trace.closing.cancel();
        this.#close(trace);
      }
    }
  }

  #append(trace: CallTrace, entries: Entry[]): void {
    const out = trace.entries;
    const inOrder = out.length === 0 || entries.length === 0 || out[out.length - 1]!.seq < entries[0]!.seq;
    for (const entry of entries) {
      out.push(entry);
      trace.bytes += entry.text.length;
    }
    // Held messages of a Call-ID claimed late go back among the others, in the order they were seen.
    if (!inOrder) out.sort((a, b) => a.seq - b.seq);
    // The tail is kept: the end of a call is what a ticket is about.
    let drop = 0;
    while (trace.bytes > this.#o.maxBytesPerCall && drop < out.length - 1) trace.bytes -= out[drop++]!.text.length;
    if (drop > 0) {
      out.splice(0, drop);
      trace.dropped += drop;
    }
  }

  #hold(entry: Entry): void {
    const now = this.#o.clock.now();
    for (const [id, waiting] of this.#pending) {
      if (now - waiting.firstAt < PENDING_MS && this.#pending.size < MAX_PENDING_IDS) break;
      this.#pending.delete(id);
    }
    let waiting = this.#pending.get(entry.sipCallId);
    if (!waiting) {
      waiting = { firstAt: now, entries: [], bytes: 0 };
      this.#pending.set(entry.sipCallId, waiting);
    }
    // Out-of-call traffic (OPTIONS pings, a scanner) never gets a call: it only ever costs this bound.
    if (waiting.bytes + entry.text.length > MAX_PENDING_BYTES) return;
    waiting.entries.push(entry);
    waiting.bytes += entry.text.length;
  }

  #close(trace: CallTrace): void {
    this.#calls.delete(`${trace.tenantId}/${trace.callId}`);
    for (const id of trace.legs.keys()) this.#bySipCallId.delete(id);
    const failed = (err: unknown): void => {
      this.#o.onFailure?.('save');
      this.#o.logger.error({ err, call_id: trace.callId }, 'the SIP trace of a call could not be stored');
    };
    try {
      this.#o.save(trace.tenantId, trace.callId, this.#record(trace))?.catch(failed);
    } catch (err) {
      failed(err);
    }
  }

  #record(trace: CallTrace): SipTraceRecord {
    const messages: SipTraceMessage[] = trace.entries.map((e) => ({
      at: isoTime(e.at), direction: e.direction, transport: e.protocol, source: endpoint(e.source), destination: endpoint(e.destination),
      sip_call_id: e.sipCallId, leg: trace.legs.get(e.sipCallId) ?? 'carrier', text: e.text,
    }));
    return { legs: [...trace.legs].map(([sipCallId, leg]) => ({ leg, sip_call_id: sipCallId })), messages, dropped_messages: trace.dropped };
  }
}
