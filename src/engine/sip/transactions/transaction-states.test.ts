/** @module Table-driven tests of every (state, event) pair and every state-to-state edge of the four §17 machines. */
import t from 'tap';
import { nextInviteClientState, INVITE_CLIENT_STATES, INVITE_CLIENT_EVENTS, INVITE_CLIENT_EDGES } from './invite-client-transaction.js';
import { nextInviteServerState, INVITE_SERVER_STATES, INVITE_SERVER_EVENTS, INVITE_SERVER_EDGES } from './invite-server-transaction.js';
import { nextNonInviteClientState, NON_INVITE_CLIENT_STATES, NON_INVITE_CLIENT_EVENTS, NON_INVITE_CLIENT_EDGES } from './non-invite-client-transaction.js';
import { nextNonInviteServerState, NON_INVITE_SERVER_STATES, NON_INVITE_SERVER_EVENTS, NON_INVITE_SERVER_EDGES } from './non-invite-server-transaction.js';
import { IllegalTransitionError } from '../../../common/errors.js';
import { assertEdge, type EdgeGraph } from './transaction-state.js';

interface Machine<S extends string, E extends string> {
  name: string;
  states: readonly S[];
  events: readonly E[];
  edges: EdgeGraph<S>;
  next: (s: S, e: E) => S | undefined;
  /** Every accepted (state, event) → state; every pair not listed must be refused. */
  legal: readonly (readonly [S, E, S])[];
}

function checkMachine<S extends string, E extends string>(m: Machine<S, E>): void {
  t.test(`${m.name}: every (state, event) pair`, (t) => {
    for (const s of m.states) {
      for (const e of m.events) {
        const row = m.legal.find(([ls, le]) => ls === s && le === e);
        t.equal(m.next(s, e), row?.[2], `${s} + ${e} -> ${row ? row[2] : 'refused'}`);
      }
    }
    t.end();
  });
  t.test(`${m.name}: every state-to-state edge`, (t) => {
    const reached = new Set(m.legal.filter(([s, , to]) => s !== to).map(([s, , to]) => `${s}>${to}`));
    for (const from of m.states) {
      for (const to of m.states) {
        if (reached.has(`${from}>${to}`)) t.doesNotThrow(() => assertEdge(m.name, m.edges, from, to), `${from} -> ${to} legal`);
        else t.throws(() => assertEdge(m.name, m.edges, from, to), IllegalTransitionError, `${from} -> ${to} illegal`);
      }
    }
    t.end();
  });
}

checkMachine({
  name: 'RFC 3261 17.1.1 / RFC 6026 7.2 INVITE client',
  states: INVITE_CLIENT_STATES, events: INVITE_CLIENT_EVENTS, edges: INVITE_CLIENT_EDGES, next: nextInviteClientState,
  legal: [
    ['Calling', '1xx', 'Proceeding'], ['Calling', '2xx', 'Accepted'], ['Calling', '300-699', 'Completed'],
    ['Calling', 'timer-A', 'Calling'], ['Calling', 'timer-B', 'Terminated'], ['Calling', 'transport-error', 'Terminated'],
    ['Proceeding', '1xx', 'Proceeding'], ['Proceeding', '2xx', 'Accepted'], ['Proceeding', '300-699', 'Completed'],
    ['Proceeding', 'transport-error', 'Terminated'],
    ['Accepted', '2xx', 'Accepted'], ['Accepted', 'timer-M', 'Terminated'],
    ['Completed', '300-699', 'Completed'], ['Completed', 'timer-D', 'Terminated'], ['Completed', 'transport-error', 'Terminated'],
  ],
});

checkMachine({
  name: 'RFC 3261 17.2.1 / RFC 6026 7.1 INVITE server',
  states: INVITE_SERVER_STATES, events: INVITE_SERVER_EVENTS, edges: INVITE_SERVER_EDGES, next: nextInviteServerState,
  legal: [
    ['Proceeding', 'INVITE', 'Proceeding'], ['Proceeding', 'tu-1xx', 'Proceeding'], ['Proceeding', 'tu-2xx', 'Accepted'],
    ['Proceeding', 'tu-300-699', 'Completed'], ['Proceeding', 'transport-error', 'Terminated'],
    ['Accepted', 'INVITE', 'Accepted'], ['Accepted', 'ACK', 'Accepted'], ['Accepted', 'tu-2xx', 'Accepted'], ['Accepted', 'timer-L', 'Terminated'],
    ['Completed', 'INVITE', 'Completed'], ['Completed', 'timer-G', 'Completed'], ['Completed', 'ACK', 'Confirmed'],
    ['Completed', 'timer-H', 'Terminated'], ['Completed', 'transport-error', 'Terminated'],
    ['Confirmed', 'INVITE', 'Confirmed'], ['Confirmed', 'ACK', 'Confirmed'], ['Confirmed', 'timer-I', 'Terminated'],
  ],
});

checkMachine({
  name: 'RFC 3261 17.1.2 non-INVITE client',
  states: NON_INVITE_CLIENT_STATES, events: NON_INVITE_CLIENT_EVENTS, edges: NON_INVITE_CLIENT_EDGES, next: nextNonInviteClientState,
  legal: [
    ['Trying', '1xx', 'Proceeding'], ['Trying', '200-699', 'Completed'], ['Trying', 'timer-E', 'Trying'],
    ['Trying', 'timer-F', 'Terminated'], ['Trying', 'transport-error', 'Terminated'],
    ['Proceeding', '1xx', 'Proceeding'], ['Proceeding', '200-699', 'Completed'], ['Proceeding', 'timer-E', 'Proceeding'],
    ['Proceeding', 'timer-F', 'Terminated'], ['Proceeding', 'transport-error', 'Terminated'],
    ['Completed', '1xx', 'Completed'], ['Completed', '200-699', 'Completed'], ['Completed', 'timer-K', 'Terminated'],
  ],
});

checkMachine({
  name: 'RFC 3261 17.2.2 non-INVITE server',
  states: NON_INVITE_SERVER_STATES, events: NON_INVITE_SERVER_EVENTS, edges: NON_INVITE_SERVER_EDGES, next: nextNonInviteServerState,
  legal: [
    ['Trying', 'request', 'Trying'], ['Trying', 'tu-1xx', 'Proceeding'], ['Trying', 'tu-200-699', 'Completed'],
    ['Proceeding', 'request', 'Proceeding'], ['Proceeding', 'tu-1xx', 'Proceeding'], ['Proceeding', 'tu-200-699', 'Completed'],
    ['Proceeding', 'transport-error', 'Terminated'],
    ['Completed', 'request', 'Completed'], ['Completed', 'timer-J', 'Terminated'], ['Completed', 'transport-error', 'Terminated'],
  ],
});
