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
 * claims of its previous run first, and another sender's run out when it dies.
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { isoTime } from '../common/time.js';
import type { DueDelivery, EventDeliveryRepository, EventRepository, WebhookEndpointRepository } from '../storage/index.js';
import { DELIVERY_TIMEOUT_MS, type DeliveryRequest, type DeliveryResult } from './endpoint-sender.js';
import { nextAttemptAt } from './retry-schedule.js';

export interface EventSenderLimits {
  total: number;
  perTenant: number;
  /** Per endpoint whose last attempt failed. */
  perEndpoint: number;
  /** Per endpoint whose last attempt succeeded, or that has had none yet; at least `perEndpoint`. */
  perHealthyEndpoint: number;
}

export interface EventSenderOptions {
  deliveries: Pick<EventDeliveryRepository, 'claim' | 'releaseClaims' | 'recordAttempt'>;
  /** This sender's name in its claims: the node id, the same across restarts. */
  nodeId: string;
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
}

const RETENTION_EVERY_MS = 3_600_000;
/** A claim outlasts an attempt: the secrets' read, the delivery's time-out, the outcome's write. */
export const CLAIM_MS = 6 * DELIVERY_TIMEOUT_MS;

export class EventSender {
  readonly #o: EventSenderOptions;
  readonly #inFlight = new Map<number, DueDelivery>();
  readonly #perTenant = new Map<string, number>();
  readonly #perEndpoint = new Map<string, number>();
  /** Endpoints whose last attempt from this sender failed: they get `perEndpoint` slots. */
  readonly #struggling = new Set<string>();
  readonly #attempts = new Set<Promise<void>>();
  #timer: TimerHandle | null = null;
  #scanning: Promise<void> | null = null;
  #again = false;
  #stopped = true;
  #lastRetention = -Infinity;
  #claimsReleased = false;

  constructor(options: EventSenderOptions) {
    this.#o = options;
  }

  start(): void {
    this.#stopped = false;
    this.wake();
  }

  /** Looks for due deliveries now (new events were committed, or a slot came free). */
  wake(): void {
    if (this.#stopped) return;
    if (this.#scanning) {
      this.#again = true;
      return;
    }
    this.#scanning = this.#scan().catch((err: unknown) => {
      this.#o.logger.error({ err }, 'cannot read due event deliveries; trying again');
    }).finally(() => {
      this.#scanning = null;
      if (this.#again) {
        this.#again = false;
        this.wake();
      } else {
        this.#arm();
      }
    });
  }

  /** Deliveries in flight now. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /** Stops looking for deliveries and waits for those in flight (each ends within its time-out). */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    this.#timer = null;
    await this.#scanning;
    await Promise.allSettled([...this.#attempts]);
  }

  #arm(): void {
    if (this.#stopped) return;
    this.#timer?.cancel();
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = null;
      this.wake();
    }, this.#o.pollMs);
  }

  async #scan(): Promise<void> {
    await this.#releasePreviousRun();
    await this.#trim();
    const { limits } = this.#o;
    while (!this.#stopped && this.#inFlight.size < limits.total) {
      const due = await this.#o.deliveries.claim(limits.total - this.#inFlight.size, {
        deliveries: [...this.#inFlight.keys()],
        tenants: [...this.#perTenant].filter(([, n]) => n >= limits.perTenant).map(([id]) => id),
        endpoints: [...this.#perEndpoint].filter(([id, n]) => n >= this.#endpointLimit(id)).map(([id]) => id),
      }, { by: this.#o.nodeId, forMs: CLAIM_MS });
      const skipped: number[] = [];
      for (const delivery of due) {
        if (this.#inFlight.size >= limits.total
          || (this.#perTenant.get(delivery.tenant_id) ?? 0) >= limits.perTenant
          || (this.#perEndpoint.get(delivery.endpoint_id) ?? 0) >= this.#endpointLimit(delivery.endpoint_id)) skipped.push(delivery.id);
        else this.#launch(delivery);
      }
      // Over a limit within this batch: claimed but not sent, so free for the next scan (or another sender).
      if (skipped.length > 0) await this.#o.deliveries.releaseClaims(this.#o.nodeId, skipped);
      if (skipped.length === due.length) return;
    }
  }

  #endpointLimit(endpointId: string): number {
    const { perEndpoint, perHealthyEndpoint } = this.#o.limits;
    return this.#struggling.has(endpointId) ? perEndpoint : Math.max(perEndpoint, perHealthyEndpoint);
  }

  #launch(d: DueDelivery): void {
    this.#inFlight.set(d.id, d);
    this.#perTenant.set(d.tenant_id, (this.#perTenant.get(d.tenant_id) ?? 0) + 1);
    this.#perEndpoint.set(d.endpoint_id, (this.#perEndpoint.get(d.endpoint_id) ?? 0) + 1);
    const attempt = this.#attempt(d).catch((err: unknown) => {
      // Left pending in storage: tried again at the next scan.
      this.#o.logger.error({ err, event_id: d.event_id, endpoint_id: d.endpoint_id }, 'an event delivery could not be recorded');
    }).finally(() => {
      this.#inFlight.delete(d.id);
      this.#release(this.#perTenant, d.tenant_id);
      this.#release(this.#perEndpoint, d.endpoint_id);
      this.#attempts.delete(attempt);
      this.wake();
    });
    this.#attempts.add(attempt);
  }

  #release(counts: Map<string, number>, key: string): void {
    const n = (counts.get(key) ?? 1) - 1;
    if (n <= 0) counts.delete(key);
    else counts.set(key, n);
  }

  async #attempt(d: DueDelivery): Promise<void> {
    const secrets = await this.#o.endpoints.secrets(d.tenant_id, d.endpoint_id);
    if (!secrets) return;
    const result = await this.#o.sender.deliver({ url: d.url, eventId: d.event_id, eventType: d.event_type, body: d.payload, secrets });
    if (result.ok) this.#struggling.delete(d.endpoint_id);
    else this.#struggling.add(d.endpoint_id);
    const now = this.#o.clock.now();
    const next = result.ok ? null : nextAttemptAt(d.attempts + 1, now, Date.parse(d.window_started_at), this.#o.random);
    const state = await this.#o.deliveries.recordAttempt(d, {
      ok: result.ok, status: result.status, durationMs: result.durationMs, error: result.ok ? null : result.error,
      responseBody: result.responseBody, nextAttemptAt: next === null ? null : isoTime(next),
    });
    if (state === 'delivered' || state === 'failed') await this.#o.endpoints.recordOutcome(d.endpoint_id, state, this.#o.flagAfter);
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
