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

/**
 * The dialogs a previous run of this engine left up: its calls still in the live state whose
 * record the store does not have as ended (the run died with them). Read before recovery ends
 * them in the store, so that an engine restarted within its lease's lifetime, which no other
 * engine reaps, still sends their far ends a BYE (docs/CLUSTER.md "When an engine dies").
 */
export async function previousRunDialogs(
  live: LiveState, nodeId: string, calls: Pick<CallRepository, 'get'>, logger: Logger,
): Promise<DialogSnapshot[]> {
  try {
    const left = await liveReaperState(live).callsOfNode(nodeId);
    const snapshots: DialogSnapshot[] = [];
    for (const call of left) {
      if ((await calls.get(call.tenantId as TenantId, call.callId))?.state === 'ended') continue;
      for (const json of Object.values(call.dialogs)) {
        const snapshot = parseDialogSnapshot(json);
        if (snapshot) snapshots.push(snapshot);
      }
    }
    return snapshots;
  } catch (err) {
    logger.warn({ err, node_id: nodeId }, 'cannot read the dialogs this engine\'s previous run left; their far ends get no BYE');
    return [];
  }
}

/** Sends each left dialog its BYE (never throws), then frees the previous run's live entries. */
export async function endPreviousRun(
  live: LiveState, nodeId: string, snapshots: readonly DialogSnapshot[], bye: (s: DialogSnapshot) => Promise<{ status: number }>, logger: Logger,
): Promise<void> {
  const outcomes = await Promise.all(snapshots.map((s) => bye(s).then((o) => o.status, () => null)));
  if (snapshots.length > 0) logger.warn({ node_id: nodeId, dialogs: snapshots.length, statuses: outcomes }, 'sent BYE on the dialogs this engine\'s previous run left up');
  // Recovery has ended these calls in the store (gateway_restart): their places are freed.
  await live.forgetNode(nodeId).catch((err: unknown) => logger.warn({ err, node_id: nodeId }, 'cannot free the live calls of this node\'s previous run'));
}
