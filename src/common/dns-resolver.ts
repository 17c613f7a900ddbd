/**
 * @module The {@link HostResolver} of the names a tenant gives (an agent URL's at each call, a
 * webhook endpoint's at each delivery, a recording download's). Its queries go out by c-ares
 * (node:dns `Resolver`), which holds no thread while it waits, instead of getaddrinfo(3) on
 * libuv's pool of four threads, where lookups of a name whose DNS servers do not answer would
 * each hold a thread for seconds and delay every other lookup and every file write of the
 * process (recordings) behind them. Answers
 * are kept for their TTL (at most {@link DnsResolverOptions.maxTtlS}; a TTL of 0 is not kept), and
 * a name being asked is asked once, the others waiting for its answer. The caller checks every
 * answer, kept or new, against the outbound-address policy. `localhost` and the names under it
 * are loopback (RFC 6761 §6.3), as DNS does not answer them; the hosts file is not read.
 */
import { Resolver } from 'node:dns/promises';
import type { HostResolver, ResolvedAddress } from './outbound-policy.js';

export interface DnsResolverOptions {
  /** DNS servers (`address` or `address:port`); the system's (/etc/resolv.conf) when absent. */
  servers?: readonly string[];
  /** One query's time-out; c-ares doubles it at each try. */
  timeoutMs?: number;
  tries?: number;
  /** The longest an answer is kept, whatever its TTL. */
  maxTtlS?: number;
  now?: () => number;
}

/** Names whose answers are kept at most; past this the oldest is dropped. */
const MAX_NAMES = 1_024;
const LOOPBACK: readonly ResolvedAddress[] = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
/** Errors that say a record type is missing, not that the name could not be asked. */
const NO_RECORDS = new Set(['ENODATA', 'ENOTFOUND']);

export function dnsResolver(o: DnsResolverOptions = {}): HostResolver {
  const resolver = new Resolver({ timeout: o.timeoutMs ?? 2_000, tries: o.tries ?? 2 });
  if (o.servers) resolver.setServers([...o.servers]);
  const now = o.now ?? Date.now;
  const maxTtlMs = (o.maxTtlS ?? 300) * 1_000;
  const kept = new Map<string, { until: number; addresses: readonly ResolvedAddress[] }>();
  const asking = new Map<string, Promise<readonly ResolvedAddress[]>>();

  const ask = async (name: string): Promise<readonly ResolvedAddress[]> => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(name, { ttl: true }), resolver.resolve6(name, { ttl: true })]);
    const records = [
      ...(v4.status === 'fulfilled' ? v4.value.map((r) => ({ ...r, family: 4 })) : []),
      ...(v6.status === 'fulfilled' ? v6.value.map((r) => ({ ...r, family: 6 })) : []),
    ];
    if (records.length === 0) {
      const errors = [v4, v6].flatMap((r) => (r.status === 'rejected' ? [r.reason as NodeJS.ErrnoException] : []));
      throw errors.find((err) => !NO_RECORDS.has(err.code ?? '')) ?? errors[0] ?? Object.assign(new Error(`${name}: no addresses`), { code: 'ENODATA' });
    }
    const addresses = records.map(({ address, family }) => ({ address, family }));
    const ttlMs = Math.min(maxTtlMs, ...records.map((r) => r.ttl * 1_000));
    if (ttlMs > 0) {
      kept.delete(name);
      kept.set(name, { until: now() + ttlMs, addresses });
      if (kept.size > MAX_NAMES) kept.delete(kept.keys().next().value!);
    }
    return addresses;
  };

  return (hostname) => {
    const name = hostname.toLowerCase().replace(/\.$/, '');
    if (name === 'localhost' || name.endsWith('.localhost')) return Promise.resolve(LOOPBACK);
    const known = kept.get(name);
    if (known && known.until > now()) return Promise.resolve(known.addresses);
    let answer = asking.get(name);
    if (!answer) {
      answer = ask(name).finally(() => asking.delete(name));
      asking.set(name, answer);
    }
    return answer;
  };
}
