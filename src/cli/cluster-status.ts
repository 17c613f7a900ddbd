/**
 * @module `vgw cluster status` (docs/CLUSTER.md "Operating it"): the engines of a cluster, whether
 * each is live, draining or dead, when it was last seen, its live calls and capacity, and the
 * cluster's total of live calls. Nodes come from {@link NodeStatusSource}s: the store's `nodes`
 * table here; the Redis leases are a second source of the same shape.
 */
import type { NodeLeases } from '../cluster/live-state.js';
import { NODE_LIVE_WITHIN_MS } from '../gateway/node-presence.js';
import type { NodeRecord, Store } from '../storage/index.js';

/** An engine as one source reports it. */
export interface NodeStatus {
  id: string;
  /** Its internal command endpoint (docs/ARCHITECTURE.md "Process roles"). */
  internalUrl: string;
  liveCalls: number;
  /** The live calls it takes at most (`cluster.capacity`), when the source knows it. */
  capacity?: number | undefined;
  draining: boolean;
  /** When it last announced itself: epoch milliseconds. */
  lastSeen: number;
}

/** Where the engines are read from: the store's `nodes` table, the Redis leases. */
export interface NodeStatusSource {
  /** Shown beside each node: `store`, `redis`. */
  readonly name: string;
  nodes(): Promise<NodeStatus[]>;
}

/**
 * `live`: seen within {@link NODE_LIVE_WITHIN_MS} and taking new calls; `draining`: seen, taking
 * no new call (its calls still get their commands); `dead`: not seen for longer, so it has
 * stopped without removing itself (a crash, a lost network): its calls are the reaper's.
 */
export type NodeState = 'live' | 'draining' | 'dead';

export interface ClusterNode {
  id: string;
  state: NodeState;
  internal_url: string;
  live_calls: number;
  capacity: number | null;
  last_seen: string;
  /** Whole seconds since `last_seen`. */
  seen_seconds_ago: number;
  source: string;
}

export interface ClusterStatus {
  nodes: ClusterNode[];
  /** Live calls of the nodes that are not dead: a dead node's count is its last word, not its calls. */
  live_calls: number;
  live_nodes: number;
  draining_nodes: number;
  dead_nodes: number;
}

/**
 * The engines of the store's `nodes` table. NodeRepository lists only the nodes that take new
 * calls (`live`); the status needs draining and silent ones too, hence the one query here.
 */
export function storeNodeSource(store: Pick<Store, 'db'>): NodeStatusSource {
  return {
    name: 'store',
    async nodes() {
      const rows = await store.db.all<NodeRecord>('SELECT id, internal_url, live_calls, started_at, last_seen_ms, draining FROM nodes ORDER BY id');
      // Counts and times as numbers on both engines (PostgreSQL may return BIGINT as a string).
      return rows.map((r) => ({ id: r.id, internalUrl: r.internal_url, liveCalls: Number(r.live_calls), draining: Number(r.draining) === 1, lastSeen: Number(r.last_seen_ms) }));
    },
  };
}

/**
 * The engines' leases in Redis (`cluster.redis_url`, docs/CLUSTER.md "Live state in Redis"). An
 * expired lease keeps only its last renewal until the reaper forgets the node: it shows as dead.
 */
export function leaseNodeSource(leases: Pick<NodeLeases, 'leases'>): NodeStatusSource {
  return {
    name: 'redis',
    async nodes() {
      return (await leases.leases()).map((l) => (l.expired
        ? { id: l.nodeId, internalUrl: '', liveCalls: 0, draining: false, lastSeen: l.renewedAt }
        : { id: l.nodeId, internalUrl: l.internalUrl, liveCalls: l.liveCalls, capacity: l.capacity, draining: l.draining, lastSeen: l.renewedAt }));
    },
  };
}

/** Every source's nodes, by id; a node two sources report is shown as the first source has it. */
export async function clusterStatus(sources: readonly NodeStatusSource[], now: number): Promise<ClusterStatus> {
  const byId = new Map<string, ClusterNode>();
  for (const source of sources) {
    for (const n of await source.nodes()) {
      if (byId.has(n.id)) continue;
      const silent = now - n.lastSeen > NODE_LIVE_WITHIN_MS;
      byId.set(n.id, {
        id: n.id, state: silent ? 'dead' : n.draining ? 'draining' : 'live', internal_url: n.internalUrl,
        live_calls: n.liveCalls, capacity: n.capacity ?? null, last_seen: new Date(n.lastSeen).toISOString(),
        seen_seconds_ago: Math.max(0, Math.floor((now - n.lastSeen) / 1000)), source: source.name,
      });
    }
  }
  const nodes = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const count = (state: NodeState) => nodes.filter((n) => n.state === state).length;
  return {
    nodes,
    live_calls: nodes.filter((n) => n.state !== 'dead').reduce((sum, n) => sum + n.live_calls, 0),
    live_nodes: count('live'), draining_nodes: count('draining'), dead_nodes: count('dead'),
  };
}

/** The status as a table for a terminal, one line per node and a total. */
export function formatClusterStatus(status: ClusterStatus): string {
  if (status.nodes.length === 0) return 'no engine has announced itself\n';
  const header = ['NODE', 'STATE', 'LAST SEEN', 'CALLS', 'CAPACITY', 'INTERNAL URL', 'SOURCE'];
  const rows = status.nodes.map((n) => [
    n.id, n.state, `${n.seen_seconds_ago}s ago`, String(n.live_calls), n.capacity === null ? '-' : String(n.capacity), n.internal_url, n.source,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd();
  return [
    line(header), ...rows.map(line), '',
    `${status.live_calls} live calls on ${status.live_nodes} live and ${status.draining_nodes} draining engines; ${status.dead_nodes} dead`, '',
  ].join('\n');
}
