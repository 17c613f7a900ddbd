/** @module What an agent sends while its link is starting, kept in order until the media leg can play it. */

/** Agent events kept while the link starts (about 10 s of 20 ms chunks); beyond that, audio is dropped. */
const MAX_EVENTS = 500;

type AgentEvent = { kind: 'audio'; chunk: Buffer } | { kind: 'mark'; name: string } | { kind: 'clear' };

/** Where {@link AgentEventBacklog.replay} delivers the kept events. */
export interface AgentEventSink {
  audio(chunk: Buffer): void;
  mark(name: string): void;
  clear(): void;
}

/**
 * Agents may greet before the conversions are ready: their audio, marks and clears are kept in
 * arrival order and replayed once, so a mark still follows the audio it marks. Bounded: audio past
 * the limit is dropped; marks and clears are always kept, since an agent waits on its
 * marks and a clear only shortens what plays.
 */
export class AgentEventBacklog {
  readonly #events: AgentEvent[] = [];

  /** Keeps a copy of the chunk (the link may reuse its buffer); false when it was dropped, the backlog being full. */
  audio(chunk: Buffer): boolean {
    if (this.#events.length >= MAX_EVENTS) return false;
    this.#events.push({ kind: 'audio', chunk: Buffer.from(chunk) });
    return true;
  }

  mark(name: string): void {
    this.#events.push({ kind: 'mark', name });
  }

  clear(): void {
    this.#events.push({ kind: 'clear' });
  }

  /** Delivers every kept event in order and empties the backlog. */
  replay(sink: AgentEventSink): void {
    const events = this.#events.splice(0);
    for (const event of events) {
      if (event.kind === 'audio') sink.audio(event.chunk);
      else if (event.kind === 'mark') sink.mark(event.name);
      else sink.clear();
    }
  }
}
