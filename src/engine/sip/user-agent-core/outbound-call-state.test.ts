/** @module Table test of every (state, event) pair of the UAC INVITE machine (RFC 3261 §13.2, §9.1). */
import t from 'tap';
import { IllegalTransitionError } from '../../../common/errors.js';
import {
  isFinalOutboundCallState, nextOutboundCallState, OUTBOUND_CALL_EVENTS, OUTBOUND_CALL_STATES,
  type OutboundCallEvent, type OutboundCallState,
} from './outbound-call-state.js';

const LEGAL: readonly (readonly [OutboundCallState, OutboundCallEvent, OutboundCallState])[] = [
  ['Calling', 'provisional', 'Proceeding'], ['Calling', 'cancel', 'CancelPending'], ['Calling', 'retry', 'Calling'],
  ['Calling', '2xx', 'Accepted'], ['Calling', 'failure', 'Failed'],
  ['CancelPending', 'provisional', 'Cancelling'], ['CancelPending', 'cancel', 'CancelPending'], ['CancelPending', 'retry', 'CancelPending'],
  ['CancelPending', '2xx', 'Accepted'], ['CancelPending', 'failure', 'Failed'],
  ['Proceeding', 'provisional', 'Proceeding'], ['Proceeding', 'cancel', 'Cancelling'], ['Proceeding', 'retry', 'Calling'],
  ['Proceeding', '2xx', 'Accepted'], ['Proceeding', 'failure', 'Failed'],
  ['Cancelling', 'provisional', 'Cancelling'], ['Cancelling', 'cancel', 'Cancelling'], ['Cancelling', 'retry', 'Cancelling'],
  ['Cancelling', '2xx', 'Accepted'], ['Cancelling', 'failure', 'Failed'],
  ['Accepted', 'provisional', 'Accepted'], ['Accepted', 'cancel', 'Accepted'], ['Accepted', '2xx', 'Accepted'], ['Accepted', 'failure', 'Accepted'],
  ['Failed', 'provisional', 'Failed'], ['Failed', 'cancel', 'Failed'], ['Failed', '2xx', 'Failed'], ['Failed', 'failure', 'Failed'],
];

t.test('RFC 3261 13.2 / 9.1: every (state, event) pair of the UAC INVITE machine, legal target or IllegalTransitionError', (t) => {
  for (const s of OUTBOUND_CALL_STATES) {
    for (const e of OUTBOUND_CALL_EVENTS) {
      const row = LEGAL.find(([ls, le]) => ls === s && le === e);
      if (row) t.equal(nextOutboundCallState(s, e), row[2], `${s} + ${e} -> ${row[2]}`);
      else t.throws(() => nextOutboundCallState(s, e), IllegalTransitionError, `${s} + ${e} refused`);
    }
  }
  t.end();
});

t.test('RFC 3261 9.1: a final response settles the INVITE; nothing leaves Accepted or Failed', (t) => {
  t.same(OUTBOUND_CALL_STATES.filter(isFinalOutboundCallState), ['Accepted', 'Failed']);
  for (const s of ['Accepted', 'Failed'] as const) {
    for (const e of OUTBOUND_CALL_EVENTS) if (e !== 'retry') t.equal(nextOutboundCallState(s, e), s, `${s} + ${e} stays`);
  }
  t.end();
});
