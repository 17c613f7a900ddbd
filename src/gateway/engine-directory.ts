/**
 * @module Where an API process finds engines (docs/ARCHITECTURE.md "Process roles"): the engine
 * a new call goes to and the engine that owns a call. From the store's `nodes` table and the
 * calls' `node_id`, or, with `cluster.redis_url`, from the engines' leases and live calls in
 * Redis (docs/CLUSTER.md "Live state in Redis").
 */
import { ClusterStateUnavailable, type LiveState } from '../cluster/live-state.js';
import { ApiError } from '../common/errors.js';
import type { TenantId } from '../common/ids.js';
import type { CallRepository, NodeRepository } from '../storage/index.js';

/** An engine as a command reaches it. */
export interface EngineNode {
  id: string;
  internal_url: string;
}

export interface EngineDirectory {
  /** The engine a new call goes to; undefined when none takes calls. */
  pick(): Promise<EngineNode | undefined>;
  /** An engine by id: `expired` when its lease ran out and its calls are not yet reaped. */
  get(id: string): Promise<EngineNode | 'expired' | undefined>;
  /** The engine owning a call (null for rows from before calls named their node), undefined without such a call. */
  ownerOf(tenantId: TenantId, callId: string): Promise<string | null | undefined>;
  ownerOfControlId(tenantId: TenantId, callControlId: string): Promise<string | null | undefined>;
}

/** Seconds a client waits before retrying a command on a call whose engine's lease expired: about one reaper round. */
export const OWNER_GONE_RETRY_AFTER_S = 5;

/** Round-robin among equals, shared by both directories. */
function taking<T>(): (candidates: T[]) => T | undefined {
  let turn = 0;
  return (candidates) => {
    if (candidates.length === 0) return undefined;
    turn = (turn + 1) % 1_000_000;
    return candidates[turn % candidates.length];
  };
}

/** The nodes table: an engine whose row was refreshed within `liveWithinMs` is live; new calls go to the fewest live calls. */
export function sqlEngineDirectory(
  nodes: Pick<NodeRepository, 'get' | 'live'>, calls: Pick<CallRepository, 'ownerOf' | 'ownerOfControlId'>, liveWithinMs: number,
): EngineDirectory {
  const take = taking<EngineNode>();
  return {
    async pick() {
      const live = await nodes.live(liveWithinMs);
      const fewest = Math.min(...live.map((n) => n.live_calls));
      return take(live.filter((n) => n.live_calls === fewest));
    },
    get: (id) => nodes.get(id),
    ownerOf: (tenantId, callId) => calls.ownerOf(tenantId, callId),
    ownerOfControlId: (tenantId, callControlId) => calls.ownerOfControlId(tenantId, callControlId),
  };
}

/** The live state is away: an API process cannot tell where a call lives, so it asks the client to retry. */
function stateAway(err: unknown): never {
  if (!(err instanceof ClusterStateUnavailable)) throw err;
  throw new ApiError(503, 'unavailable', 'The cluster state is unavailable.', { cause: err, headers: { 'Retry-After': String(OWNER_GONE_RETRY_AFTER_S) } });
}

/**
 * The leases in Redis: a new call goes to the live, not draining engine with the most free
 * capacity (capacity − live calls); owners are read from the live calls, then from the store
 * for calls that are not live in Redis (ended, or admitted while Redis was away).
 */
export function redisEngineDirectory(live: LiveState, calls: Pick<CallRepository, 'ownerOf' | 'ownerOfControlId'>): EngineDirectory {
  const take = taking<EngineNode>();
  return {
    async pick() {
      const leases = await live.leases().catch(stateAway);
      const open = leases.flatMap((l) => (l.expired || l.draining || l.liveCalls >= l.capacity ? [] : [{ id: l.nodeId, internal_url: l.internalUrl, free: l.capacity - l.liveCalls }]));
      // In a fixed order, so that taking turns among equals alternates (the leases come in renewal order).
      open.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      const most = Math.max(...open.map((n) => n.free));
      const chosen = take(open.filter((n) => n.free === most));
      return chosen && { id: chosen.id, internal_url: chosen.internal_url };
    },
    async get(id) {
      const lease = (await live.leases().catch(stateAway)).find((l) => l.nodeId === id);
      if (lease === undefined) return undefined;
      return lease.expired ? 'expired' : { id, internal_url: lease.internalUrl };
    },
    async ownerOf(tenantId, callId) {
      return (await live.ownerOf(tenantId, callId).catch(stateAway)) ?? calls.ownerOf(tenantId, callId);
    },
    async ownerOfControlId(tenantId, callControlId) {
      return (await live.ownerOfControlId(tenantId, callControlId).catch(stateAway)) ?? calls.ownerOfControlId(tenantId, callControlId);
    },
  };
}
