/**
 * @module The reaper's view of the cluster's live state (src/gateway/node-reaper.ts `ReaperState`)
 * in memory, for tests: nodes with their last lease renewal, live calls with their dialog
 * snapshots, and a lock with a time to live shared by every reaper given the same instance.
 */
import type { ReaperState } from '../../src/gateway/node-reaper.js';

interface LiveCall {
  nodeId: string;
  tenantId: string;
  callId: string;
  dialogs: Record<string, string>;
}

export class MemoryReaperState implements ReaperState {
  readonly nodes = new Map<string, { lastRenewedAt: Date; dead: boolean }>();
  readonly calls = new Map<string, LiveCall>();
  readonly #locks = new Map<string, number>();
  /** Every call released, in order (a call released twice shows twice). */
  readonly released: string[] = [];
  /** Passes run under the lock, and refused because another held it. */
  locked = { ran: 0, refused: 0 };

  addNode(nodeId: string, lastRenewedAt: Date, dead: boolean): void {
    this.nodes.set(nodeId, { lastRenewedAt, dead });
  }

  addCall(call: LiveCall): void {
    this.calls.set(call.callId, call);
  }

  deadNodes(): Promise<{ nodeId: string; lastRenewedAt: Date }[]> {
    return Promise.resolve([...this.nodes].filter(([, n]) => n.dead).map(([nodeId, n]) => ({ nodeId, lastRenewedAt: n.lastRenewedAt })));
  }

  callsOfNode(nodeId: string): Promise<{ tenantId: string; callId: string; dialogs: Record<string, string> }[]> {
    return Promise.resolve([...this.calls.values()].filter((c) => c.nodeId === nodeId).map(({ tenantId, callId, dialogs }) => ({ tenantId, callId, dialogs })));
  }

  release(callId: string): Promise<void> {
    this.released.push(callId);
    this.calls.delete(callId);
    return Promise.resolve();
  }

  forgetNode(nodeId: string): Promise<void> {
    this.nodes.delete(nodeId);
    return Promise.resolve();
  }

  async withLock<T>(name: string, ttlMs: number, fn: () => Promise<T>): Promise<{ ran: true; value: T } | { ran: false }> {
    const until = this.#locks.get(name);
    if (until !== undefined && until > Date.now()) {
      this.locked.refused++;
      return { ran: false };
    }
    this.#locks.set(name, Date.now() + ttlMs);
    this.locked.ran++;
    try {
      return { ran: true, value: await fn() };
    } finally {
      this.#locks.delete(name);
    }
  }
}
