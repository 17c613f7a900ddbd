/**
 * @module What an engine in a cluster does for the calls of an engine that dies (docs/CLUSTER.md
 * "When an engine dies"): its own confirmed dialogs are kept in the live state as they are
 * confirmed, and its reaper reads the dead engines' calls and dialogs from there.
 */
import type { LiveState } from '../cluster/live-state.js';
import type { Logger } from '../common/logger.js';
import type { DialogSnapshots } from '../engine/calls/ports.js';
import type { ReaperState } from './node-reaper.js';

/**
 * Each confirmed leg's snapshot, written without waiting: a snapshot that cannot be written
 * (Redis away) costs only the BYE a reaper could have sent if this engine died meanwhile.
 */
export function liveDialogSnapshots(live: Pick<LiveState, 'storeDialog'>, logger: Logger): DialogSnapshots {
  return {
    store: (callId, leg, snapshot) => {
      live.storeDialog(callId, leg, JSON.stringify(snapshot)).catch((err: unknown) => logger.warn({ err, call_id: callId, leg }, 'cannot keep the dialog snapshot in the cluster state; if this engine dies the far end gets no BYE'));
    },
  };
}

/** The reaper's view of the live state. */
export function liveReaperState(live: LiveState): ReaperState {
  return {
    deadNodes: async () => (await live.deadNodes()).map((n) => ({ nodeId: n.nodeId, lastRenewedAt: new Date(n.renewedAt) })),
    callsOfNode: async (nodeId) => {
      const calls = [];
      for (const callId of await live.callsOfNode(nodeId)) {
        const entry = await live.dialogsOf(callId);
        // Released since the set was read (its call ended on its own): nothing left to reap.
        if (entry) calls.push({ tenantId: entry.tenantId, callId, dialogs: entry.dialogs });
      }
      return calls;
    },
    release: (callId) => live.release(callId),
    forgetNode: async (nodeId) => {
      await live.forgetNode(nodeId);
    },
    withLock: async (name, ttlMs, fn) => {
      const outcome = await live.withLock(name, ttlMs, fn);
      return outcome.acquired ? { ran: true, value: outcome.value } : { ran: false };
    },
  };
}
