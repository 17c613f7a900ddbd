/**
 * @module What one sender has in flight, against its limits (docs/EVENTS.md "Delivery"): in all,
 * per tenant, and per endpoint, with more room for an endpoint whose last attempt succeeded than
 * for one whose last attempt failed, so a dead endpoint soon holds two slots of its tenant at most.
 */
import type { DueDelivery } from '../storage/index.js';

export interface EventSenderLimits {
  total: number;
  perTenant: number;
  /** Per endpoint whose last attempt failed. */
  perEndpoint: number;
  /** Per endpoint whose last attempt succeeded, or that has had none yet; at least `perEndpoint`. */
  perHealthyEndpoint: number;
}

type Slot = Pick<DueDelivery, 'id' | 'tenant_id' | 'endpoint_id'>;

export class InFlight {
  readonly #limits: EventSenderLimits;
  readonly #ids = new Set<number>();
  readonly #perTenant = new Map<string, number>();
  readonly #perEndpoint = new Map<string, number>();
  /** Endpoints whose last attempt from this sender failed. */
  readonly #struggling = new Set<string>();

  constructor(limits: EventSenderLimits) {
    this.#limits = limits;
  }

  get size(): number {
    return this.#ids.size;
  }

  get full(): boolean {
    return this.#ids.size >= this.#limits.total;
  }

  has(id: number): boolean {
    return this.#ids.has(id);
  }

  /** Whether `d` may start now: room in all, for its tenant, and for its endpoint. */
  fits(d: Pick<Slot, 'tenant_id' | 'endpoint_id'>): boolean {
    return !this.full && (this.#perTenant.get(d.tenant_id) ?? 0) < this.#limits.perTenant
      && (this.#perEndpoint.get(d.endpoint_id) ?? 0) < this.#endpointLimit(d.endpoint_id);
  }

  take(d: Slot): void {
    this.#ids.add(d.id);
    this.#perTenant.set(d.tenant_id, (this.#perTenant.get(d.tenant_id) ?? 0) + 1);
    this.#perEndpoint.set(d.endpoint_id, (this.#perEndpoint.get(d.endpoint_id) ?? 0) + 1);
  }

  give(d: Slot): void {
    if (!this.#ids.delete(d.id)) return;
    decrement(this.#perTenant, d.tenant_id);
    decrement(this.#perEndpoint, d.endpoint_id);
  }

  /** Notes an endpoint's last answer: its room follows it. */
  answered(endpointId: string, ok: boolean): void {
    if (ok) this.#struggling.delete(endpointId);
    else this.#struggling.add(endpointId);
  }

  /** The most an endpoint may have in flight: while its last attempt succeeded. */
  get mostPerEndpoint(): number {
    return Math.max(this.#limits.perEndpoint, this.#limits.perHealthyEndpoint);
  }

  #endpointLimit(endpointId: string): number {
    return this.#struggling.has(endpointId) ? this.#limits.perEndpoint : this.mostPerEndpoint;
  }
}

function decrement(counts: Map<string, number>, key: string): void {
  const n = (counts.get(key) ?? 1) - 1;
  if (n <= 0) counts.delete(key);
  else counts.set(key, n);
}
