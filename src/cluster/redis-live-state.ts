/**
 * @module The cluster's live state in one Redis (docs/CLUSTER.md "Live state in Redis"), every
 * key under `vgw:`. Each command has a short time-out, and the client queues nothing while
 * disconnected: an outage is a {@link ClusterStateUnavailable} within the time-out, never a hang
 * on the call path. The client reconnects on its own, backing off up to a second.
 */
import { randomUUID } from 'node:crypto';
import { createClient, ErrorReply, type RedisClientType } from 'redis';
import type { Logger } from '../common/logger.js';
import {
  ClusterStateUnavailable, LEASE_TTL_MS, type Admission, type AdmissionLimits, type DeadNode, type LeaseAnnouncement, type LiveCallEntry,
  type LiveListFilter, type LiveListItem, type LivePage, type LivePageRequest, type LiveState, type LockOutcome, type NodeLease,
} from './live-state.js';
import { ADMIT, FORGET_NODE, LIVE_PAGE, RELEASE, RENEW_LEASE, STORE_DIALOG, UNLOCK, UPDATE_CALL } from './live-state-scripts.js';

export interface RedisLiveStateOptions {
  /** `cluster.redis_url`. */
  url: string;
  logger: Logger;
  /** Longest wait for one command's answer (default 1000 ms). */
  commandTimeoutMs?: number;
  /** A lease's lifetime (default LEASE_TTL_MS); shorter only in tests of expiry. */
  leaseTtlMs?: number;
  /** Longest wait for the first connection in {@link RedisLiveState.open}; the client keeps trying after it. */
  connectTimeoutMs?: number;
}

const key = {
  node: (id: string) => `vgw:node:${id}`,
  nodes: 'vgw:nodes',
  call: (id: string) => `vgw:call:${id}`,
  live: (tenant: string) => `vgw:live:${tenant}`,
  carrierLive: (carrier: string) => `vgw:carrier-live:${carrier}`,
  nodeCalls: (node: string) => `vgw:node-calls:${node}`,
  control: (controlId: string) => `vgw:control:${controlId}`,
  lock: (name: string) => `vgw:lock:${name}`,
};

/** Replies that mean "not now" (a replica promoted, a restart loading its data), not a bug. */
const TRANSIENT_REPLY = /^(LOADING|READONLY|MASTERDOWN|BUSY|OOM|TRYAGAIN|CLUSTERDOWN)\b/;

/** Batches read per round trip while a filtered page is being filled. */
const PAGE_BATCH = 100;

function matches(item: LiveListItem, filter: LiveListFilter): boolean {
  if (filter.state !== undefined && item.state !== filter.state) return false;
  if (filter.direction !== undefined && item.direction !== filter.direction) return false;
  if (filter.carrier === undefined) return true;
  return 'is' in filter.carrier ? item.carrier === filter.carrier.is : item.carrier !== filter.carrier.isNot;
}

export class RedisLiveState implements LiveState {
  readonly #client: RedisClientType;
  readonly #timeoutMs: number;
  readonly #logger: Logger;
  readonly #leaseTtlMs: number;
  #reportedDown = false;

  private constructor(client: RedisClientType, options: RedisLiveStateOptions) {
    this.#client = client;
    this.#timeoutMs = options.commandTimeoutMs ?? 1000;
    this.#logger = options.logger;
    this.#leaseTtlMs = options.leaseTtlMs ?? LEASE_TTL_MS;
  }

  /**
   * Connects, waiting up to `connectTimeoutMs` (default 2000) for the first connection. A Redis
   * that is away at start does not stop the process: the client keeps trying, and operations
   * throw ClusterStateUnavailable until it answers.
   */
  static async open(options: RedisLiveStateOptions): Promise<RedisLiveState> {
    const client: RedisClientType = createClient({
      url: options.url,
      disableOfflineQueue: true,
      socket: { connectTimeout: options.connectTimeoutMs ?? 2000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 1000) },
    });
    const state = new RedisLiveState(client, options);
    client.on('error', (err: unknown) => state.#down(err));
    client.on('ready', () => state.#up());
    const connected = client.connect().then(() => true, (err: unknown) => (state.#down(err), false));
    const waited = await Promise.race([connected, new Promise<false>((resolve) => setTimeout(() => resolve(false), options.connectTimeoutMs ?? 2000).unref())]);
    if (!waited) state.#logger.warn('the cluster live state (Redis) is not reachable yet; retrying in the background');
    return state;
  }

  /**
   * The connected node-redis client, for rate-limiter-flexible's RateLimiterRedis
   * (`useRedisPackage: true`), which keeps its own keys beside these.
   */
  get client(): RedisClientType {
    return this.#client;
  }

  get isReady(): boolean {
    return this.#client.isReady;
  }

  #down(err: unknown): void {
    if (this.#reportedDown) return;
    this.#reportedDown = true;
    this.#logger.warn({ err }, 'lost the cluster live state (Redis); reconnecting');
  }

  #up(): void {
    if (this.#reportedDown) this.#logger.info('the cluster live state (Redis) is back');
    this.#reportedDown = false;
  }

  /**
   * One command with the time-out; a connection failure or transient reply becomes
   * ClusterStateUnavailable. The time-out is our own: node-redis's `timeout` option covers a
   * command only until it is written, and a Redis that stopped answering never replies.
   */
  async #run<T>(operation: string, args: string[]): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${this.#timeoutMs} ms`)), this.#timeoutMs);
    });
    try {
      return await Promise.race([this.#client.sendCommand(args), timedOut]) as T;
    } catch (err) {
      if (err instanceof ErrorReply && !TRANSIENT_REPLY.test(err.message)) throw new Error(`Redis refused ${operation}: ${err.message}`, { cause: err });
      throw new ClusterStateUnavailable(operation, err);
    } finally {
      clearTimeout(timer);
    }
  }

  #eval<T>(operation: string, script: string, keys: string[], args: (string | number)[]): Promise<T> {
    return this.#run<T>(operation, ['EVAL', script, String(keys.length), ...keys, ...args.map(String)]);
  }

  async renewLease(lease: LeaseAnnouncement): Promise<void> {
    await this.#eval('renewLease', RENEW_LEASE, [key.node(lease.nodeId), key.nodeCalls(lease.nodeId), key.nodes], [
      lease.nodeId, this.#leaseTtlMs, 'internal_url', lease.internalUrl, 'capacity', lease.capacity, 'draining', lease.draining ? 1 : 0,
    ]);
  }

  async dropLease(nodeId: string): Promise<void> {
    await this.#run('dropLease', ['DEL', key.node(nodeId)]);
  }

  async leases(): Promise<NodeLease[]> {
    const announced = await this.#run<string[]>('leases', ['ZRANGE', key.nodes, '0', '-1', 'WITHSCORES']);
    const ids = announced.filter((_, i) => i % 2 === 0);
    const hashes = await Promise.all(ids.map((id) => this.#run<string[]>('leases', ['HGETALL', key.node(id)])));
    // Counted now, not at the last renewal: two calls placed within one renewal period must see each other.
    const counts = await Promise.all(ids.map((id) => this.#run<number>('leases', ['SCARD', key.nodeCalls(id)])));
    return ids.map((nodeId, i): NodeLease => {
      const flat = hashes[i]!;
      if (flat.length === 0) return { nodeId, expired: true, renewedAt: Number(announced[2 * i + 1]) };
      const f = new Map<string, string>();
      for (let j = 0; j + 1 < flat.length; j += 2) f.set(flat[j]!, flat[j + 1]!);
      return {
        nodeId, expired: false, internalUrl: f.get('internal_url') ?? '', capacity: Number(f.get('capacity') ?? 0),
        liveCalls: Number(counts[i] ?? f.get('live_calls') ?? 0), draining: f.get('draining') === '1', renewedAt: Number(f.get('renewed_at') ?? 0),
      };
    });
  }

  async deadNodes(): Promise<DeadNode[]> {
    return (await this.leases()).filter((l) => l.expired).map((l) => ({ nodeId: l.nodeId, renewedAt: l.renewedAt }));
  }

  forgetNode(nodeId: string): Promise<string[]> {
    return this.#eval<string[]>('forgetNode', FORGET_NODE, [], [nodeId]);
  }

  async admit(entry: LiveCallEntry, limits: AdmissionLimits): Promise<Admission> {
    const [ok, scope] = await this.#eval<[number, string]>('admit', ADMIT, [
      key.live(entry.tenantId), key.carrierLive(entry.carrier), key.call(entry.callId), key.nodeCalls(entry.nodeId), key.control(entry.callControlId),
    ], [
      `${entry.createdAt}|${entry.callId}`, limits.tenantLimit, limits.carrierLimit, entry.callId,
      'tenant_id', entry.tenantId, 'node_id', entry.nodeId, 'call_control_id', entry.callControlId, 'carrier', entry.carrier,
      'created_at', entry.createdAt, 'list', entry.list, 'dialogs', '{}',
    ]);
    if (ok === 1) return { ok: true };
    if (scope === 'tenant' || scope === 'carrier') return { ok: false, scope };
    throw new Error(`admit script answered an unknown scope: ${scope}`);
  }

  async update(callId: string, listItemJson: string): Promise<void> {
    await this.#eval('update', UPDATE_CALL, [key.call(callId)], ['list', listItemJson]);
  }

  /** Read, merged and written in one script so two legs' snapshots never overwrite each other. */
  async storeDialog(callId: string, leg: string, snapshotJson: string): Promise<void> {
    await this.#eval('storeDialog', STORE_DIALOG, [key.call(callId)], [leg, snapshotJson]);
  }

  async release(callId: string): Promise<void> {
    await this.#eval('release', RELEASE, [], [callId]);
  }

  /**
   * Newest first by (created_at, id), strictly after the cursor: `created_at` has a fixed width,
   * so the members `created_at|id` of a zero-score set sort BYLEX as SQL's (created_at, id) do.
   */
  async list<T extends LiveListItem>(tenantId: string, filter: LiveListFilter, page: LivePageRequest): Promise<LivePage<T>> {
    const rows: T[] = [];
    let bound = page.after ? `(${page.after.createdAt}|${page.after.id}` : '+';
    const batch = Math.max(page.limit + 1, PAGE_BATCH);
    for (;;) {
      const flat = await this.#eval<(string | null)[]>('list', LIVE_PAGE, [key.live(tenantId)], [bound, batch]);
      for (let i = 0; i + 1 < flat.length && rows.length <= page.limit; i += 2) {
        const json = flat[i + 1];
        if (typeof json !== 'string') continue; // released between the two reads of the script's caller
        const item = JSON.parse(json) as T;
        if (matches(item, filter)) rows.push(item);
      }
      if (rows.length > page.limit || flat.length < 2 * batch) break;
      bound = `(${flat[flat.length - 2]!}`;
    }
    const items = rows.slice(0, page.limit);
    const last = items[items.length - 1];
    return { items, next: rows.length > page.limit && last ? { createdAt: last.created_at, id: last.id } : null };
  }

  async ownerOf(tenantId: string, callId: string): Promise<string | undefined> {
    const [tenant, node] = await this.#run<(string | null)[]>('ownerOf', ['HMGET', key.call(callId), 'tenant_id', 'node_id']);
    return tenant === tenantId && node ? node : undefined;
  }

  async ownerOfControlId(tenantId: string, callControlId: string): Promise<string | undefined> {
    const callId = await this.#run<string | null>('ownerOfControlId', ['GET', key.control(callControlId)]);
    return callId === null ? undefined : this.ownerOf(tenantId, callId);
  }

  callsOfNode(nodeId: string): Promise<string[]> {
    return this.#run<string[]>('callsOfNode', ['SMEMBERS', key.nodeCalls(nodeId)]);
  }

  async dialogsOf(callId: string): Promise<{ tenantId: string; dialogs: Record<string, string> } | undefined> {
    const [tenant, dialogs] = await this.#run<(string | null)[]>('dialogsOf', ['HMGET', key.call(callId), 'tenant_id', 'dialogs']);
    if (!tenant) return undefined;
    const parsed = dialogs ? JSON.parse(dialogs) as unknown : {};
    // cjson encodes an empty map as `{}`; each leg's snapshot is stored as a string (STORE_DIALOG).
    const map = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed as Record<string, unknown> : {};
    return { tenantId: tenant, dialogs: Object.fromEntries(Object.entries(map).filter((e): e is [string, string] => typeof e[1] === 'string')) };
  }

  async withLock<T>(name: string, ttlMs: number, fn: () => Promise<T>): Promise<LockOutcome<T>> {
    const token = randomUUID();
    const got = await this.#run<string | null>('withLock', ['SET', key.lock(name), token, 'NX', 'PX', String(ttlMs)]);
    if (got !== 'OK') return { acquired: false };
    try {
      return { acquired: true, value: await fn() };
    } finally {
      // A lock that expired meanwhile may be another holder's now: only our token is released.
      await this.#eval('withLock', UNLOCK, [key.lock(name)], [token]).catch((err: unknown) => this.#logger.warn({ err, lock: name }, 'cannot release a cluster lock; it expires on its own'));
    }
  }

  close(): Promise<void> {
    if (this.#client.isOpen) this.#client.destroy();
    return Promise.resolve();
  }
}
