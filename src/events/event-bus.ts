/**
 * @module The in-process bus of committed events (docs/EVENTS.md "Live stream"): the call store
 * publishes each write's events once its transaction commits; the live stream and the sender
 * listen. A listener that throws is logged and does not stop the others.
 */
import type { Logger } from '../common/logger.js';
import type { AppendedEvent } from '../storage/index.js';

export type EventListener = (event: AppendedEvent) => void;

export class EventBus {
  readonly #listeners = new Set<EventListener>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Adds a listener; returns what removes it. */
  subscribe(listener: EventListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  publish(events: readonly AppendedEvent[]): void {
    for (const event of events) {
      for (const listener of this.#listeners) {
        try {
          listener(event);
        } catch (err) {
          this.#logger.error({ err, event_id: event.id }, 'an event listener threw');
        }
      }
    }
  }
}
