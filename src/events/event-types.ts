/**
 * @module The events a tenant can subscribe to (docs/EVENTS.md "Event types") and the envelope
 * every one of them is delivered in, on a webhook endpoint, in the event log and on the stream.
 */

/** Every event type, in the order a call usually produces them. */
export const EVENT_TYPES = [
  'call.initiated', 'call.ringing', 'call.answered', 'call.hold', 'call.unhold',
  'call.transfer.started', 'call.transfer.connected', 'call.transfer.failed',
  'call.agent.connected', 'call.agent.failed', 'call.dtmf',
  'call.ended', 'call.recording.ready', 'call.transcript.ready',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** Delivered only to endpoints that name them: a busy IVR sends many. `*` does not include them. */
export const OPT_IN_EVENT_TYPES: ReadonlySet<EventType> = new Set(['call.dtmf']);

/** The version of the envelope and of `data`: a breaking change gets a new major. */
export const EVENTS_API_VERSION = '1.0.0';

export interface EventEnvelope<D = Record<string, unknown>> {
  /** `evt_…`: the same on every retry and redelivery, so a receiver can drop duplicates. */
  id: string;
  type: EventType;
  created_at: string;
  api_version: typeof EVENTS_API_VERSION;
  data: D;
}

export const isEventType = (value: string): value is EventType => (EVENT_TYPES as readonly string[]).includes(value);

/**
 * Whether an endpoint subscribed to `subscribed` (event types, or `*`) receives `type`: `*` is
 * every type but the opt-in ones, which are received only when named.
 */
export function subscribes(subscribed: readonly string[], type: EventType): boolean {
  if (subscribed.includes(type)) return true;
  return subscribed.includes('*') && !OPT_IN_EVENT_TYPES.has(type);
}
