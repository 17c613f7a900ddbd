/**
 * @module Ending a dead engine's calls (docs/ARCHITECTURE.md "Process roles"). An engine killed
 * with its calls up leaves the far ends connected: the carrier and, for sip_trunk agents, the
 * agent's edge. Every engine runs the reaper; under the cluster lock one at a time looks for
 * engines whose lease expired and, for each of their calls, sends a BYE on every dialog snapshot
 * its owner stored (through the edge, with `Reason: Q.850;cause=41`), writes the final record
 * `gateway_failure` by the gateway at the dead engine's last lease renewal, and removes the call
 * from the live state; then it forgets the engine.
 */
import { Counter, type Registry } from 'prom-client';
import type { Clock } from '../common/clock.js';
import type { TenantId } from '../common/ids.js';
import type { Logger } from '../common/logger.js';
import { endCutOffCall, lastSignOfLife, type CallRecordStore } from '../engine/calls/index.js';
import { parseDialogSnapshot, type DialogSnapshot } from '../engine/sip/index.js';

/** What the reaper needs of the cluster's live state. */
export interface ReaperState {
  /** Engines that announced themselves and whose lease has expired, with the last renewal. */
  deadNodes(): Promise<{ nodeId: string; lastRenewedAt: Date }[]>;
  /** A dead node's live calls with the dialog snapshots its owner stored (leg → snapshot JSON). */
  callsOfNode(nodeId: string): Promise<{ tenantId: string; callId: string; dialogs: Record<string, string> }[]>;
  /** Removes one call from the live state (list, limits, owner) once it is ended. */
  release(callId: string): Promise<void>;
  /** Forgets the node once all its calls are reaped. */
  forgetNode(nodeId: string): Promise<void>;
  /** Runs fn only if no other node holds the lock `name`; false when another does. */
  withLock<T>(name: string, ttlMs: number, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }>;
}

/** How often each engine looks for dead engines: the lease renewal period. */
export const REAPER_INTERVAL_MS = 2_000;
/** Calls ended at once: BYEs are cheap, but a far end that never answers holds its slot for Timer F (32 s). */
const PARALLEL_CALLS = 32;
/** Calls ended per pass, so that a pass ends well within the lock: 256 / 32 waves of at most 32 s. */
const CALLS_PER_PASS = 256;
/** The lock outlives the longest pass (8 waves of 32 s), so no second reaper starts on the same calls. */
export const REAPER_LOCK_TTL_MS = 300_000;
const LOCK_NAME = 'reaper';

/** What one pass did: null when another engine held the lock. */
export type ReapPass = { nodes: number; calls: number } | null;

export interface NodeReaperOptions {
  state: ReaperState;
  /** The call store: the call's record is read, and its final record written. */
  calls: Pick<CallRecordStore, 'get' | 'finish'>;
  /** Sends the BYE of a snapshot (`SipUserAgent.byeFromSnapshot`); resolves with the final status. */
  bye(snapshot: DialogSnapshot): Promise<{ status: number; reason: string }>;
  /** This engine: never reaped by itself, even if its own lease lapsed (a long pause). */
  selfNodeId: string;
  clock: Clock;
  logger: Logger;
  /** Where `vgw_cluster_reaped_calls_total` is registered; none when absent. */
  metrics?: Registry;
  intervalMs?: number;
}

/** Runs {@link NodeReaper.reapOnce} every interval until stopped; a pass still running skips the next. */
export class NodeReaper {
  readonly #o: NodeReaperOptions;
  readonly #reaped: Counter | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #pass: Promise<ReapPass> | undefined;

  constructor(options: NodeReaperOptions) {
    this.#o = options;
    this.#reaped = options.metrics ? new Counter({
      name: 'vgw_cluster_reaped_calls_total', help: 'Calls of dead engines this engine ended (BYE on their dialogs, gateway_failure), or only released when already ended.',
      labelNames: ['outcome'], registers: [options.metrics],
    }) : undefined;
  }

  start(): void {
    if (this.#timer) return;
    this.#timer = setInterval(() => {
      if (!this.#pass) void this.reapOnce().catch((err: unknown) => this.#o.logger.error({ err }, 'reaper pass failed'));
    }, this.#o.intervalMs ?? REAPER_INTERVAL_MS);
    this.#timer.unref();
  }

  /** Stops the timer and waits for a pass in progress. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#pass?.catch(() => undefined);
  }

  /** One pass under the lock; null when another engine holds it. */
  reapOnce(): Promise<ReapPass> {
    const pass = this.#o.state.withLock(LOCK_NAME, REAPER_LOCK_TTL_MS, () => this.#reapDeadNodes())
      .then((r) => (r.ran ? r.value : null))
      .finally(() => {
        this.#pass = undefined;
      });
    this.#pass = pass;
    return pass;
  }

  async #reapDeadNodes(): Promise<{ nodes: number; calls: number }> {
    const { state, logger, selfNodeId } = this.#o;
    let budget = CALLS_PER_PASS;
    let nodes = 0;
    let calls = 0;
    for (const node of await state.deadNodes()) {
      if (node.nodeId === selfNodeId) {
        logger.warn({ node_id: node.nodeId }, 'this engine\'s own lease expired; its calls are not reaped by itself');
        continue;
      }
      if (budget === 0) break;
      const live = await state.callsOfNode(node.nodeId);
      const batch = live.slice(0, budget);
      budget -= batch.length;
      logger.warn({ node_id: node.nodeId, calls: live.length, last_renewed_at: node.lastRenewedAt.toISOString() }, 'ending the calls of a dead engine');
      const failures = await inParallel(batch, PARALLEL_CALLS, (call) => this.#reapCall(node, call));
      calls += batch.length - failures;
      // Forgotten only when every call is gone: the next pass takes what is left, or what failed.
      if (failures === 0 && batch.length === live.length) {
        await state.forgetNode(node.nodeId);
        nodes++;
        logger.info({ node_id: node.nodeId, calls: live.length }, 'dead engine forgotten: its calls are ended');
      }
    }
    return { nodes, calls };
  }

  /** Ends one call of a dead engine; false when it could not be (it stays in the live state for the next pass). */
  async #reapCall(node: { nodeId: string; lastRenewedAt: Date }, call: { tenantId: string; callId: string; dialogs: Record<string, string> }): Promise<boolean> {
    const { state, calls, clock } = this.#o;
    const log = this.#o.logger.child({ node_id: node.nodeId, call_id: call.callId, tenant_id: call.tenantId });
    try {
      const record = await calls.get(call.tenantId as TenantId, call.callId);
      if (record?.state === 'ended') {
        await state.release(call.callId);
        this.#reaped?.inc({ outcome: 'already_ended' });
        log.info({ end_reason: record.end_reason }, 'dead engine\'s call had already ended: released');
        return true;
      }
      const byes = await Promise.all(Object.entries(call.dialogs).map(([leg, json]) => this.#bye(leg, json)));
      if (record) {
        const endedAtMs = lastSignOfLife(record, [node.lastRenewedAt.getTime()], clock.now());
        endCutOffCall(calls, record, { reason: 'gateway_failure', endedAtMs });
      } else {
        log.warn('dead engine\'s call has no record in the store: its dialogs were ended, no final record written');
      }
      await state.release(call.callId);
      this.#reaped?.inc({ outcome: 'ended' });
      log.info({ byes }, 'dead engine\'s call ended: gateway_failure');
      return true;
    } catch (err) {
      log.error({ err }, 'cannot end a dead engine\'s call; the next pass tries again');
      return false;
    }
  }

  /** The BYE of one leg's snapshot; its outcome for the log (never throws). */
  async #bye(leg: string, json: string): Promise<{ leg: string; status: number | null; reason: string }> {
    const snapshot = parseDialogSnapshot(json);
    if (!snapshot) return { leg, status: null, reason: 'the stored snapshot is not one' };
    try {
      const outcome = await this.#o.bye(snapshot);
      return { leg, status: outcome.status, reason: outcome.reason };
    } catch (err) {
      return { leg, status: null, reason: err instanceof Error ? err.message : String(err) };
    }
  }
}

/** Runs fn over items, at most `limit` at once; returns how many returned false. */
async function inParallel<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<boolean>): Promise<number> {
  let next = 0;
  let failures = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const item = items[next++] as T;
      if (!(await fn(item))) failures++;
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return failures;
}
