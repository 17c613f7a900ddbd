/**
 * @module Rate limits under autocannon load against the listening API (docs/API.md "Rate limits"):
 * a key over its rate gets 429 `rate_limited` with Retry-After while other keys and tenants are
 * unaffected, floods of bad credentials meet the per-address limit, and the limiter's memory
 * stays bounded with many distinct keys and addresses. Assertions are on counts, never latency.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { scaled } from './scale.js';
import { startApiWorld } from './support/api-world.js';
import { count, load, total, type LoadResult } from './support/api-load.js';

// Low enough that a flood saturates the limiter even on a loaded 2-core machine.
const RATE = 20;
const BURST = 40;
const SECONDS = scaled(2, 60);
const DISTINCT = scaled(1_000, 100_000);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use after full collections, with the harness's captured log lines dropped first. */
function heapAfterGc(logLines: string[]): number {
  logLines.length = 0;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/**
 * What the limiter may allow over a flood that saturates it for `spanMs`: one window of RATE per
 * second begun (the last one possibly cut short) plus BURST per 10 s window begun. A window of
 * slack either way absorbs timer lateness on a busy machine and requests in flight at either end.
 */
function allowedRange(spanMs: number): { low: number; high: number } {
  // The span runs from the first answer to the last, so the load itself ran a little longer.
  const seconds = spanMs / 1000;
  return { low: RATE * Math.max(0, Math.floor(seconds) - 1) + BURST, high: RATE * (Math.ceil(seconds) + 2) + BURST * (Math.floor(seconds / 10) + 1) };
}

const describe = (r: LoadResult): string => `${[...r.byStatus].map(([s, n]) => `${s}×${n}`).join(' ')} over ${(r.spanMs / 1000).toFixed(2)} s`;
const badKey = (): string => `vgw_live_${randomBytes(30).toString('base64url').slice(0, 40)}`;

t.test('docs/API.md rate limits: a key over its rate gets 429 rate_limited with Retry-After; another key and another tenant are unaffected', async (t) => {
  const world = await startApiWorld(t, { rateLimitPerSecond: RATE, rateLimitBurst: BURST });
  const sibling = (await world.h.store.apiKeys.create(world.owner.tenant.id, 'live')).apiKey;
  const bearer = (key: string) => () => ({ authorization: `Bearer ${key}` });
  const [flood, sameTenant, otherTenant] = await Promise.all([
    load({ base: world.base, path: '/v1/tenant', connections: 8, seconds: SECONDS, headers: bearer(world.owner.apiKey) }),
    load({ base: world.base, path: '/v1/tenant', connections: 2, seconds: SECONDS, rate: RATE / 2, headers: bearer(sibling) }),
    load({ base: world.base, path: '/v1/tenant', connections: 2, seconds: SECONDS, rate: RATE / 2, headers: bearer(world.intruder.apiKey) }),
  ]);
  const range = allowedRange(flood.spanMs);
  t.comment(`flooding key: ${describe(flood)}; allowed ${count(flood, 200)} in [${range.low}, ${range.high}] (rate ${RATE}/s, burst ${BURST}/10 s)`);
  t.comment(`same tenant's other key: ${describe(sameTenant)}; other tenant: ${describe(otherTenant)}`);
  t.equal(flood.errors, 0, 'no connection errors');
  t.equal(count(flood, 200) + count(flood, 429), total(flood), 'the flooding key gets only 200 and 429');
  t.ok(count(flood, 429) > 0, 'the flooding key is limited');
  t.ok(count(flood, 200) >= range.low && count(flood, 200) <= range.high, 'what it is allowed matches rate × seconds + burst');
  t.same(flood.bad429, [], 'every 429 is problem+json rate_limited with Retry-After');
  for (const [name, r] of [['another key of the tenant', sameTenant], ['another tenant', otherTenant]] as const) {
    t.ok(total(r) > 0 && count(r, 200) === total(r), `${name}: every request answered 200 during the flood`);
  }
});

t.test('docs/API.md rate limits: a flood of bad credentials meets the per-address limit, and valid keys are unaffected', async (t) => {
  const world = await startApiWorld(t, { rateLimitPerSecond: RATE, rateLimitBurst: BURST });
  const [flood, valid] = await Promise.all([
    load({ base: world.base, path: '/v1/tenant', connections: 8, seconds: SECONDS, headers: () => ({ authorization: `Bearer ${badKey()}` }) }),
    load({ base: world.base, path: '/v1/tenant', connections: 2, seconds: SECONDS, rate: RATE / 2, headers: () => world.owner.auth }),
  ]);
  const range = allowedRange(flood.spanMs);
  t.comment(`bad keys: ${describe(flood)}; 401 ${count(flood, 401)} in [${range.low}, ${range.high}]; valid key meanwhile: ${describe(valid)}`);
  t.equal(count(flood, 401) + count(flood, 429), total(flood), 'bad keys get only 401 and 429');
  t.ok(count(flood, 429) > 0, 'the address is limited');
  t.ok(count(flood, 401) >= range.low && count(flood, 401) <= range.high, 'the 401s answered match rate × seconds + burst');
  t.same(flood.bad429, [], 'every 429 is problem+json rate_limited with Retry-After');
  t.ok(total(valid) > 0 && count(valid, 200) === total(valid), 'a valid key from the same address is answered 200 throughout');
});

t.test('docs/API.md rate limits: the limiter holds no state per bad key, and state per address expires', async (t) => {
  const world = await startApiWorld(t, { rateLimitPerSecond: RATE, rateLimitBurst: BURST, trustProxy: true });
  const baseline = heapAfterGc(world.h.logLines);
  const keys = await load({ base: world.base, path: '/v1/tenant', connections: 8, amount: DISTINCT, headers: () => ({ authorization: `Bearer ${badKey()}` }) });
  const afterKeys = heapAfterGc(world.h.logLines);
  t.equal(total(keys), DISTINCT, `${DISTINCT} distinct bad keys answered`);
  let n = 0;
  const addresses = await load({
    base: world.base, path: '/healthz', connections: 8, amount: DISTINCT,
    headers: () => { n++; return { 'x-forwarded-for': `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` }; },
  });
  const afterAddresses = heapAfterGc(world.h.logLines);
  await new Promise((resolve) => setTimeout(resolve, 11_000));
  const expired = heapAfterGc(world.h.logLines);
  const mib = (bytes: number): string => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
  t.comment(`heap: baseline ${mib(baseline)}; after ${DISTINCT} bad keys ${mib(afterKeys)} (${describe(keys)}); after ${DISTINCT} addresses ${mib(afterAddresses)} (${describe(addresses)}); 11 s later ${mib(expired)}`);
  t.equal(count(addresses, 200), DISTINCT, 'each address is within its own allowance');
  t.ok(afterKeys - baseline < 4 * 2 ** 20, 'distinct bad keys leave no state behind (heap grew under 4 MiB)');
  t.ok(expired - baseline < 4 * 2 ** 20, 'per-address state is released once its windows end (heap within 4 MiB of baseline)');
});
