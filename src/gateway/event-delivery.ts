/**
 * @module The call events of an engine process (docs/EVENTS.md, docs/DECISIONS.md "Call events:
 * the sender runs with the engine"): the in-process bus the call store publishes to, and the
 * sender, woken by each commit and started at once so deliveries a previous run left are resumed,
 * and its metrics when given a registry.
 */
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { Config } from '../config/schema.js';
import { EndpointSender } from '../events/endpoint-sender.js';
import { EventBus } from '../events/event-bus.js';
import { EventSender } from '../events/event-sender.js';
import type { Store } from '../storage/index.js';
import { createEventMetrics } from './observability/event-metrics.js';
import { outboundPolicies } from './outbound-policies.js';

export interface EventDelivery {
  bus: EventBus;
  sender: EventSender;
  stop(): Promise<void>;
}

/**
 * `nodeId` names this process's sender in the claims it takes on a shared outbox; `ownsOutbox`
 * when no other process sends from it (the `all` role on its SQLite file), so it takes none.
 */
export function startEventDelivery(config: Readonly<Config>, store: Store, clock: Clock, logger: Logger, sender: { nodeId: string; ownsOutbox: boolean }, metrics?: Registry): EventDelivery {
  const events = config.events;
  const log = logger.child({ component: 'events' });
  const bus = new EventBus(log);
  // Endpoints pass the agent URLs' policy and its resolver (docs/SECURITY.md "Outbound addresses"),
  // which asks DNS without holding a thread, so one tenant's unanswered name delays nothing else.
  const endpoints = new EndpointSender({
    policy: outboundPolicies(config).agentUrls, allowHttp: events.allow_http, ...(events.ca_file ? { ca: readFileSync(events.ca_file, 'utf8') } : {}),
  });
  // Read at scrape time, once the sender below exists.
  const observe = metrics ? createEventMetrics(metrics, (): number => outbox.inFlight) : undefined;
  const outbox: EventSender = new EventSender({
    deliveries: store.eventDeliveries, ...sender, endpoints: store.webhookEndpoints, events: store.events, clock, logger: log, sender: endpoints,
    limits: { total: events.max_in_flight, perTenant: events.max_in_flight_per_tenant, perEndpoint: events.max_in_flight_per_endpoint, perHealthyEndpoint: events.max_in_flight_per_healthy_endpoint },
    pollMs: events.poll_ms, flagAfter: events.flag_after_failures, retentionMs: events.retention_days * 86_400_000,
    ...(observe ? { observe } : {}),
  });
  // An event written with no delivery (its tenant has no endpoint for it) has nothing to send.
  bus.subscribe((event) => {
    if (event.deliveries > 0) outbox.offer(event.seq);
  });
  outbox.start();
  const stop = async (): Promise<void> => {
    await outbox.stop();
    endpoints.close();
  };
  return { bus, sender: outbox, stop };
}
