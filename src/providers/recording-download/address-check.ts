/**
 * @module Resolving a recording host once and refusing it when any answer is not public. Adds to
 * common/address-policy the IPv6 forms that embed an IPv4 address (RFC 6052 NAT64, RFC 3056
 * 6to4, RFC 4291 §2.5.5.1 IPv4-compatible, RFC 6145 SIIT) plus Teredo and site-local space.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isNonPublicAddress } from '../../common/address-policy.js';

/** One resolved address, as node:dns `lookup(host, {all: true})` returns it. */
export interface ResolvedAddress {
  address: string;
  family: number;
}

/** Resolves a host name to all its addresses. Injectable so tests can answer without DNS. */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

export const systemResolver: Resolver = (hostname) => lookup(hostname, { all: true, verbatim: true });

/** The eight 16-bit words of an IPv6 address, or undefined when it is not one. */
function ipv6Words(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.split('%')[0]!.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, undefined];
  const headWords = head ? head.split(':') : [];
  const tailWords = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - headWords.length - tailWords.length;
  const words = [...headWords, ...Array<string>(fill).fill('0'), ...tailWords].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** The IPv4 address an IPv6 address carries in one of the translation or tunnel forms, if any. */
function embeddedIpv4(w: number[]): string | undefined {
  const zeros = (from: number, to: number): boolean => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 6)) return v4(w[6]!, w[7]!); // ::a.b.c.d (IPv4-compatible, deprecated)
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return v4(w[6]!, w[7]!); // ::ffff:0:a.b.c.d (SIIT)
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4(w[6]!, w[7]!); // 64:ff9b::/96 (NAT64)
  if (w[0] === 0x2002) return v4(w[1]!, w[2]!); // 2002::/16 (6to4)
  return undefined;
}

/** True when the gateway must not connect to `address` to fetch a recording. */
export function isRefusedAddress(address: string): boolean {
  if (isNonPublicAddress(address)) return true;
  const words = ipv6Words(address.replace(/^\[|\]$/g, ''));
  if (!words) return false;
  // Teredo (2001:0::/32) hides the client address; site-local (fec0::/10) is deprecated private space.
  if ((words[0] === 0x2001 && words[1] === 0) || (words[0]! & 0xffc0) === 0xfec0) return true;
  const inner = embeddedIpv4(words);
  return inner !== undefined && isNonPublicAddress(inner);
}
