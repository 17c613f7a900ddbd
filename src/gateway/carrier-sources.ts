/** @module Carrier source filtering (contract section 8): whether an address is one of a carrier's `inbound.sources`. */
import { BlockList, isIP } from 'node:net';

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
