/**
 * @module The carrier's SIP headers a call carries through to its agent (docs/API.md "SIP headers
 * carried through"): the INVITE's headers whose names the carrier's `calls.carry_headers` allows,
 * kept with the call, copied onto the INVITE to a sip_trunk agent edge and given to a WebSocket
 * agent in `start.customParameters.sip_headers`.
 */
import type { SipRequest } from '../../sip/index.js';
import type { CallerIdentity } from './caller-identity.js';

/** Header name (as first received) to its value; repeated fields joined with `, ` (RFC 3261 7.3.1). */
export type SipHeaderMap = Record<string, string>;

/** Most headers kept from one INVITE, and the longest value kept: beyond them a header is left out. */
export const MAX_CARRIED_HEADERS = 32;
export const MAX_CARRIED_VALUE = 1024;

/**
 * Headers that name the caller's identity: on the edge's INVITE the caller-identity rules write
 * them (docs/DECISIONS.md "Caller identity and privacy"), never a verbatim copy.
 */
const IDENTITY_HEADERS = new Set(['p-asserted-identity', 'diversion', 'privacy']);

/** Whether `name` matches one allow-list entry: a name, or a prefix ending in `*` (`X-*`), case-insensitively. */
export function allowedBy(allow: readonly string[], name: string): boolean {
  const lower = name.toLowerCase();
  return allow.some((entry) => {
    const e = entry.toLowerCase();
    return e.endsWith('*') ? lower.startsWith(e.slice(0, -1)) : lower === e;
  });
}

/** The INVITE's headers the allow list lets through, in received order; null when there are none. */
export function carriedHeaders(request: SipRequest, allow: readonly string[]): SipHeaderMap | null {
  const kept: SipHeaderMap = {};
  const byKey = new Map<string, string>();
  for (const [name, value] of request.headers.entries()) {
    if (!allowedBy(allow, name) || value.length > MAX_CARRIED_VALUE) continue;
    const key = name.toLowerCase();
    const first = byKey.get(key);
    if (first !== undefined) {
      const joined = `${kept[first]}, ${value}`;
      if (joined.length <= MAX_CARRIED_VALUE) kept[first] = joined;
      continue;
    }
    if (byKey.size >= MAX_CARRIED_HEADERS) continue;
    byKey.set(key, name);
    kept[name] = value;
  }
  return byKey.size > 0 ? kept : null;
}

/**
 * What the agent is given of the carried headers. With privacy asked, the identity headers stay
 * out (RFC 3323 §4.1, RFC 3325 §5), as they do on the edge's INVITE.
 */
export function headersForAgent(headers: SipHeaderMap | null, callerPrivate: boolean): SipHeaderMap | null {
  if (!headers || !callerPrivate) return headers;
  const kept = Object.entries(headers).filter(([name]) => !IDENTITY_HEADERS.has(name.toLowerCase()));
  return kept.length > 0 ? Object.fromEntries(kept) : null;
}

/**
 * The carried headers for the INVITE to a sip_trunk agent edge: not the identity headers (the
 * caller-identity rules write those), and no name the gateway already writes (the platform's call headers).
 */
export function headersTowardEdge(headers: SipHeaderMap | null, written: readonly (readonly [string, string])[]): [string, string][] {
  if (!headers) return [];
  const taken = new Set(written.map(([name]) => name.toLowerCase()));
  return Object.entries(headers).filter(([name]) => !IDENTITY_HEADERS.has(name.toLowerCase()) && !taken.has(name.toLowerCase()));
}

/** The `sipHeaders` of the agent's call information for a call record: nothing when none are carried. */
export function agentHeaders(record: { sip_headers: SipHeaderMap | null; caller_privacy: boolean }): { sipHeaders?: SipHeaderMap } {
  const headers = headersForAgent(record.sip_headers, record.caller_privacy);
  return headers ? { sipHeaders: headers } : {};
}

/**
 * The extra headers of the INVITE to a sip_trunk agent edge: the platform's, the caller's identity
 * as the privacy rules allow, then the carrier's headers carried through.
 */
export function edgeHeaders(
  record: { sip_headers: SipHeaderMap | null; caller_privacy: boolean }, platform: readonly (readonly [string, string])[], identity: readonly (readonly [string, string])[],
): (readonly [string, string])[] {
  const written = [...platform, ...identity];
  return [...written, ...headersTowardEdge(headersForAgent(record.sip_headers, record.caller_privacy), written)];
}

/**
 * What the caller-identity rules may write on the edge's INVITE under the carrier's allow list: a
 * carrier that does not carry Diversion or P-Asserted-Identity keeps them from the edge too (the
 * record's `from` is unchanged). No list (a profile without the setting): the rules alone decide.
 */
export function identityTowardEdge(identity: CallerIdentity, allow: readonly string[] | undefined): CallerIdentity {
  if (!allow) return identity;
  return {
    ...identity,
    diversion: allowedBy(allow, 'Diversion') ? identity.diversion : [],
    asserted: allowedBy(allow, 'P-Asserted-Identity') ? identity.asserted : null,
  };
}
