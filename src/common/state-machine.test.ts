/** @module The one illegal-transition error of every machine (docs/ARCHITECTURE.md, "State machines") and the helpers that throw it. */
import t from 'tap';
import { IllegalTransitionError, InvariantError } from './errors.js';
import { assertEdge, deriveEdges, nextStateFrom } from './state-machine.js';

type S = 'a' | 'b' | 'c';
type E = 'go' | 'stay' | 'stop';
const next = (s: S, e: E): S | undefined => (e === 'stay' ? s : e === 'go' ? (s === 'a' ? 'b' : undefined) : s === 'c' ? undefined : 'c');

t.test('State machines: the edge graph is derived from the next-state function, without self-loops or refused events', (t) => {
  t.same(deriveEdges<S, E>(['a', 'b', 'c'], ['go', 'stay', 'stop'], next), { a: ['b', 'c'], b: ['c'], c: [] });
  t.end();
});

t.test('State machines: an edge the graph lacks throws IllegalTransitionError naming machine, state and target', (t) => {
  const graph = deriveEdges<S, E>(['a', 'b', 'c'], ['go', 'stay', 'stop'], next);
  t.doesNotThrow(() => assertEdge('M', graph, 'a', 'b'));
  const err = t.throws(() => assertEdge('M', graph, 'c', 'a')) as unknown;
  t.ok(err instanceof IllegalTransitionError, 'one error type');
  t.ok(err instanceof InvariantError, 'a bug, not a client error');
  const e = err as IllegalTransitionError;
  t.match({ name: e.name, machine: e.machine, state: e.state, to: e.to, event: e.event }, { name: 'IllegalTransitionError', machine: 'M', state: 'c', to: 'a', event: undefined });
  t.equal(e.message, 'M: illegal transition c -> a');
  t.end();
});

t.test('State machines: an event the table lacks throws IllegalTransitionError naming machine, state and event', (t) => {
  const step = nextStateFrom<S, E>('M', { a: { go: 'b', stay: 'a' }, b: { stop: 'c' }, c: {} });
  t.equal(step('a', 'go'), 'b');
  t.equal(step('a', 'stay'), 'a');
  const e = t.throws(() => step('c', 'go')) as unknown as IllegalTransitionError;
  t.ok(e instanceof IllegalTransitionError);
  t.match({ machine: e.machine, state: e.state, event: e.event, to: e.to }, { machine: 'M', state: 'c', event: 'go', to: undefined });
  t.equal(e.message, 'M: illegal transition on "go" in c');
  t.end();
});

