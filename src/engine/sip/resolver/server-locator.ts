/** @module RFC 3263 server location: a SIP or SIPS URI to an ordered list of transport, address and port. */
import { Resolver as DnsPromisesResolver } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { NaptrRecord, SrvRecord } from 'node:dns';
import { parseUri, type SipUri } from '../grammar/uri.js';
import type { TransportProtocol, TransportTarget } from '../transport/transport.js';

/** The part of node:dns/promises `Resolver` this module uses, so tests can inject answers. */
export interface DnsLookup {
  resolveNaptr(hostname: string): Promise<NaptrRecord[]>;
  resolveSrv(hostname: string): Promise<SrvRecord[]>;
  resolve4(hostname: string): Promise<string[]>;
  resolve6(hostname: string): Promise<string[]>;
}

export interface ServerLocatorOptions {
  /** DNS access; defaults to a node:dns/promises Resolver using the system servers. */
  dns?: DnsLookup;
  /** Transports this element can use (default UDP, TCP, TLS). */
  transports?: readonly TransportProtocol[];
  /** Put AAAA addresses before A addresses (default false). */
  preferIpv6?: boolean;
  /** Random source for RFC 2782 weighted selection (tests make it deterministic). */
  random?: () => number;
}

/** A resolved target: transport, address, port, and the domain it came from (TLS server name). */
export type ResolvedTarget = Required<Pick<TransportTarget, 'protocol' | 'address' | 'port'>> & { hostname?: string };

/** RFC 3263 4.1 NAPTR services (RFC 3263 4.1, RFC 3261 26.2 for SIPS). */
const NAPTR_SERVICES: Readonly<Record<string, TransportProtocol>> = { 'SIP+D2U': 'UDP', 'SIP+D2T': 'TCP', 'SIPS+D2T': 'TLS' };
const SRV_PREFIX: Readonly<Record<TransportProtocol, string>> = { UDP: '_sip._udp.', TCP: '_sip._tcp.', TLS: '_sips._tcp.' };
const DEFAULT_PORT: Readonly<Record<TransportProtocol, number>> = { UDP: 5060, TCP: 5060, TLS: 5061 };

/**
 * Locates the servers for a URI per RFC 3263 4: numeric host → that address; explicit port →
 * A/AAAA; transport parameter → SRV for it, then A/AAAA; otherwise NAPTR, then SRV for each
 * supported transport (_sip._udp, _sip._tcp, _sips._tcp), then A/AAAA with UDP (TLS for sips).
 * The list is in the order to try (RFC 3263 4.3). DNS failures yield fewer targets, never throw.
 */
export class ServerLocator {
  readonly #dns: DnsLookup;
  readonly #transports: readonly TransportProtocol[];
  readonly #preferIpv6: boolean;
  readonly #random: () => number;

  constructor(options: ServerLocatorOptions = {}) {
    this.#dns = options.dns ?? new DnsPromisesResolver();
    this.#transports = options.transports ?? ['UDP', 'TCP', 'TLS'];
    this.#preferIpv6 = options.preferIpv6 ?? false;
    this.#random = options.random ?? Math.random;
  }

  async locate(target: SipUri | string): Promise<ResolvedTarget[]> {
    const uri = typeof target === 'string' ? parseUri(target) : target;
    if (uri.scheme !== 'sip' && uri.scheme !== 'sips') return [];
    const secure = uri.scheme === 'sips';
    // RFC 3263 4: maddr, when present, is the host to resolve.
    const host = uri.params.get('maddr') ?? uri.host;
    const forced = transportParam(uri, secure);
    if (forced === null) return [];
    // RFC 3263 4.1: UDP for sip (TCP when UDP is not supported here), TLS for sips.
    const fallback = forced ?? (secure ? 'TLS' : this.#transports.includes('UDP') ? 'UDP' : 'TCP');
    if (!this.#transports.includes(fallback)) return [];
    // RFC 3263 4.1 and 4.2: a numeric address, or an explicit port, skips NAPTR and SRV.
    if (isIP(host) !== 0) return [{ protocol: fallback, address: host, port: uri.port ?? DEFAULT_PORT[fallback] }];
    if (uri.port !== undefined) return this.#addresses(host, fallback, uri.port);
    if (forced !== undefined) return this.#srvThenAddresses(host, [forced]);
    const viaNaptr = await this.#naptr(host, secure);
    if (viaNaptr.length > 0) return viaNaptr;
    const offered: TransportProtocol[] = secure ? ['TLS'] : ['UDP', 'TCP', 'TLS'];
    return this.#srvThenAddresses(host, offered.filter((p) => this.#transports.includes(p)), fallback);
  }

  /** RFC 3263 4.1: NAPTR records for SIP services, sorted by order then preference, each followed through SRV. */
  async #naptr(host: string, secure: boolean): Promise<ResolvedTarget[]> {
    const records = (await quiet(this.#dns.resolveNaptr(host)))
      .filter((r) => r.flags.toLowerCase() === 's')
      .map((r) => ({ r, protocol: NAPTR_SERVICES[r.service.toUpperCase()] }))
      .filter((x): x is { r: NaptrRecord; protocol: TransportProtocol } => x.protocol !== undefined)
      // RFC 3263 4.1: a SIPS URI uses only SIPS+D2T; unsupported transports are discarded.
      .filter((x) => (!secure || x.protocol === 'TLS') && this.#transports.includes(x.protocol))
      .sort((a, b) => a.r.order - b.r.order || a.r.preference - b.r.preference);
    const out: ResolvedTarget[] = [];
    for (const { r, protocol } of records) out.push(...(await this.#srv(r.replacement, protocol, host)));
    return dedupe(out);
  }

  async #srvThenAddresses(host: string, protocols: readonly TransportProtocol[], fallback?: TransportProtocol): Promise<ResolvedTarget[]> {
    const lists = await Promise.all(protocols.map((p) => this.#srv(`${SRV_PREFIX[p]}${host}`, p, host)));
    const out = lists.flat();
    if (out.length > 0) return dedupe(out);
    // RFC 3263 4.2: no SRV records: A/AAAA on the host with the transport's default port.
    const p = fallback ?? protocols[0];
    return p === undefined ? [] : this.#addresses(host, p, DEFAULT_PORT[p]);
  }

  async #srv(name: string, protocol: TransportProtocol, hostname: string): Promise<ResolvedTarget[]> {
    const records = orderSrv((await quiet(this.#dns.resolveSrv(name))).filter((r) => r.name !== '.' && r.name !== ''), this.#random);
    const out: ResolvedTarget[] = [];
    for (const r of records) {
      for (const t of await this.#addresses(r.name, protocol, r.port)) out.push({ ...t, hostname });
    }
    return out;
  }

  async #addresses(host: string, protocol: TransportProtocol, port: number): Promise<ResolvedTarget[]> {
    const [v4, v6] = await Promise.all([quiet(this.#dns.resolve4(host)), quiet(this.#dns.resolve6(host))]);
    const ordered = this.#preferIpv6 ? [...v6, ...v4] : [...v4, ...v6];
    return ordered.map((address) => ({ protocol, address, port, hostname: host }));
  }
}

/** The transport forced by `;transport=`: undefined when absent, null when unusable here. */
function transportParam(uri: SipUri, secure: boolean): TransportProtocol | undefined | null {
  const t = uri.params.get('transport')?.toLowerCase();
  if (t === undefined) return undefined;
  if (t === 'tcp') return secure ? 'TLS' : 'TCP';
  if (t === 'tls') return 'TLS'; // RFC 3261 19.1.2 deprecated form
  if (t === 'udp') return secure ? null : 'UDP';
  return null;
}

/** RFC 2782: ascending priority; within a priority, weighted random order (weight 0 rarely first). */
export function orderSrv(records: readonly SrvRecord[], random: () => number): SrvRecord[] {
  const byPriority = new Map<number, SrvRecord[]>();
  for (const r of records) byPriority.set(r.priority, [...(byPriority.get(r.priority) ?? []), r]);
  const out: SrvRecord[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => a - b)) {
    // Zero-weight records first in the pool, as RFC 2782 asks, so they get a small chance.
    const pool = [...byPriority.get(priority)!].sort((a, b) => a.weight - b.weight);
    while (pool.length > 0) {
      const total = pool.reduce((s, r) => s + r.weight, 0);
      const pick = Math.floor(random() * (total + 1));
      let running = 0;
      let index = pool.findIndex((r) => (running += r.weight) >= pick);
      if (index < 0) index = pool.length - 1;
      out.push(...pool.splice(index, 1));
    }
  }
  return out;
}

async function quiet<T>(p: Promise<T[]>): Promise<T[]> {
  try {
    return await p;
  } catch {
    return []; // ENODATA, ENOTFOUND, SERVFAIL: this path gives no targets
  }
}

function dedupe(targets: ResolvedTarget[]): ResolvedTarget[] {
  const seen = new Set<string>();
  return targets.filter((t) => {
    const key = `${t.protocol}|${t.address}|${t.port}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
