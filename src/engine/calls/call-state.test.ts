import t from 'tap';
import { CALL_STATES, IllegalCallTransition, nextCallState, type CallEvent, type CallState } from './call-state.js';

const EVENTS: CallEvent[] = ['ringing', 'answered', 'ended'];

/** docs/API.md "Calls": initiated → ringing → active → ended; failures go straight to ended. */
const LEGAL: Record<string, CallState> = {
  'initiated+ringing': 'ringing',
  'initiated+answered': 'active',
  'initiated+ended': 'ended',
  'ringing+ringing': 'ringing',
  'ringing+answered': 'active',
  'ringing+ended': 'ended',
  'active+ended': 'ended',
};

t.test('docs/API.md "Calls": every edge of the call state machine, legal and illegal', (t) => {
  for (const state of CALL_STATES) {
    for (const event of EVENTS) {
      const expected = LEGAL[`${state}+${event}`];
      const got = nextCallState(state, event);
      if (expected) t.equal(got, expected, `${state} --${event}--> ${expected}`);
      else t.type(got, IllegalCallTransition, `${state} --${event}--> illegal`);
    }
  }
  t.end();
});
