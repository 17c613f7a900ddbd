/** @module Which hosts a provider's recording URLs may name: exact names and `*.suffix` wildcards. */
import { isIP } from 'node:net';
import { stripBrackets } from '../../common/address-policy.js';

/** A URL hostname in comparable form: lower case, no IPv6 brackets, no trailing dot. */
export function normalizeHost(hostname: string): string {
  return stripBrackets(hostname).toLowerCase().replace(/\.$/, '');
}

/**
 * True when `hostname` is on the list. `*.example.com` matches any name below example.com (not
 * example.com itself); any other entry must equal the host. Wildcards never match IP literals.
 */
export function isAllowedHost(hostname: string, allowedHosts: readonly string[]): boolean {
  const host = normalizeHost(hostname);
  if (host.length === 0) return false;
  for (const entry of allowedHosts) {
    const rule = normalizeHost(entry);
    if (rule.startsWith('*.')) {
      const suffix = rule.slice(1); // ".example.com"
      if (isIP(host) === 0 && suffix.length > 1 && host.endsWith(suffix) && host.length > suffix.length) return true;
    } else if (rule.length > 0 && rule === host) {
      return true;
    }
  }
  return false;
}
