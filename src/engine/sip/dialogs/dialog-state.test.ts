/** @module Table test of every (state, event) pair and edge of the dialog machine. */
import t from 'tap';
import { DIALOG_EDGES, DIALOG_EVENTS, DIALOG_STATES, nextDialogState, type DialogEvent, type DialogState } from './dialog-state.js';
import { assertEdge } from '../transactions/transaction-state.js';

const LEGAL: readonly (readonly [DialogState, DialogEvent, DialogState])[] = [
  ['Early', '1xx', 'Early'], ['Early', '2xx', 'Confirmed'], ['Early', '300-699', 'Terminated'], ['Early', 'BYE', 'Terminated'],
  ['Early', 'other-fork-2xx', 'Terminated'],
  ['Confirmed', '2xx', 'Confirmed'], ['Confirmed', 'BYE', 'Terminated'], ['Confirmed', 'ack-timeout', 'Terminated'],
  ['Confirmed', 'session-expired', 'Terminated'],
];

t.test('RFC 3261 12: every (state, event) pair of the dialog machine', (t) => {
  for (const s of DIALOG_STATES) {
    for (const e of DIALOG_EVENTS) {
      const row = LEGAL.find(([ls, le]) => ls === s && le === e);
      t.equal(nextDialogState(s, e), row?.[2], `${s} + ${e}`);
    }
  }
  t.end();
});

t.test('RFC 3261 12: every dialog state-to-state edge', (t) => {
  const edges = new Set(LEGAL.filter(([s, , to]) => s !== to).map(([s, , to]) => `${s}>${to}`));
  for (const from of DIALOG_STATES) {
    for (const to of DIALOG_STATES) {
      if (edges.has(`${from}>${to}`)) t.doesNotThrow(() => assertEdge('dialog', DIALOG_EDGES, from, to));
      else t.throws(() => assertEdge('dialog', DIALOG_EDGES, from, to), /illegal transition/);
    }
  }
  t.end();
});
