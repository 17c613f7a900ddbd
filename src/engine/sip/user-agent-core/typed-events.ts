/** @module A small typed event emitter for the layer's handles (calls, sessions, registrations). */

/** Maps event names to listener argument tuples. */
export type EventMap = Record<string, unknown[]>;

type Listener = (...args: unknown[]) => void;

/** Listeners by event name; a throwing listener is isolated from the others and from the stack. */
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
        // A listener's bug must not break the SIP state machines; surface it asynchronously.
        queueMicrotask(() => { throw err; });
      }
    }
  }

  /** Whether anyone listens to `name`. */
  has(name: keyof M): boolean {
    return (this.#listeners.get(name)?.length ?? 0) > 0;
  }
}
