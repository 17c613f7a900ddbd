/** @module The `api` process's live list pages (docs/DECISIONS.md "The live call list of an api process"): what the class keeps, and for how long. */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import type { TenantId } from '../../../common/ids.js';
import { LiveListCache } from './live-list-cache.js';

const A = 'ten_a' as TenantId;
const B = 'ten_b' as TenantId;

/** A read that counts itself and answers `value`, at once or when released. */
function reader<P>(value: P) {
  let count = 0;
  const releases: (() => void)[] = [];
  return {
    count: () => count,
    now: () => { count += 1; return Promise.resolve(value); },
    later: () => {
      count += 1;
      return new Promise<P>((resolve) => releases.push(() => resolve(value)));
    },
    release: () => { for (const release of releases.splice(0)) release(); },
  };
}

t.test('fresh for the set time from when the read began, then read again; out-of-date pages are dropped', async (t) => {
  const clock = new FakeClock();
  const cache = new LiveListCache<string>({ freshForMs: 100, clock });
  const read = reader('page');
  t.equal(await cache.page(A, 'q', read.now), 'page');
  clock.advance(99);
  t.equal(await cache.page(A, 'q', read.now), 'page');
  t.equal(read.count(), 1);
  clock.advance(1);
  await cache.page(A, 'q', read.now);
  t.equal(read.count(), 2, 'read again at 100 ms');
  await cache.page(A, 'other', read.now);
  t.equal(cache.size, 2);
  clock.advance(100);
  await cache.page(B, 'q', read.now);
  t.equal(cache.size, 1, "the next request drops the pages out of date, and holds its own");
});

t.test('a read under way is shared, unless it began longer ago than the fresh-for time', async (t) => {
  const clock = new FakeClock();
  const cache = new LiveListCache<string>({ freshForMs: 100, clock });
  const read = reader('page');
  const first = cache.page(A, 'q', read.later);
  const second = cache.page(A, 'q', read.later);
  t.equal(read.count(), 1, 'one read for both');
  clock.advance(100);
  const third = cache.page(A, 'q', read.later);
  t.equal(read.count(), 2, 'a read begun 100 ms ago would bring an out-of-date page: a new one');
  read.release();
  t.same(await Promise.all([first, second, third]), ['page', 'page', 'page']);
});

t.test('a failed read is passed to its callers and kept by no one', async (t) => {
  const cache = new LiveListCache<string>({ freshForMs: 100, clock: new FakeClock() });
  let fail = true;
  const read = () => (fail ? Promise.reject(new Error('database busy')) : Promise.resolve('page'));
  const waiting = [cache.page(A, 'q', read), cache.page(A, 'q', read)];
  for (const page of waiting) await t.rejects(page, /database busy/);
  t.equal(cache.size, 0);
  fail = false;
  t.equal(await cache.page(A, 'q', read), 'page', 'the next request reads again');
});

t.test("invalidate drops the tenant's pages, reads under way included, and no other tenant's", async (t) => {
  const cache = new LiveListCache<string>({ freshForMs: 100, clock: new FakeClock() });
  const before = reader('before');
  const after = reader('after');
  const other = reader('other');
  await cache.page(A, 'q1', before.now);
  const underWay = cache.page(A, 'q2', before.later);
  await cache.page(B, 'q1', other.now);
  cache.invalidate(A);
  t.equal(cache.size, 1, "only B's page is left");
  before.release();
  t.equal(await underWay, 'before', 'the read under way still answers the request that began it');
  t.equal(await cache.page(A, 'q2', after.now), 'after', 'but is not kept for the next');
  t.equal(await cache.page(A, 'q1', after.now), 'after');
  t.equal(await cache.page(B, 'q1', other.now), 'other');
  t.equal(other.count(), 1);
  cache.invalidate(B);
  cache.invalidate(B);
  t.equal(cache.size, 2, 'dropping twice, or a tenant with nothing held, is harmless');
});

t.test('at most maxPages are held, the oldest giving way', async (t) => {
  const cache = new LiveListCache<string>({ freshForMs: 100, maxPages: 2, clock: new FakeClock() });
  const read = reader('page');
  await cache.page(A, 'q1', read.now);
  await cache.page(B, 'q1', read.now);
  await cache.page(A, 'q2', read.now);
  t.equal(cache.size, 2);
  await cache.page(B, 'q1', read.now);
  await cache.page(A, 'q2', read.now);
  t.equal(read.count(), 3, 'the two newest are held');
  await cache.page(A, 'q1', read.now);
  t.equal(read.count(), 4, 'the oldest was dropped');
  cache.invalidate(A);
  t.equal(cache.size, 0, "the tenant's index follows what was dropped");
});

t.test('the same request string of two tenants is two pages', async (t) => {
  const cache = new LiveListCache<string>({ freshForMs: 100, clock: new FakeClock() });
  t.equal(await cache.page(A, 'q', () => Promise.resolve('a')), 'a');
  t.equal(await cache.page(B, 'q', () => Promise.resolve('b')), 'b');
  t.equal(await cache.page(A, 'q', () => Promise.resolve('wrong')), 'a');
});

t.test('a fresh-for time of 0 is refused: the api role reads per request instead', (t) => {
  t.throws(() => new LiveListCache({ freshForMs: 0, clock: new FakeClock() }), RangeError);
  t.end();
});
