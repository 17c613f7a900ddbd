/**
 * @module An engine's row in the `nodes` table (docs/ARCHITECTURE.md "Process roles"): written
 * at start with its internal endpoint, refreshed every {@link NODE_REFRESH_MS} with its live
 * calls (an API process's measure of load), marked draining when it drains, removed at stop.
 * An API process takes an engine whose row is older than {@link NODE_LIVE_WITHIN_MS} for gone.
 */
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
