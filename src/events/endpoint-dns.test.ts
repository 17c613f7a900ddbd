/**
 * docs/EVENTS.md "Delivery": the resolver endpoints' names are asked of at each attempt
 * (src/common/dns-resolver.ts), against a DNS server on loopback: A and
 * AAAA answers kept for their TTL and asked again after it (a TTL of 0 never kept, so a name
 * that rebinds is asked at each lookup), one question per name at a time, NXDOMAIN and a silent
 * server as errors with their codes, lookups of a silent name that hold no thread of libuv's pool
 * (work queued on it finishes meanwhile), and `localhost` as loopback without a question (RFC 6761).
 */
import t from 'tap';
import { pbkdf2 } from 'node:crypto';
import { promisify } from 'node:util';
import { startDnsServer } from '../../test/support/dns-server.js';
import { dnsResolver } from '../common/dns-resolver.js';

t.test('answers are kept for their TTL, then asked again; a TTL of 0 is never kept', async (t) => {
  const dns = await startDnsServer(t);
  dns.records.set('hooks.example.test', [{ type: 'A', address: '198.51.100.7', ttl: 30 }, { type: 'AAAA', address: '2001:db8::7', ttl: 60 }]);
  dns.records.set('rebinding.example.test', [{ type: 'A', address: '198.51.100.8', ttl: 0 }]);
  let now = 1_000_000;
  const resolve = dnsResolver({ servers: [dns.server], now: () => now });

  t.same(await resolve('hooks.example.test'), [{ address: '198.51.100.7', family: 4 }, { address: '2001:db8::7', family: 6 }], 'IPv4 first, then IPv6');
  now += 29_000;
  t.same(await resolve('HOOKS.example.test.'), [{ address: '198.51.100.7', family: 4 }, { address: '2001:db8::7', family: 6 }]);
  t.equal(dns.asked('hooks.example.test', 'A'), 1, 'within the shortest TTL: not asked again (nor for another spelling of the name)');
  now += 2_000;
  dns.records.set('hooks.example.test', [{ type: 'A', address: '198.51.100.9', ttl: 30 }]);
  t.same(await resolve('hooks.example.test'), [{ address: '198.51.100.9', family: 4 }], 'past it: asked again, the new answer');
  t.equal(dns.asked('hooks.example.test', 'A'), 2);

  await resolve('rebinding.example.test');
  dns.records.set('rebinding.example.test', [{ type: 'A', address: '10.0.0.1', ttl: 0 }]);
  t.same(await resolve('rebinding.example.test'), [{ address: '10.0.0.1', family: 4 }], 'TTL 0: the changed answer at once, for the caller to check');
  t.equal(dns.asked('rebinding.example.test', 'A'), 2);
});

t.test('lookups of one name at the same time ask it once', async (t) => {
  const dns = await startDnsServer(t);
  dns.records.set('busy.example.test', [{ type: 'A', address: '198.51.100.10', ttl: 0 }]);
  const resolve = dnsResolver({ servers: [dns.server] });
  const answers = await Promise.all(Array.from({ length: 20 }, () => resolve('busy.example.test')));
  t.ok(answers.every((a) => a[0]?.address === '198.51.100.10'));
  t.equal(dns.asked('busy.example.test', 'A'), 1);
});

t.test('NXDOMAIN and a silent server fail with their codes; a silent name holds no thread of the pool', async (t) => {
  const dns = await startDnsServer(t);
  const resolve = dnsResolver({ servers: [dns.server], timeoutMs: 400, tries: 1 });
  await t.rejects(resolve('nowhere.example.test'), { code: 'ENOTFOUND' });

  // Eight lookups of names whose server never answers, more than libuv's four threads.
  for (let i = 0; i < 8; i++) dns.silent.add(`${i}.silent.example.test`);
  let settled = 0;
  const lookups = Array.from({ length: 8 }, (_, i) => resolve(`${i}.silent.example.test`).finally(() => { settled += 1; }));
  // Work that runs on the pool (as file writes do) is not queued behind them.
  await Promise.all(Array.from({ length: 8 }, () => promisify(pbkdf2)('x', 'salt', 1, 32, 'sha256')));
  t.equal(settled, 0, 'the pool\'s work finished while every lookup still waited for its answer');
  const outcomes = await Promise.allSettled(lookups);
  t.ok(outcomes.every((o) => o.status === 'rejected' && (o.reason as NodeJS.ErrnoException).code === 'ETIMEOUT'), 'each lookup times out');
});

t.test('localhost and names under it are loopback, without a question (RFC 6761 §6.3)', async (t) => {
  const dns = await startDnsServer(t);
  const resolve = dnsResolver({ servers: [dns.server] });
  t.same(await resolve('localhost'), [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
  t.same(await resolve('hooks.localhost'), [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }]);
  t.equal(dns.asked('localhost', 'A') + dns.asked('hooks.localhost', 'A'), 0);
});
