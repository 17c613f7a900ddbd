/** @module Shared shape of the four RFC 3261 §17 state machines: edge graphs and the illegal-edge error. */
import { InvariantError } from '../../../common/errors.js';

/** A state machine's allowed state-to-state edges: `graph[from]` lists every legal `to`. */
export type EdgeGraph<S extends string> = Readonly<Record<S, readonly S[]>>;

/** Thrown by a machine's `transition(to)` when `to` is not reachable from its state: a bug. */
export class IllegalTransitionError extends InvariantError {
  readonly machine: string;
  readonly from: string;
  readonly to: string;

  constructor(machine: string, from: string, to: string) {
    super(`${machine}: illegal transition ${from} -> ${to}`);
    this.machine = machine;
    this.from = from;
    this.to = to;
  }
}

/** True when the edge `from -> to` is in the graph (self-loops are never edges). */
export function isLegalEdge<S extends string>(graph: EdgeGraph<S>, from: S, to: S): boolean {
  return graph[from].includes(to);
}

/** Throws {@link IllegalTransitionError} unless `from -> to` is an edge of `graph`. */
export function assertEdge<S extends string>(machine: string, graph: EdgeGraph<S>, from: S, to: S): void {
  if (!isLegalEdge(graph, from, to)) throw new IllegalTransitionError(machine, from, to);
}
