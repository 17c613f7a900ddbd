/**
 * @module The shape every state machine of the gateway shares (docs/ARCHITECTURE.md, "State
 * machines"): a pure next-state function, the edge graph derived from it, and the checks that
 * throw {@link IllegalTransitionError}.
 */
import { IllegalTransitionError } from './errors.js';

/** A state machine's allowed state-to-state edges: `graph[from]` lists every legal `to`. */
export type EdgeGraph<S extends string> = Readonly<Record<S, readonly S[]>>;

/**
 * The edges a next-state function can take: `from -> to` for every event that moves `from` to
 * another state. Self-loops ("stay and act") and refused events (undefined) are no edges. Deriving
 * the graph keeps a machine's `transition(to)` check and its next-state function from drifting apart.
 */
export function deriveEdges<S extends string, E extends string>(
  states: readonly S[], events: readonly E[], next: (state: S, event: E) => S | undefined,
): EdgeGraph<S> {
  const graph = {} as Record<S, S[]>;
  for (const from of states) {
    const targets: S[] = [];
    for (const event of events) {
      const to = next(from, event);
      if (to !== undefined && to !== from && !targets.includes(to)) targets.push(to);
    }
    graph[from] = targets;
  }
  return graph;
}

/** True when the edge `from -> to` is in the graph (self-loops are never edges). */
export function isLegalEdge<S extends string>(graph: EdgeGraph<S>, from: S, to: S): boolean {
  return graph[from].includes(to);
}

/** Throws {@link IllegalTransitionError} unless `from -> to` is an edge of `graph`. */
export function assertEdge<S extends string>(machine: string, graph: EdgeGraph<S>, from: S, to: S): void {
  if (!isLegalEdge(graph, from, to)) throw new IllegalTransitionError({ machine, state: from, to });
}

/** Every event each state accepts and the state it leads to; an absent event is illegal there. */
export type TransitionTable<S extends string, E extends string> = Readonly<Record<S, Readonly<Partial<Record<E, S>>>>>;

/**
 * A pure next-state function over a table: the target of `event` in `state` (itself for "stay"),
 * or an {@link IllegalTransitionError} thrown for an event the state does not accept.
 */
export function nextStateFrom<S extends string, E extends string>(machine: string, table: TransitionTable<S, E>): (state: S, event: E) => S {
  return (state, event) => {
    const to = table[state][event];
    if (to === undefined) throw new IllegalTransitionError({ machine, state, event });
    return to;
  };
}
