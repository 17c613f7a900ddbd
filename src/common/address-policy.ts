/**
 * @module Which IP addresses a user-supplied URL may make the gateway connect to. Loopback,
 * private, link-local (cloud metadata at 169.254.169.254 included), CGNAT, multicast, reserved,
 * documentation and unspecified ranges are refused, in IPv4 and IPv6, and so are IPv6 forms that
 * carry a refused IPv4 address: IPv4-mapped and IPv4-compatible (RFC 4291 2.5.5), SIIT (RFC 6145),
 * NAT64 (RFC 6052) and 6to4 (RFC 3056). Teredo and site-local space are refused outright.
 */
import { BlockList, isIP } from 'node:net';

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15],
  ['198.51.100.0', 24], ['203.0.113.0', 24], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128], ['::1', 128], ['64:ff9b:1::', 48], ['100::', 64], ['2001::', 32], ['2001:db8::', 32],
  ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8],
] as const) blocked.addSubnet(net, prefix, 'ipv6');

/** The eight 16-bit words of an IPv6 address (dotted tails folded in), or undefined. */
function ipv6Words(address: string): number[] | undefined {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const headWords = head ? head.split(':') : [];
  const tailWords = tail ? tail.split(':') : [];
  const fill = tail === undefined ? 0 : 8 - headWords.length - tailWords.length;
  const words = [...headWords, ...Array<string>(Math.max(0, fill)).fill('0'), ...tailWords].map((w) => parseInt(w, 16));
  return words.length === 8 && words.every((w) => Number.isInteger(w) && w >= 0 && w <= 0xffff) ? words : undefined;
}

const v4 = (hi: number, lo: number): string => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;

/** The IPv4 address an IPv6 address carries in a mapping, translation or tunnel form, if any. */
function embeddedIpv4(w: number[]): string | undefined {
  const zeros = (from: number, to: number): boolean => w.slice(from, to).every((x) => x === 0);
  if (zeros(0, 5) && w[5] === 0xffff) return v4(w[6]!, w[7]!); // ::ffff:a.b.c.d (mapped)
  if (zeros(0, 6)) return v4(w[6]!, w[7]!); // ::a.b.c.d (IPv4-compatible, deprecated)
  if (zeros(0, 4) && w[4] === 0xffff && w[5] === 0) return v4(w[6]!, w[7]!); // ::ffff:0:a.b.c.d (SIIT)
  if (w[0] === 0x64 && w[1] === 0xff9b && zeros(2, 6)) return v4(w[6]!, w[7]!); // 64:ff9b::/96 (NAT64)
  if (w[0] === 0x2002) return v4(w[1]!, w[2]!); // 2002::/16 (6to4)
  return undefined;
}

/**
 * A host as it appears in a URL or SIP URI, without the brackets of an IPv6 literal
 * (`[::1]` → `::1`): the form name resolution, `isIP` and socket options take.
 */
export function stripBrackets(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** True when `address` (a literal IP) is one the gateway must not connect to for a user. */
export function isNonPublicAddress(address: string): boolean {
  const bare = stripBrackets(address).split('%')[0]!;
  const family = isIP(bare);
  if (family === 0) return true; // not an address at all: refuse rather than guess
  if (family === 4) return blocked.check(bare, 'ipv4');
  const words = ipv6Words(bare);
  if (!words) return true;
  const inner = embeddedIpv4(words);
  if (inner !== undefined && blocked.check(inner, 'ipv4')) return true;
  return blocked.check(bare, 'ipv6');
}

/**
 * A quick check of a URL's host before any lookup: literal non-public IPs and `localhost` names
 * are refused. Names must still be resolved and each address checked at connect time.
 */
export function isNonPublicHost(hostname: string): boolean {
  const host = stripBrackets(hostname).toLowerCase().replace(/\.$/, '');
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  return isIP(host) !== 0 && isNonPublicAddress(host);
}

/** An IPv4/IPv6 address or a CIDR block with a prefix length that fits its family. */
export function isAddressOrCidr(value: string): boolean {
  const [address, prefix, ...rest] = value.split('/');
  if (rest.length > 0 || address === undefined) return false;
  const family = isIP(address);
  if (family === 0) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}
