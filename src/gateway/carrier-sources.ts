/**
 * @module Carrier source filtering (`inbound.sources`, docs/CONFIGURATION.md): whether an address is one of a carrier's
 * `inbound.sources`, and which address a request is matched by when it came through a trusted
 * edge proxy (`sip.trusted_proxies`, docs/ARCHITECTURE.md "Trusted edge proxies").
 */
import { BlockList, isIP } from 'node:net';
import { stripBrackets } from '../common/address-policy.js';
import type { SipRequest, SipSource } from '../engine/sip/index.js';

/** The header a trusted edge proxy adds with the source the request reached it from (`ip` or `ip:port`). */
export const FORWARDED_SOURCE_HEADER = 'X-VGW-Source';

const lists = new WeakMap<readonly string[], BlockList>();

/** The sources (addresses and CIDRs, validated at start) as a node:net BlockList, built once per list. */
function listOf(sources: readonly string[]): BlockList {
  let list = lists.get(sources);
  if (!list) {
    list = new BlockList();
    for (const source of sources) {
      const [address = '', prefix] = source.split('/');
      const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
      if (prefix === undefined) list.addAddress(address, family);
      else list.addSubnet(address, Number(prefix), family);
    }
    lists.set(sources, list);
  }
  return list;
}

/** True when `address` (IPv4, IPv6, or IPv4-mapped IPv6) is within `sources`. */
export function sourceMatches(sources: readonly string[], address: string): boolean {
  if (sources.length === 0) return false;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
  const plain = mapped ?? address;
  const family = isIP(plain);
  if (family === 0) return false;
  return listOf(sources).check(plain, family === 6 ? 'ipv6' : 'ipv4');
}

/**
 * The address of a forwarded-source value: `192.0.2.7`, `192.0.2.7:5060`, `2001:db8::7` or
 * `[2001:db8::7]:5060`, optionally followed by parameters (`;transport=udp`); null when it is none.
 */
export function forwardedAddress(value: string): string | null {
  const v = (value.split(';')[0] ?? '').trim();
  if (isIP(v) !== 0) return v;
  // What is left is `host:port`, `[v6]` or `[v6]:port`: without its port and brackets, an address or nothing.
  const candidate = stripBrackets(/^(.*):\d{1,5}$/.exec(v)?.[1] ?? v);
  return isIP(candidate) !== 0 ? candidate : null;
}

/**
 * The address a request is matched against carriers' `inbound.sources` by. From a trusted edge
 * proxy, the one `X-VGW-Source` it added (the carrier behind it); without a usable one, the proxy's
 * own address, as before proxies were trusted. From anyone else the packet's source: the header
 * is ignored, so a caller cannot claim another carrier's address by writing it.
 */
export function matchingAddress(source: SipSource, request: SipRequest, trustedProxies: readonly string[]): string {
  if (!sourceMatches(trustedProxies, source.address)) return source.address;
  const values = request.headers.getAll(FORWARDED_SOURCE_HEADER);
  const forwarded = values.length === 1 ? forwardedAddress(values[0] ?? '') : null;
  return forwarded ?? source.address;
}
