/** @module Table test of every (phase, event) pair of the transfer machine (docs/ARCHITECTURE.md, "State machines"). */
import t from 'tap';
import { IllegalTransitionError } from '../../../common/errors.js';
import { deriveEdges } from '../../../common/state-machine.js';
import { isTransferActive, nextTransferPhase, TRANSFER_EVENTS, TRANSFER_PHASES, type TransferEvent, type TransferPhase } from './transfer-state.js';

const LEGAL: readonly (readonly [TransferPhase, TransferEvent, TransferPhase])[] = [
  ['dialing', 'answered', 'bridged'], ['dialing', 'accepted', 'referred'], ['dialing', 'notify-2xx', 'connected'],
  ['dialing', 'notify-failure', 'failed'], ['dialing', 'fail', 'failed'], ['dialing', 'close', 'closed'],
  ['bridged', 'fail', 'failed'], ['bridged', 'close', 'closed'],
  ['referred', 'notify-2xx', 'connected'], ['referred', 'notify-failure', 'failed'], ['referred', 'fail', 'failed'], ['referred', 'close', 'closed'],
  ['connected', 'accepted', 'connected'], ['connected', 'notify-2xx', 'connected'], ['connected', 'notify-failure', 'connected'],
  ['connected', 'fail', 'connected'], ['connected', 'close', 'closed'],
  ['failed', 'accepted', 'failed'], ['failed', 'notify-2xx', 'connected'], ['failed', 'notify-failure', 'failed'],
  ['failed', 'fail', 'failed'], ['failed', 'close', 'closed'],
  ['closed', 'answered', 'closed'], ['closed', 'accepted', 'closed'], ['closed', 'notify-2xx', 'closed'],
  ['closed', 'notify-failure', 'closed'], ['closed', 'fail', 'closed'], ['closed', 'close', 'closed'],
];

t.test('Transfer states: every (phase, event) pair, legal target or IllegalTransitionError', (t) => {
  for (const phase of TRANSFER_PHASES) {
    for (const event of TRANSFER_EVENTS) {
      const row = LEGAL.find(([p, e]) => p === phase && e === event);
      if (row) t.equal(nextTransferPhase(phase, event), row[2], `${phase} + ${event} -> ${row[2]}`);
      else t.throws(() => nextTransferPhase(phase, event), IllegalTransitionError, `${phase} + ${event} refused`);
    }
  }
  t.end();
});

t.test('Transfer states: closed is terminal and reachable from every phase; a second transfer waits while one is under way', (t) => {
  const total = (p: TransferPhase, e: TransferEvent): TransferPhase | undefined => LEGAL.find(([lp, le]) => lp === p && le === e)?.[2];
  const edges = deriveEdges(TRANSFER_PHASES, TRANSFER_EVENTS, total);
  t.same(edges.closed, []);
  for (const p of TRANSFER_PHASES) if (p !== 'closed') t.ok(edges[p].includes('closed'), `${p} -> closed`);
  t.same(TRANSFER_PHASES.filter(isTransferActive), ['dialing', 'bridged', 'referred', 'connected']);
  t.end();
});
