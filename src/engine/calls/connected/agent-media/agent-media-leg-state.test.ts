/** @module Table test of every (state, event) pair of the agent media leg's machine (docs/ARCHITECTURE.md, "State machines"). */
import t from 'tap';
import { IllegalTransitionError } from '../../../../common/errors.js';
import {
  AGENT_MEDIA_LEG_EVENTS, AGENT_MEDIA_LEG_STATES, isAgentMediaLegStopped, nextAgentMediaLegState,
  type AgentMediaLegEvent, type AgentMediaLegState,
} from './agent-media-leg-state.js';

const LEGAL: readonly (readonly [AgentMediaLegState, AgentMediaLegEvent, AgentMediaLegState])[] = [
  ['idle', 'attach', 'attaching'], ['idle', 'detach', 'detached'], ['idle', 'close', 'closed'],
  ['attaching', 'ready', 'attached'], ['attaching', 'detach', 'detached'], ['attaching', 'close', 'closed'],
  ['attached', 'detach', 'detached'], ['attached', 'close', 'closed'],
  ['detached', 'attach', 'detached'], ['detached', 'ready', 'detached'], ['detached', 'detach', 'detached'], ['detached', 'close', 'closed'],
  ['closed', 'attach', 'closed'], ['closed', 'ready', 'closed'], ['closed', 'detach', 'closed'], ['closed', 'close', 'closed'],
];

t.test('Agent media leg states: every (state, event) pair, legal target or IllegalTransitionError', (t) => {
  for (const s of AGENT_MEDIA_LEG_STATES) {
    for (const e of AGENT_MEDIA_LEG_EVENTS) {
      const row = LEGAL.find(([ls, le]) => ls === s && le === e);
      if (row) t.equal(nextAgentMediaLegState(s, e), row[2], `${s} + ${e} -> ${row[2]}`);
      else t.throws(() => nextAgentMediaLegState(s, e), IllegalTransitionError, `${s} + ${e} refused`);
    }
  }
  t.same(AGENT_MEDIA_LEG_STATES.filter(isAgentMediaLegStopped), ['detached', 'closed']);
  t.end();
});
