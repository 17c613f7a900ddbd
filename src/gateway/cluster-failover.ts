/**
 * @module What an engine in a cluster does for the calls of an engine that dies (docs/CLUSTER.md
 * "When an engine dies"): its own confirmed dialogs are kept in the live state as they are
 * confirmed, and its reaper reads the dead engines' calls and dialogs from there.
 */
import type { LiveState } from '../cluster/live-state.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import type { DialogSnapshots } from '../engine/calls/ports.js';
import { parseDialogSnapshot, type DialogSnapshot } from '../engine/sip/index.js';
import type { CallRepository } from '../storage/index.js';
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

/** What a previous run of this engine left in the live state. */
export interface PreviousRun {
  /** Every call it still owns there, ended in the store or not: all are released. */
  callIds: string[];
  /** The dialogs of those the store does not have as ended: each gets a BYE. */
  snapshots: DialogSnapshot[];
}

/**
 * Read before recovery ends the previous run's calls in the store, so that an engine restarted
 * within its lease's lifetime, which no other engine reaps, still sends their far ends a BYE
 * (docs/CLUSTER.md "When an engine dies").
 */
export async function previousRun(live: LiveState, nodeId: string, calls: Pick<CallRepository, 'get'>, logger: Logger): Promise<PreviousRun> {
  try {
    const callIds = await live.callsOfNode(nodeId);
    const snapshots: DialogSnapshot[] = [];
    for (const call of await liveReaperState(live).callsOfNode(nodeId)) {
      if ((await calls.get(call.tenantId as TenantId, call.callId))?.state === 'ended') continue;
      for (const json of Object.values(call.dialogs)) {
        const snapshot = parseDialogSnapshot(json);
        if (snapshot) snapshots.push(snapshot);
      }
    }
    return { callIds, snapshots };
  } catch (err) {
    logger.warn({ err, node_id: nodeId }, 'cannot read what this engine\'s previous run left; its far ends get no BYE');
    return { callIds: [], snapshots: [] };
  }
}

/**
 * Sends each dialog left up its BYE, then releases the previous run's calls (recovery has ended
 * them in the store, `gateway_restart`). Run after the engine has renewed its lease, so no other
 * engine's reaper takes the node for dead meanwhile, and not waited for by the start: a far end
 * that never answers holds its BYE for Timer F (32 s). Never throws.
 */
export async function endPreviousRun(
  live: Pick<LiveState, 'release'>, nodeId: string, left: PreviousRun, bye: (s: DialogSnapshot) => Promise<{ status: number }>, logger: Logger,
): Promise<void> {
  const outcomes = await Promise.all(left.snapshots.map((s) => bye(s).then((o) => o.status, () => null)));
  if (left.snapshots.length > 0) logger.warn({ node_id: nodeId, dialogs: left.snapshots.length, statuses: outcomes }, 'sent BYE on the dialogs this engine\'s previous run left up');
  for (const callId of left.callIds) {
    await live.release(callId).catch((err: unknown) => logger.warn({ err, node_id: nodeId, call_id: callId }, 'cannot free a live call of this node\'s previous run'));
  }
}
