/**
 * @module An engine's row in the `nodes` table (docs/ARCHITECTURE.md "Process roles"): written
 * at start with its internal endpoint, refreshed every {@link NODE_REFRESH_MS} with its live
 * calls (an API process's measure of load), marked draining when it drains, removed at stop.
 * An API process takes an engine whose row is older than {@link NODE_LIVE_WITHIN_MS} for gone.
 * With `cluster.redis_url` the engine holds a lease in Redis instead ({@link announceNodeLease}).
 */
import { LEASE_RENEW_MS, type NodeLeases } from '../cluster/live-state.js';
import type { Logger } from '../common/logger.js';
import type { NodeRepository } from '../storage/index.js';

export const NODE_REFRESH_MS = 2_000;
/** Long enough that one slow refresh (a busy database) does not take an engine out of service. */
export const NODE_LIVE_WITHIN_MS = 5 * NODE_REFRESH_MS;

export interface NodePresence {
  /** No new call is sent here from now on; commands on its calls still are. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Registers the engine and refreshes its row every NODE_REFRESH_MS. The writes are not waited for
 * by anything on the call path; a refresh still running when the next is due is skipped.
 */
export async function announceNode(nodes: NodeRepository, node: { id: string; internalUrl: string }, liveCalls: () => number, logger: Logger): Promise<NodePresence> {
  await nodes.register({ ...node, liveCalls: liveCalls() });
  let refreshing = false;
  const refresh = async (): Promise<void> => {
    refreshing = true;
    try {
      // The row is gone (removed by hand, or by a stop of another process with this id): write it again.
      if (!(await nodes.refresh(node.id, liveCalls()))) await nodes.register({ ...node, liveCalls: liveCalls() });
    } catch (err) {
      logger.warn({ err, node_id: node.id }, 'cannot refresh this engine in the nodes table; the API process may take it for gone');
    } finally {
      refreshing = false;
    }
  };
  const timer = setInterval(() => {
    if (!refreshing) void refresh();
  }, NODE_REFRESH_MS);
  timer.unref();
  return {
    drain: async () => {
      try {
        await nodes.drain(node.id);
      } catch (err) {
        logger.warn({ err, node_id: node.id }, 'cannot mark this engine as draining; new calls sent to it are refused');
      }
    },
    stop: async () => {
      clearInterval(timer);
      try {
        await nodes.remove(node.id);
      } catch (err) {
        logger.warn({ err, node_id: node.id }, 'cannot remove this engine from the nodes table');
      }
    },
  };
}

/**
 * The Redis flavour (docs/CLUSTER.md "Live state in Redis"): the engine's lease, renewed every
 * LEASE_RENEW_MS with its capacity and whether it drains (its live calls are counted in Redis).
 * A renewal that finds Redis away is logged once per outage; the lease then expires after
 * LEASE_TTL_MS and API processes take the engine for dead until it renews again. A clean stop
 * forgets the node (its calls have ended), so no reaper mistakes it for a crash.
 */
export async function announceNodeLease(
  leases: NodeLeases, node: { id: string; internalUrl: string; capacity: number }, logger: Logger,
): Promise<NodePresence> {
  let draining = false;
  let failing = false;
  const renew = async (): Promise<void> => {
    try {
      await leases.renewLease({ nodeId: node.id, internalUrl: node.internalUrl, capacity: node.capacity, draining });
      if (failing) logger.info({ node_id: node.id }, 'engine lease renewed again');
      failing = false;
    } catch (err) {
      if (!failing) logger.warn({ err, node_id: node.id }, 'cannot renew this engine\'s lease; API processes take it for dead once it expires');
      failing = true;
    }
  };
  await renew();
  let renewing: Promise<void> | undefined;
  const timer = setInterval(() => {
    renewing ??= renew().finally(() => (renewing = undefined));
  }, LEASE_RENEW_MS);
  timer.unref();
  return {
    drain: async () => {
      draining = true;
      await renewing;
      await renew();
    },
    stop: async () => {
      clearInterval(timer);
      await renewing;
      try {
        await leases.forgetNode(node.id);
      } catch (err) {
        logger.warn({ err, node_id: node.id }, 'cannot remove this engine\'s lease; it expires on its own');
      }
    },
  };
}
