/**
 * @module Deliveries read as due and not sent yet, kept by endpoint until there is room for them
 * (docs/EVENTS.md "Delivery"). An endpoint's deliveries share its tenant and its limits, so when
 * its oldest does not fit, none of them does: finding what fits costs one look per endpoint, not
 * one per delivery held, however many a burst of events leaves waiting.
 */
import type { DueDelivery } from '../storage/index.js';

export class HeldDeliveries {
  /** By endpoint, each in the order read (oldest first). */
  readonly #byEndpoint = new Map<string, Map<number, DueDelivery>>();
  #size = 0;

  get size(): number {
    return this.#size;
  }

  has(d: DueDelivery): boolean {
    return this.#byEndpoint.get(d.endpoint_id)?.has(d.id) ?? false;
  }

  /** Holds `d` (again: the newer read replaces the older). */
  hold(d: DueDelivery): void {
    let queue = this.#byEndpoint.get(d.endpoint_id);
    if (!queue) this.#byEndpoint.set(d.endpoint_id, (queue = new Map<number, DueDelivery>()));
    if (!queue.has(d.id)) this.#size++;
    queue.set(d.id, d);
  }

  /**
   * Takes, endpoint by endpoint, the oldest deliveries for which `fits` holds, telling `took` of
   * each at once (so `fits` sees the room it took), until `fits` fails for an endpoint or `full`.
   */
  take(fits: (d: DueDelivery) => boolean, took: (d: DueDelivery) => void, full: () => boolean): DueDelivery[] {
    const taken: DueDelivery[] = [];
    for (const [endpointId, queue] of this.#byEndpoint) {
      for (const d of queue.values()) {
        if (full() || !fits(d)) break;
        queue.delete(d.id);
        this.#size--;
        took(d);
        taken.push(d);
      }
      if (queue.size === 0) this.#byEndpoint.delete(endpointId);
      if (full()) break;
    }
    return taken;
  }
}
