import t from 'tap';
import { InvariantError } from '../common/errors.js';
import { nextAgentSessionState, type AgentSessionState } from './socket-agent-session.js';

const STATES: AgentSessionState[] = ['idle', 'connecting', 'ready', 'closed'];
const LEGAL = new Set(['idle>connecting', 'idle>closed', 'connecting>ready', 'connecting>closed', 'ready>closed']);

t.test('agent session state machine: every edge of the diagram is legal and every other edge throws', (t) => {
  for (const from of STATES) {
    for (const to of STATES) {
      const edge = `${from}>${to}`;
      if (LEGAL.has(edge)) t.equal(nextAgentSessionState(from, to), to, edge);
      else t.throws(() => nextAgentSessionState(from, to), InvariantError, edge);
    }
  }
  t.end();
});
