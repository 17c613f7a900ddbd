/** @module A small typed event emitter for the layer's handles (calls, sessions, registrations). */

/** Maps event names to listener argument tuples. */
export type EventMap = Record<string, unknown[]>;

type Listener = (...args: unknown[]) => void;

/** Told of a listener that threw: the event's name and the error. */
export type ListenerErrorReporter = (event: string, err: unknown) => void;

/** Until the process installs its logger: one line on stderr, never a throw. */
const stderrReporter: ListenerErrorReporter = (event, err) => {
  process.stderr.write(`an event listener threw on "${event}" (contained): ${(err as Error)?.stack ?? String(err)}\n`);
};
let reporter: ListenerErrorReporter = stderrReporter;

/**
 * Where a throwing listener is reported (docs/RELIABILITY.md "Ending a call"): the gateway
 * installs its logger at start and restores the previous reporter with the returned function.
 */
export function reportListenerErrors(to: ListenerErrorReporter): () => void {
  const previous = reporter;
  reporter = to;
  return () => {
    if (reporter === to) reporter = previous;
  };
}

/**
 * Listeners by event name; a throwing listener is isolated from the others, from the stack that
 * emitted and from the process: its error is reported (see {@link reportListenerErrors}) and
 * goes no further, so one listener's bug never ends the other calls.
 */
export class TypedEvents<M extends EventMap> {
  readonly #listeners = new Map<keyof M, Listener[]>();

  /** Adds a listener; returns a function that removes it. */
  on<K extends keyof M>(name: K, listener: (...args: M[K]) => void): () => void {
    const list = this.#listeners.get(name) ?? [];
    const stored = listener as unknown as Listener;
    list.push(stored);
    this.#listeners.set(name, list);
    return () => {
      const l = this.#listeners.get(name);
      if (l) this.#listeners.set(name, l.filter((x) => x !== stored));
    };
  }

  /** Calls every listener of `name` with `args`. @internal */
  emit<K extends keyof M>(name: K, ...args: M[K]): void {
    for (const l of this.#listeners.get(name) ?? []) {
      try {
        l(...(args as unknown[]));
      } catch (err) {
        // A listener's bug must break neither the SIP state machines nor the process.
        try {
          reporter(String(name), err);
        } catch {
          // A reporter that throws (a closed log stream) has nowhere left to report to.
        }
      }
    }
  }

  /** Whether anyone listens to `name`. */
  has(name: keyof M): boolean {
    return (this.#listeners.get(name)?.length ?? 0) > 0;
  }
}
