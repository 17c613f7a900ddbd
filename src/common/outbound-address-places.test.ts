/**
 * @module docs/SECURITY.md "Outbound addresses": the checks of addresses the gateway connects to
 * on a tenant's behalf live in one place. Name resolution for them is the one resolver of
 * common/outbound-policy.ts (DNS by c-ares, built by common/dns-resolver.ts), sockets are pinned
 * by its lookups only, and IPv6 literals lose their brackets through the one helper of
 * common/address-policy.ts.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('..', import.meta.url));

function sources(dir: string): { path: string; text: string }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    if (!entry.name.endsWith('.ts') || entry.name.endsWith('.test.ts')) return [];
    return [{ path: relative(SRC, path), text: readFileSync(path, 'utf8') }];
  });
}

/** The files (outside `allowed`) whose code matches `pattern`. */
function placesOf(pattern: RegExp, allowed: readonly string[]): string[] {
  return sources(SRC).filter(({ path, text }) => !allowed.includes(path) && pattern.test(text)).map(({ path }) => path);
}

t.test('one bracket-stripping helper for IPv6 literals', (t) => {
  t.same(placesOf(/startsWith\(['"]\[['"]\)|\\\[\(\[\^\\\]\]/, ['common/address-policy.ts']), []);
  t.same(placesOf(/function stripBrackets\(host/, ['common/address-policy.ts']), []);
  t.end();
});

t.test('one resolver: no module calls getaddrinfo (node:dns lookup), and only the policy\'s resolver asks DNS for a name', (t) => {
  t.same(placesOf(/import\s*\{[^}]*\blookup\b[^}]*\}\s*from\s*['"]node:dns/, []), []);
  // The SIP stack's RFC 3263 locator asks DNS for NAPTR and SRV records; it resolves no tenant URL.
  t.same(placesOf(/from\s*['"]node:dns(\/promises)?['"]/, ['common/dns-resolver.ts', 'engine/sip/resolver/server-locator.ts']), []);
  t.end();
});

t.test('one place pins sockets: no other module answers a socket lookup itself', (t) => {
  // The RTP socket's lookup answers numeric addresses synchronously, to spare a tick per send; it never resolves a name.
  t.same(placesOf(/callback\(null,/, ['common/outbound-policy.ts', 'engine/media/rtp/udp-socket.ts']), []);
  t.end();
});
