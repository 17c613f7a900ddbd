/**
 * @module Drives calls through the control API as a customer would: POST /v1/calls at a fixed
 * rate (open loop: a slow answer never delays the next call), a poller that sees when each call
 * turns `active`, and hang-ups. Setup time is from just before the POST to the arrival of the
 * first poll answer listing the call as active, so it is over-stated by up to one poll period.
 */

/** One call the benchmark placed. Times are Date.now() ms. */
/** The calling number of every benchmark call; the benchmark's tenant holds it on each carrier. */
export const CALLER_NUMBER = '+15550100';

export interface PlacedCall {
  id: string | null;
  carrier: string;
  postedAt: number;
  activeAt?: number;
  /** Why it counts as failed: an HTTP status and code, an end reason, or `timeout`. */
  failure?: string;
}

interface CallsPage {
  data: { id: string; state: string; end_reason: string | null }[];
  has_more: boolean;
  next_cursor: string | null;
}

/** How often the poller asks for active calls while some are pending. */
export const POLL_MS = 20;
const POLL_PAGE = 100;
const REQUEST_TIMEOUT_MS = 20_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export class CallDriver {
  readonly #base: string;
  readonly #key: string;
  readonly #agentUrl: string;
  readonly #pending = new Map<string, PlacedCall>();
  #polling = false;
  #number = 0;
  /** Calls whose hang-up request got no answer within the request time-out (or failed). */
  readonly unansweredHangups = new Set<string>();
  /** Called once per call when it is first seen active. */
  onActive: (call: PlacedCall) => void = () => undefined;

  constructor(base: string, key: string, agentUrl: string) {
    this.#base = base;
    this.#key = key;
    this.#agentUrl = agentUrl;
  }

  async #api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.#key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      // A request the gateway never answers must not stall the benchmark: it counts as failed.
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as T };
  }

  /** POSTs one call; a refused POST is a failed call. `track`: watch for it turning active. */
  async placeOne(carrier: string, track = true): Promise<PlacedCall> {
    this.#number += 1;
    const to = `+1555${String(1_000_000 + (this.#number % 9_000_000)).padStart(7, '0')}`;
    const call: PlacedCall = { id: null, carrier, postedAt: Date.now() };
    try {
      const r = await this.#api<{ id: string; code?: string }>('POST', '/v1/calls', { from: CALLER_NUMBER, to, carrier, agent_ws_url: this.#agentUrl });
      if (r.status !== 200) call.failure = `HTTP ${r.status} ${r.body.code ?? ''}`.trim();
      else {
        call.id = r.body.id;
        if (track) this.#pending.set(call.id, call);
      }
    } catch (err) {
      call.failure = `POST failed: ${(err as Error).message}`;
    }
    return call;
  }

  /** Places `count` calls at `rate` per second; resolves once every POST is answered. */
  async place(carrier: string, count: number, rate: number): Promise<PlacedCall[]> {
    const t0 = performance.now();
    const posts: Promise<PlacedCall>[] = [];
    for (let i = 0; i < count; i += 1) {
      const wait = t0 + (i * 1000) / rate - performance.now();
      if (wait > 0) await sleep(wait);
      posts.push(this.placeOne(carrier));
    }
    return Promise.all(posts);
  }

  /** Polls the active list while calls are pending; run it beside place(). */
  startPolling(): void {
    if (this.#polling) return;
    this.#polling = true;
    void this.#pollLoop();
  }

  stopPolling(): void {
    this.#polling = false;
  }

  async #pollLoop(): Promise<void> {
    while (this.#polling) {
      const sentAt = Date.now();
      if (this.#pending.size > 0) await this.#pollActive().catch(() => undefined);
      const left = POLL_MS - (Date.now() - sentAt);
      if (left > 0) await sleep(left);
    }
  }

  async #pollActive(): Promise<void> {
    let cursor: string | null = null;
    for (let page = 0; page < 10 && this.#pending.size > 0; page += 1) {
      const query: string = `/v1/calls?state=active&limit=${POLL_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r = await this.#api<CallsPage>('GET', query);
      const seenAt = Date.now();
      if (r.status !== 200) return;
      for (const item of r.body.data) {
        const call = this.#pending.get(item.id);
        if (!call) continue;
        call.activeAt = seenAt;
        this.#pending.delete(item.id);
        this.onActive(call);
      }
      if (!r.body.has_more || !r.body.next_cursor) return;
      cursor = r.body.next_cursor;
    }
  }

  /** Waits until none of `calls` is pending, marking those still pending after `timeoutMs` as failed. */
  async settle(calls: readonly PlacedCall[], timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (calls.some((c) => c.id !== null && this.#pending.has(c.id)) && Date.now() < deadline) await sleep(50);
    // Only now are the calls never seen active looked up one by one (during the run that would
    // load the gateway most when it is already behind): an ended one failed with its end reason.
    for (const call of calls) {
      if (call.id === null || !this.#pending.has(call.id)) continue;
      this.#pending.delete(call.id);
      const r = await this.#api<{ state: string; end_reason: string | null }>('GET', `/v1/calls/${call.id}`).catch(() => null);
      call.failure = r?.body.state === 'ended' ? `ended: ${r.body.end_reason ?? 'unknown'}` : `not active within ${timeoutMs / 1000} s (${r?.body.state ?? 'unknown'})`;
    }
  }

  /** Hangs up calls with at most `concurrency` requests in flight. */
  async hangup(ids: readonly string[], concurrency = 16): Promise<number> {
    let next = 0;
    let failed = 0;
    const worker = async (): Promise<void> => {
      while (next < ids.length) {
        const id = ids[next++]!;
        const r = await this.#api('POST', `/v1/calls/${id}/hangup`).catch(() => ({ status: 0 }));
        if (r.status !== 200 && r.status !== 409) {
          failed += 1;
          this.unansweredHangups.add(id);
        }
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    return failed;
  }

  /** Every live call of the tenant (ids and states), paging through the list. */
  async live(): Promise<{ id: string; state: string }[]> {
    const out: { id: string; state: string }[] = [];
    let cursor: string | null = null;
    for (;;) {
      const query: string = `/v1/calls?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const r = await this.#api<CallsPage>('GET', query);
      out.push(...r.body.data.map((c) => ({ id: c.id, state: c.state })));
      if (!r.body.has_more || !r.body.next_cursor) return out;
      cursor = r.body.next_cursor;
    }
  }

  /** Hangs up everything live and waits until the list is empty (or `timeoutMs`); calls whose hang-up went unanswered are left alone. */
  async hangupAll(timeoutMs = 60_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    const remaining = (): Promise<{ id: string; state: string }[]> => this.live().then((all) => all.filter((c) => !this.unansweredHangups.has(c.id)));
    let left = await remaining();
    while (left.length > 0 && Date.now() < deadline) {
      await this.hangup(left.map((c) => c.id));
      await sleep(500);
      left = await remaining();
    }
    return left.length;
  }
}
