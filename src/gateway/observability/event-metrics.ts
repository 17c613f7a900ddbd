/**
 * @module Prometheus metrics of the call events' sender (docs/API.md "Operational endpoints",
 * docs/EVENTS.md "Delivery"): what became of each attempt, how long an event took to reach its
 * endpoint, and how many deliveries are in flight. No endpoint, tenant or event id is a label.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { DeliveryAttempted } from '../../events/event-sender.js';

/** From an event to its delivery: milliseconds when endpoints keep up, up to the 24 h of retries. */
const DELAY_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21_600, 86_400];
const OUTCOMES = { delivered: 'delivered', pending: 'retrying', failed: 'failed' } as const;

/** Registers the metrics; the returned function is the sender's `observe`. */
export function createEventMetrics(metrics: Registry, inFlight: () => number): (attempt: DeliveryAttempted) => void {
  const attempts = new Counter({
    name: 'vgw_event_delivery_attempts_total',
    help: 'Webhook delivery attempts of call events by outcome: delivered (2xx), retrying (tried again later), failed (out of retries).',
    labelNames: ['outcome'], registers: [metrics],
  });
  for (const outcome of Object.values(OUTCOMES)) attempts.inc({ outcome }, 0);
  const delay = new Histogram({
    name: 'vgw_event_delivery_delay_seconds',
    help: 'From a call event written (or asked to be redelivered) to its endpoint\'s 2xx, retries included.',
    buckets: DELAY_BUCKETS, registers: [metrics],
  });
  new Gauge({
    name: 'vgw_event_deliveries_in_flight', help: 'Webhook deliveries of call events being sent by this process.', registers: [metrics],
    collect() {
      this.set(inFlight());
    },
  });
  return ({ state, sinceMs }) => {
    attempts.inc({ outcome: OUTCOMES[state] });
    if (state === 'delivered') delay.observe(sinceMs / 1000);
  };
}
