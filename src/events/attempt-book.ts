/**
 * @module What the sender reads and writes around each attempt, at the cost of few statements
 * (docs/EVENTS.md "Delivery"): the outcomes of attempts answered within one turn of the event loop
 * are written together in one transaction (the sender frees an attempt's slot at its answer, so
 * only the call's next event waits for the write; the write of one outcome alone cost three times
 * its share of sixteen); an endpoint's secrets are read once a second at most (a rotation keeps
 * the old secret signing for 24 hours, so a second's delay changes nothing a receiver sees); and
 * a success is written to the endpoint (clearing its failures and its flag) once a second at most
 * while nothing failed, instead of once per delivery.
 */
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { AttemptOutcome, AttemptedDelivery, DeliveryState, EventDeliveryRepository, WebhookEndpointRepository } from '../storage/index.js';

/** How long what is read of an endpoint, or written of its successes, stands. */
export const ENDPOINT_CACHE_MS = 1_000;
/** Outcomes written at once without waiting for the turn to end. */
const MAX_BATCH = 64;

type Pending = { delivery: AttemptedDelivery; outcome: AttemptOutcome; resolve(state: DeliveryState | undefined): void; reject(err: unknown): void };

export class AttemptBook {
  readonly #deliveries: Pick<EventDeliveryRepository, 'recordAttempts'>;
  readonly #endpoints: Pick<WebhookEndpointRepository, 'secrets' | 'recordOutcome'>;
  readonly #clock: Clock;
  #batch: Pending[] = [];
  #writing = false;
  #scheduled = false;
  readonly #secrets = new Map<string, { at: number; secrets: Promise<string[] | undefined> }>();
  /** Endpoints whose last outcome written was a success, and when. */
  readonly #succeeded = new Map<string, number>();

  constructor(deliveries: Pick<EventDeliveryRepository, 'recordAttempts'>, endpoints: Pick<WebhookEndpointRepository, 'secrets' | 'recordOutcome'>, clock: Clock) {
    this.#deliveries = deliveries;
    this.#endpoints = endpoints;
    this.#clock = clock;
  }

  /** The endpoint's secrets in force (undefined: it is gone). */
  secrets(tenantId: TenantId, endpointId: string): Promise<string[] | undefined> {
    const now = this.#clock.now();
    const known = this.#secrets.get(`${tenantId} ${endpointId}`);
    if (known && now - known.at < ENDPOINT_CACHE_MS) return known.secrets;
    const secrets = this.#endpoints.secrets(tenantId, endpointId);
    this.#secrets.set(`${tenantId} ${endpointId}`, { at: now, secrets });
    // A failed read is not kept.
    secrets.catch(() => this.#secrets.delete(`${tenantId} ${endpointId}`));
    if (this.#secrets.size > 4_096) this.#secrets.delete(this.#secrets.keys().next().value!);
    return secrets;
  }

  /**
   * Records the attempt with the others answered in the same turn of the event loop (or, while a
   * write is under way, with those answered meanwhile); resolves to the delivery's new state.
   */
  record(delivery: AttemptedDelivery, outcome: AttemptOutcome): Promise<DeliveryState | undefined> {
    return new Promise((resolve, reject) => {
      this.#batch.push({ delivery, outcome, resolve, reject });
      if (this.#writing) return;
      if (this.#batch.length >= MAX_BATCH) void this.#flush();
      else if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          if (!this.#writing) void this.#flush();
        });
      }
    });
  }

  /** Counts a delivery that ended on the endpoint (see WebhookEndpointRepository.recordOutcome). */
  async outcome(endpointId: string, state: 'delivered' | 'failed', flagAfter: number): Promise<void> {
    const now = this.#clock.now();
    if (state === 'delivered') {
      const since = this.#succeeded.get(endpointId);
      if (since !== undefined && now - since < ENDPOINT_CACHE_MS) return;
      this.#succeeded.set(endpointId, now);
      if (this.#succeeded.size > 4_096) this.#succeeded.delete(this.#succeeded.keys().next().value!);
    } else {
      this.#succeeded.delete(endpointId);
    }
    await this.#endpoints.recordOutcome(endpointId, state, flagAfter);
  }

  async #flush(): Promise<void> {
    this.#writing = true;
    while (this.#batch.length > 0) {
      const batch = this.#batch;
      this.#batch = [];
      try {
        const states = await this.#deliveries.recordAttempts(batch.map(({ delivery, outcome }) => ({ delivery, outcome })));
        batch.forEach((p, i) => p.resolve(states[i]));
      } catch (err) {
        for (const p of batch) p.reject(err);
      }
    }
    this.#writing = false;
  }
}
