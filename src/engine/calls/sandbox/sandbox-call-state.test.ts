import t from 'tap';
import { IllegalTransitionError } from '../../../common/errors.js';
import {
  nextSandboxCallState, SANDBOX_CALL_EVENTS, SANDBOX_CALL_STATES, type SandboxCallState,
} from './sandbox-call-state.js';

const LEGAL: Record<string, SandboxCallState> = {
  'ringing+ring-time-over': 'answering',
  'ringing+ended': 'ended',
  'answering+answered': 'active',
  'answering+ended': 'ended',
  'active+ended': 'ended',
};

t.test('every edge of the sandbox call state machine, legal and illegal', (t) => {
  for (const state of SANDBOX_CALL_STATES) {
    for (const event of SANDBOX_CALL_EVENTS) {
      const expected = LEGAL[`${state}+${event}`];
      if (expected) t.equal(nextSandboxCallState(state, event), expected, `${state} --${event}--> ${expected}`);
      else t.throws(() => nextSandboxCallState(state, event), IllegalTransitionError, `${state} --${event}--> illegal`);
    }
  }
  t.end();
});
