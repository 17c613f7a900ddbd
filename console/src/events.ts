/**
 * @module The event stream `GET /v1/events/stream` (docs/CONSOLE.md "Live calls") with the
 * browser's EventSource: the session cookie goes with it, the browser reconnects on its own and
 * sends Last-Event-ID; `: keepalive` comments never reach the handlers.
 */
import type { CallEvent } from './types.js';

export const CALL_EVENT_TYPES = ['call.initiated', 'call.ringing', 'call.answered', 'call.hold', 'call.unhold', 'call.ended', 'call.transfer'] as const;

export interface StreamHandlers {
  onEvent(event: CallEvent): void;
  /** Whether the stream is connected (false while the browser retries). */
  onStatus(connected: boolean): void;
}

/** Opens the stream of `call.*` events (of one call when `callId` is given); returns its closer. */
export function subscribeCallEvents(handlers: StreamHandlers, callId?: string): () => void {
  const search = new URLSearchParams({ type: 'call.*' });
  if (callId) search.set('call_id', callId);
  const source = new EventSource(`/v1/events/stream?${search.toString()}`, { withCredentials: true });
  const receive = (message: MessageEvent<string>): void => {
    try {
      const event = JSON.parse(message.data) as CallEvent;
      if (event.data?.call?.id) handlers.onEvent(event);
    } catch {
      // a message that is not an event of this contract is ignored
    }
  };
  // Named events (`event: call.hold`) are not delivered to onmessage: listen to each call type,
  // and to unnamed messages for types added later.
  for (const type of CALL_EVENT_TYPES) source.addEventListener(type, receive);
  source.onmessage = receive;
  source.onopen = () => handlers.onStatus(true);
  source.onerror = () => handlers.onStatus(false);
  return () => source.close();
}
