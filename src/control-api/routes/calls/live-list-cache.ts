/**
 * @module The `api` process's short-lived cache of live call list pages (docs/ARCHITECTURE.md
 * "Process roles"): `GET /v1/calls` without `state` is read there from the database, which the
 * engines write, at about 0.5 ms of CPU per page of 50 (docs/PERFORMANCE.md "At 100 calls"),
 * while the list itself changes a few times a second per tenant. A page, as presented, is served
 * again for `api.live_list_cache_ms` (docs/CONFIGURATION.md); the choice is in docs/DECISIONS.md
 * "The live call list of an api process".
 *
 * - Pages are held per tenant and per request (the route names the API key's scope, the filter,
 *   the limit and the cursor): a tenant's pages are never another's, a sandbox key's never a
 *   live key's.
 * - Concurrent requests for a page nobody holds share one read; a read that fails is kept by no
 *   one, and the next request reads again.
 * - A page is fresh for the set time from when its read began, then dropped (at the next request
 *   that finds it out of date); at most `maxPages` are kept, the oldest giving way.
 * - {@link invalidate} drops a tenant's pages, reads under way included, so that what a read
 *   begun before a command brings back is never kept for a request after it.
 */
import type { Clock } from '../../../common/clock.js';
import type { TenantId } from '../../../common/ids.js';

export interface LiveListCacheOptions {
  /** How long a page is served without reading again, from when its read began; above 0. */
  freshForMs: number;
  /** Pages kept at most, across tenants; the oldest is dropped for a new one. */
  maxPages?: number;
  clock: Pick<Clock, 'monotonic'>;
  /** Told where each page came from: held (`cache`, a read under way included) or read now (`read`). */
  onServe?: (source: 'cache' | 'read') => void;
}

/**
 * Pages held at once by default. A page is dropped once out of date, so it takes this many
 * different pages read within the fresh-for time to reach the cap (1,000 reads a second at
 * 250 ms); a page of 50 calls is about 25 KB as JSON.
 */
export const DEFAULT_MAX_PAGES = 256;

interface Entry<P> {
  readonly tenantId: TenantId;
  readonly page: Promise<P>;
  /** The monotonic time from which the page is no longer served. */
  readonly staleAt: number;
}

/** Presented pages of the live call list (`P`: the response body), per tenant and request. */
export class LiveListCache<P> {
  readonly #freshForMs: number;
  readonly #maxPages: number;
  readonly #clock: Pick<Clock, 'monotonic'>;
  readonly #onServe: ((source: 'cache' | 'read') => void) | undefined;
  /** In the order their reads began, which is the order they go out of date. */
  readonly #entries = new Map<string, Entry<P>>();
  readonly #keysOf = new Map<TenantId, Set<string>>();

  constructor(options: LiveListCacheOptions) {
    if (!(options.freshForMs > 0)) throw new RangeError('freshForMs must be above 0');
    this.#freshForMs = options.freshForMs;
    this.#maxPages = Math.max(1, options.maxPages ?? DEFAULT_MAX_PAGES);
    this.#clock = options.clock;
    this.#onServe = options.onServe;
  }

  /** Pages held (reads under way included). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The tenant's page for `request` (a string naming everything the page depends on besides the
   * tenant): the one held while fresh, or the one being read, or what `read` brings back.
   */
  page(tenantId: TenantId, request: string, read: () => Promise<P>): Promise<P> {
    const now = this.#clock.monotonic();
    this.#dropStale(now);
    const key = JSON.stringify([tenantId, request]);
    const held = this.#entries.get(key);
    if (held) {
      this.#onServe?.('cache');
      return held.page;
    }
    this.#onServe?.('read');
    const entry: Entry<P> = { tenantId, page: read(), staleAt: now + this.#freshForMs };
    this.#entries.set(key, entry);
    let keys = this.#keysOf.get(tenantId);
    if (!keys) this.#keysOf.set(tenantId, (keys = new Set()));
    keys.add(key);
    // Its callers see the failure; no later request does.
    void entry.page.catch(() => { if (this.#entries.get(key) === entry) this.#drop(key, entry); });
    if (this.#entries.size > this.#maxPages) this.#dropOldest();
    return entry.page;
  }

  /** Drops the tenant's pages: the next request of each reads again. */
  invalidate(tenantId: TenantId): void {
    const keys = this.#keysOf.get(tenantId);
    if (!keys) return;
    for (const key of keys) this.#entries.delete(key);
    this.#keysOf.delete(tenantId);
  }

  #dropStale(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (entry.staleAt > now) return;
      this.#drop(key, entry);
    }
  }

  #dropOldest(): void {
    const oldest = this.#entries.entries().next();
    if (!oldest.done) this.#drop(...oldest.value);
  }

  #drop(key: string, entry: Entry<P>): void {
    this.#entries.delete(key);
    const keys = this.#keysOf.get(entry.tenantId);
    keys?.delete(key);
    if (keys?.size === 0) this.#keysOf.delete(entry.tenantId);
  }
}
