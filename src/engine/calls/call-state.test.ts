import t from 'tap';
import { IllegalTransitionError } from '../../common/errors.js';
import { CALL_EVENTS, CALL_STATES, nextCallState, type CallState } from './call-state.js';

/** docs/ARCHITECTURE.md, "State machines": initiated → ringing → active → ended; failures go straight to ended; late signalling after the end stays ended. */
const LEGAL: Record<string, CallState> = {
  'initiated+ringing': 'ringing',
  'initiated+answered': 'active',
  'initiated+ended': 'ended',
  'ringing+ringing': 'ringing',
  'ringing+answered': 'active',
  'ringing+ended': 'ended',
  'active+ended': 'ended',
  'ended+ringing': 'ended',
  'ended+answered': 'ended',
};

t.test('Call states: every (state, event) pair of the call machine, legal target or IllegalTransitionError', (t) => {
  for (const state of CALL_STATES) {
    for (const event of CALL_EVENTS) {
      const expected = LEGAL[`${state}+${event}`];
      if (expected) t.equal(nextCallState(state, event), expected, `${state} --${event}--> ${expected}`);
      else t.throws(() => nextCallState(state, event), IllegalTransitionError, `${state} --${event}--> illegal`);
    }
  }
  t.end();
});
