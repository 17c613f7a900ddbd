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
  drain(): void;
  stop(): void;
}

export function announceNode(nodes: NodeRepository, node: { id: string; internalUrl: string }, liveCalls: () => number, logger: Logger): NodePresence {
  nodes.register({ ...node, liveCalls: liveCalls() });
  const timer = setInterval(() => {
    try {
      // The row is gone (removed by hand, or by a stop of another process with this id): write it again.
      if (!nodes.refresh(node.id, liveCalls())) nodes.register({ ...node, liveCalls: liveCalls() });
    } catch (err) {
      logger.warn({ err, node_id: node.id }, 'cannot refresh this engine in the nodes table; the API process may take it for gone');
    }
  }, NODE_REFRESH_MS);
  timer.unref();
  return {
    drain: () => {
      try {
        nodes.drain(node.id);
      } catch (err) {
        logger.warn({ err, node_id: node.id }, 'cannot mark this engine as draining; new calls sent to it are refused');
      }
    },
    stop: () => {
      clearInterval(timer);
      try {
        nodes.remove(node.id);
      } catch (err) {
        logger.warn({ err, node_id: node.id }, 'cannot remove this engine from the nodes table');
      }
    },
  };
}
