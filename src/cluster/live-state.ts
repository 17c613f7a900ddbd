/**
 * @module The cluster's live state (docs/CLUSTER.md "Live state in Redis"), as the rest of the
 * gateway sees it: engines' leases, the live calls of every engine with the admission limits
 * checked across all of them, the live list of `GET /v1/calls`, call owners and named locks.
 * Interfaces only: RedisLiveState implements them; a test or another store may too.
 */

/** A lease lives this long unless renewed: an engine missing five renewals is taken for dead. */
export const LEASE_TTL_MS = 10_000;
/** How often an engine renews its lease. */
export const LEASE_RENEW_MS = 2_000;

/**
 * Thrown by every operation when the live state cannot be reached or does not answer within
 * its short time-out: the caller decides what a Redis outage means for it (an engine admits on
 * its local limits, an API process answers 503).
 */
export class ClusterStateUnavailable extends Error {
  override readonly name = 'ClusterStateUnavailable';
  /** The operation that failed (`admit`, `list`, …). */
  readonly operation: string;

  constructor(operation: string, cause?: unknown) {
    super(`the cluster's live state is unavailable (${operation})`, { cause });
    this.operation = operation;
  }
}

/** What an engine announces of itself with each renewal. */
export interface LeaseAnnouncement {
  nodeId: string;
  /** Where API processes reach its internal command endpoint. */
  internalUrl: string;
  /** `cluster.capacity`: live calls it takes at most. */
  capacity: number;
  draining: boolean;
}

/** An engine's lease as read back: live, or expired (its key gone, the node announced). */
export type NodeLease =
  | (LeaseAnnouncement & { expired: false; liveCalls: number; renewedAt: number })
  | { nodeId: string; expired: true; renewedAt: number };

/** An announced engine whose lease expired, with its last renewal (ms since the epoch, Redis's clock). */
export interface DeadNode {
  nodeId: string;
  renewedAt: number;
}

/** A call admitted on an engine. */
export interface LiveCallEntry {
  callId: string;
  tenantId: string;
  nodeId: string;
  callControlId: string;
  carrier: string;
  /** ISO 8601, fixed length: with the id it orders the live list as SQL does. */
  createdAt: string;
  /** JSON of the call's list item (what `GET /v1/calls` shows); opaque here but for state, direction, carrier. */
  list: string;
}

export interface AdmissionLimits {
  /** Live calls the tenant may have across every engine. */
  tenantLimit: number;
  /** Live calls the carrier may have across every engine. */
  carrierLimit: number;
}

export type Admission = { ok: true } | { ok: false; scope: 'tenant' | 'carrier' };

/** The live list's filters, read from each entry's list JSON. */
export interface LiveListFilter {
  state?: string | undefined;
  direction?: string | undefined;
  carrier?: { is: string } | { isNot: string } | undefined;
}

/** Keyset paging, newest first by (created_at, id): the same cursor as the SQL lists. */
export interface LivePageRequest {
  limit: number;
  after?: { createdAt: string; id: string } | undefined;
}

export interface LivePage<T> {
  items: T[];
  next: { createdAt: string; id: string } | null;
}

/** The fields of a list item the live list reads (every CallListItem has them). */
export interface LiveListItem {
  id: string;
  created_at: string;
  state: string;
  direction: string;
  carrier: string;
}

export type LockOutcome<T> = { acquired: true; value: T } | { acquired: false };

/** Engines' leases (docs/CLUSTER.md "Live state in Redis"). */
export interface NodeLeases {
  /** Writes or renews the lease for another LEASE_TTL_MS; its live calls are counted from the admitted calls. */
  renewLease(lease: LeaseAnnouncement): Promise<void>;
  /** Removes the lease at once (a clean stop); the node stays announced until forgotten. */
  dropLease(nodeId: string): Promise<void>;
  /** Every announced engine's lease, live and expired. */
  leases(): Promise<NodeLease[]>;
  /** Announced engines without a lease: dead, for the reaper. */
  deadNodes(): Promise<DeadNode[]>;
  /** Releases a node's calls and forgets the node; resolves with the released call ids. */
  forgetNode(nodeId: string): Promise<string[]>;
}

/** Live calls across every engine. */
export interface LiveCalls {
  /** Adds the call when both limits allow it, in one atomic step; idempotent for a call already admitted. */
  admit(entry: LiveCallEntry, limits: AdmissionLimits): Promise<Admission>;
  /** Replaces the call's list item; no-op for a call not admitted (or released). */
  update(callId: string, listItemJson: string): Promise<void>;
  /** Keeps a leg's dialog snapshot with the call (opaque JSON). */
  storeDialog(callId: string, leg: string, snapshotJson: string): Promise<void>;
  /** Removes the call from every set, atomically; no-op when it is not there. */
  release(callId: string): Promise<void>;
  /** A page of the tenant's live calls, newest first (the list items parsed). */
  list<T extends LiveListItem>(tenantId: string, filter: LiveListFilter, page: LivePageRequest): Promise<LivePage<T>>;
  /** The engine that owns the tenant's live call, or undefined when it is not live (or another tenant's). */
  ownerOf(tenantId: string, callId: string): Promise<string | undefined>;
  ownerOfControlId(tenantId: string, callControlId: string): Promise<string | undefined>;
  /** The ids of the calls an engine owns. */
  callsOfNode(nodeId: string): Promise<string[]>;
  /** A live call's tenant and its legs' dialog snapshots (leg → opaque JSON); undefined once released. */
  dialogsOf(callId: string): Promise<{ tenantId: string; dialogs: Record<string, string> } | undefined>;
}

/** Named locks across processes (for example one reaper at a time). */
export interface ClusterLocks {
  /** Runs `fn` holding the lock `name` (expiring after `ttlMs`); `{acquired: false}` when another holds it. */
  withLock<T>(name: string, ttlMs: number, fn: () => Promise<T>): Promise<LockOutcome<T>>;
}

export interface LiveState extends NodeLeases, LiveCalls, ClusterLocks {
  close(): Promise<void>;
}
