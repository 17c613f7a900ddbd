/**
 * @module The sender (docs/EVENTS.md "Delivery", "Order", "Retries"): reads due deliveries from
 * storage and sends each with {@link EndpointSender}, signed with the endpoint's secrets in force.
 * Everything it knows is in storage, so a restart (a kill -9 included) resumes where it stopped:
 * a delivery in flight at the crash is sent again (at least once, same `VGW-Event-Id`). A call's
 * next event to an endpoint waits for the previous one (the storage query holds it back), and a
 * bounded number of deliveries is in flight per tenant and per endpoint: more to an endpoint whose
 * last attempt succeeded, fewer once one failed, so a dead endpoint soon holds two slots of its
 * tenant at most, and never delays another tenant's events. Several
 * senders (one per engine of a cluster) share the outbox: each claims what it sends, for longer
 * than an attempt can take, so a delivery is sent by one of them; a restarted sender drops the
 * claims of its previous run first, and another sender's run out when it dies. The one sender of
 * an outbox no other process sends from writes no claim: it checks that each delivery is still
 * due as it starts it, and knows what it has in flight.
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import { isoTime } from '../common/time.js';
import type { DeliveryState, DueDelivery, EventDeliveryRepository, EventRepository, WebhookEndpointRepository } from '../storage/index.js';
import { AttemptBook } from './attempt-book.js';
import { DELIVERY_TIMEOUT_MS, type DeliveryRequest, type DeliveryResult } from './endpoint-sender.js';
import { HeldDeliveries } from './held-deliveries.js';
import { InFlight, type EventSenderLimits } from './in-flight.js';
import { nextAttemptAt } from './retry-schedule.js';

export type { EventSenderLimits } from './in-flight.js';

export interface EventSenderOptions {
  deliveries: Pick<EventDeliveryRepository, 'scan' | 'dueOf' | 'nextOfCalls' | 'claim' | 'stillDue' | 'releaseClaims' | 'recordAttempts'>;
  /** This sender's name in its claims: the node id, the same across restarts. */
  nodeId: string;
  /**
   * No other process sends from this outbox (the `all` role, which owns its SQLite file alone):
   * what is in flight is known here, so a delivery is checked again as due before it is sent but
   * no claim is written for it.
   */
  ownsOutbox?: boolean;
  endpoints: Pick<WebhookEndpointRepository, 'secrets' | 'recordOutcome'>;
  events: Pick<EventRepository, 'deleteBefore'>;
  sender: { deliver(r: DeliveryRequest): Promise<DeliveryResult> };
  clock: Clock;
  logger: Logger;
  limits: EventSenderLimits;
  /** How often due deliveries are looked for besides {@link EventSender.wake}. */
  pollMs: number;
  /** Deliveries failed for good in a row that flag an endpoint. */
  flagAfter: number;
  retentionMs: number;
  random?: () => number;
  /** Told of each attempt once its outcome is written (the metrics). */
  observe?: (attempt: DeliveryAttempted) => void;
}

/** An attempt recorded: the delivery's state after it, and the time since the event was written or asked to be redelivered. */
export interface DeliveryAttempted {
  state: DeliveryState;
  sinceMs: number;
}

const RETENTION_EVERY_MS = 3_600_000;
/** A claim outlasts an attempt: the secrets' read, the delivery's time-out, the outcome's write. */
export const CLAIM_MS = 6 * DELIVERY_TIMEOUT_MS;
/** Deliveries read as due and kept for when there is room: a scan reads this many times `total`. */
const READ_AHEAD = 4;
/** Deliveries held at most (read as due, waiting for room). */
const MAX_HELD = 4_096;

export class EventSender {
  readonly #o: EventSenderOptions;
  readonly #inFlight: InFlight;
  readonly #book: AttemptBook;
  /**
   * Deliveries read as due and not sent yet, oldest first. They are not claimed until sent (so
   * other senders may take them meanwhile): the claim checks again that each is still due.
   */
  readonly #waiting = new HeldDeliveries();
  /** Events written since the last look (their `seq`), whose deliveries are read without a scan. */
  #fresh: number[] = [];
  /** Calls whose delivery to an endpoint ended: the next one may be due now. */
  #ended: { endpointId: string; callId: string }[] = [];
  /**
   * What the last scan left unread: `stale` when it is out of date (the timer: a retry's time may
   * have come; a start; an error), `truncated` when it stopped at its limit or what it read could
   * not all be held, and the endpoints (with their tenant) of which it read only its cap.
   */
  #unread: { stale: boolean; truncated: boolean; endpoints: Map<string, TenantId> } = { stale: true, truncated: false, endpoints: new Map() };
  /**
   * Deliveries answered whose outcome is not written yet: their slot is free (see {@link #attempt}),
   * but storage still reads them as pending, so they are kept from being read and started again.
   */
  readonly #unsettled = new Set<number>();
  readonly #attempts = new Set<Promise<void>>();
  #timer: TimerHandle | null = null;
  #working: Promise<void> | null = null;
  #again = false;
  #stopped = true;
  #lastRetention = -Infinity;
  #claimsReleased = false;

  constructor(options: EventSenderOptions) {
    this.#o = options;
    this.#inFlight = new InFlight(options.limits);
    this.#book = new AttemptBook(options.deliveries, options.endpoints, options.clock);
  }

  start(): void {
    this.#stopped = false;
    this.wake();
  }

  /** Looks for every due delivery now (a slot came free elsewhere, a retry's time may have come). */
  wake(): void {
    this.#unread.stale = true;
    this.#work();
  }

  /** An event was committed: its deliveries are read and sent, without a scan of the outbox. */
  offer(eventSeq: number): void {
    this.#fresh.push(eventSeq);
    this.#work();
  }

  /** Deliveries in flight now, or answered and their outcome not yet written. */
  get inFlight(): number {
    return this.#inFlight.size + this.#unsettled.size;
  }

  /** Stops looking for deliveries and waits for those in flight (each ends within its time-out). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = null;
    await this.#working;
    await Promise.allSettled([...this.#attempts]);
  }

  /** Runs {@link #look} once at a time; what is asked meanwhile runs right after. */
  #work(): void {
    if (this.#stopped) return;
    if (this.#working) {
      this.#again = true;
      return;
    }
    this.#working = this.#look().catch((err: unknown) => {
      this.#unread.stale = true;
      this.#o.logger.error({ err }, 'cannot read due event deliveries; trying again');
    }).finally(() => {
      this.#working = null;
      if (this.#again) {
        this.#again = false;
        this.#work();
      } else {
        this.#arm();
      }
    });
  }

  /** The next scan in `pollMs`, once armed not put off by what happens meanwhile (retries come due). */
  #arm(): void {
    if (this.#stopped || this.#timer) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = null;
      this.wake();
    }, this.#o.pollMs);
  }

  /**
   * Reads what may have become due (the deliveries of new events, the next ones of calls whose
   * delivery ended) and starts what fits; scans the outbox only when what it holds cannot fill
   * the room and a scan could find more (see {@link #scanWorthwhile}).
   */
  async #look(): Promise<void> {
    await this.#releasePreviousRun();
    await this.#trim();
    const { deliveries } = this.#o;
    if (this.#fresh.length > 0) this.#hold(await deliveries.dueOf(this.#fresh.splice(0)));
    if (this.#ended.length > 0) this.#hold(await deliveries.nextOfCalls(this.#ended.splice(0)));
    await this.#start();
    const { limits } = this.#o;
    const limit = READ_AHEAD * limits.total;
    while (!this.#stopped && !this.#inFlight.full && this.#scanWorthwhile()) {
      const { due, unread } = await deliveries.scan(limit, { perTenant: READ_AHEAD * limits.perTenant, perEndpoint: READ_AHEAD * this.#inFlight.mostPerEndpoint });
      this.#unread = { stale: false, truncated: due.length === limit, endpoints: unread };
      this.#hold(due);
      if (await this.#start() === 0) return;
    }
  }

  /**
   * Whether a scan could find a due delivery that would start now and is not held: when the
   * last one is out of date, when it stopped at its limit and little is held, or when an endpoint
   * it read only part of has room now (and its tenant too) with nothing of it held.
   */
  #scanWorthwhile(): boolean {
    const unread = this.#unread;
    if (unread.stale || (unread.truncated && this.#waiting.size < this.#o.limits.total)) return true;
    for (const [endpointId, tenantId] of unread.endpoints) if (this.#inFlight.fits({ tenant_id: tenantId, endpoint_id: endpointId })) return true;
    return false;
  }

  /** Keeps deliveries read as due until there is room for them; past its bound, a scan finds the rest. */
  #hold(due: readonly DueDelivery[]): void {
    for (const d of due) {
      if (this.#inFlight.has(d.id) || this.#unsettled.has(d.id)) continue;
      if (this.#waiting.size >= MAX_HELD && !this.#waiting.has(d)) {
        this.#unread.truncated = true;
        continue;
      }
      this.#waiting.hold(d);
    }
  }

  /** Claims and starts the held deliveries that fit; returns how many started. */
  async #start(): Promise<number> {
    const inFlight = this.#inFlight;
    const picked = this.#waiting.take((d) => inFlight.fits(d), (d) => inFlight.take(d), () => inFlight.full);
    if (picked.length === 0) return 0;
    let claimed: Set<number>;
    try {
      const ids = picked.map((d) => d.id);
      const { deliveries } = this.#o;
      claimed = await (this.#o.ownsOutbox ? deliveries.stillDue(ids) : deliveries.claim(ids, { by: this.#o.nodeId, forMs: CLAIM_MS }));
    } catch (err) {
      for (const d of picked) this.#inFlight.give(d);
      throw err;
    }
    // One not claimed was sent, claimed by another sender, or held back since: forgotten here.
    for (const d of picked) {
      if (claimed.has(d.id)) this.#launch(d);
      else this.#inFlight.give(d);
    }
    return claimed.size;
  }

  #launch(d: DueDelivery): void {
    const attempt = this.#attempt(d).catch((err: unknown) => {
      // Left pending in storage: tried again at the next scan.
      this.#unread.stale = true;
      this.#o.logger.error({ err, event_id: d.event_id, endpoint_id: d.endpoint_id }, 'an event delivery could not be recorded');
    }).finally(() => {
      this.#unsettled.delete(d.id);
      this.#attempts.delete(attempt);
      this.#work();
    });
    this.#attempts.add(attempt);
  }

  async #attempt(d: DueDelivery): Promise<void> {
    let result: DeliveryResult | undefined;
    try {
      const secrets = await this.#book.secrets(d.tenant_id, d.endpoint_id);
      if (!secrets) return;
      result = await this.#o.sender.deliver({ url: d.url, eventId: d.event_id, eventType: d.event_type, body: d.payload, secrets });
      this.#inFlight.answered(d.endpoint_id, result.ok);
    } finally {
      // The slot is free at the answer: another delivery starts while this outcome is written
      // with the others of this turn (AttemptBook), the call's next event waiting for it.
      this.#unsettled.add(d.id);
      this.#inFlight.give(d);
      this.#work();
    }
    const now = this.#o.clock.now();
    const next = result.ok ? null : nextAttemptAt(d.attempts + 1, now, Date.parse(d.window_started_at), this.#o.random);
    const state = await this.#book.record(d, {
      ok: result.ok, status: result.status, durationMs: result.durationMs, error: result.ok ? null : result.error,
      responseBody: result.responseBody, nextAttemptAt: next === null ? null : isoTime(next),
    });
    if (state) this.#o.observe?.({ state, sinceMs: now - Date.parse(d.window_started_at) });
    if (state === 'delivered' || state === 'failed') {
      if (d.call_id !== null) this.#ended.push({ endpointId: d.endpoint_id, callId: d.call_id });
      await this.#book.outcome(d.endpoint_id, state, this.#o.flagAfter);
    }
    if (state === 'failed') this.#o.logger.warn({ event_id: d.event_id, endpoint_id: d.endpoint_id, tenant_id: d.tenant_id, attempts: d.attempts + 1 }, 'event delivery failed for good');
  }

  /** Once per run: deliveries this node claimed before a crash are due again at once. */
  async #releasePreviousRun(): Promise<void> {
    if (this.#claimsReleased) return;
    const released = await this.#o.deliveries.releaseClaims(this.#o.nodeId);
    this.#claimsReleased = true;
    if (released > 0) this.#o.logger.info({ released }, 'deliveries in flight when this node stopped are sent again');
  }

  /** Deletes events past the retention, at most hourly. */
  async #trim(): Promise<void> {
    const now = this.#o.clock.now();
    if (now - this.#lastRetention < RETENTION_EVERY_MS) return;
    this.#lastRetention = now;
    const deleted = await this.#o.events.deleteBefore(isoTime(now - this.#o.retentionMs));
    if (deleted > 0) this.#o.logger.info({ deleted }, 'events past their retention deleted');
  }
}
