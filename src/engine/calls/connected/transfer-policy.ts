/**
 * @module Which transfers an agent may ask for (docs/API.md "Transfers asked by the agent"): the
 * agent's `transfer_policy` (targets allowed by pattern, at most so many per call) and the
 * operator's denied prefixes, which no policy can open. Without a policy the agent may not
 * transfer at all: an agent must not become a way to dial premium numbers on the tenant's bill.
 */
import { isE164 } from '../../../common/phone-number.js';
import { parseUri, unescapeUri } from '../../sip/index.js';

/** The agent's policy: `allow` patterns (`*` matches any run of characters) and a per-call cap. */
export interface TransferPolicy {
  allow: readonly string[];
  maxPerCall: number;
}

/** The policy of an agent that has none: no agent-initiated transfer. */
export const NO_AGENT_TRANSFERS: TransferPolicy = { allow: [], maxPerCall: 0 };

/** A target the agent named: a phone number (dialled over the call's carrier) or a SIP address. */
export type TransferTarget = { kind: 'number'; number: string } | { kind: 'sip'; uri: string };

/**
 * Reads a Refer-To URI or the `to` of a WebSocket agent's transfer: `tel:+E164`, `sip:+E164@…`
 * (a number, whatever the host: it is dialled over the call's carrier), a bare `+E164`, or another
 * SIP URI (`sip:user@host[:port][;transport=…]`, dialled directly). Null when it is none of them.
 */
export function parseTransferTarget(text: string): TransferTarget | null {
  const trimmed = text.trim();
  if (isE164(trimmed)) return { kind: 'number', number: trimmed };
  let uri;
  try {
    uri = parseUri(trimmed);
  } catch {
    return null;
  }
  if (uri.scheme === 'tel') {
    const number = unescapeUri(uri.host).replace(/[-.()]/g, '');
    return isE164(number) ? { kind: 'number', number } : null;
  }
  if (uri.scheme !== 'sip' && uri.scheme !== 'sips') return null;
  const user = uri.user === undefined ? '' : unescapeUri(uri.user);
  if (isE164(user)) return { kind: 'number', number: user };
  if (user === '' || uri.host === '' || /[\s<>";@?]/.test(user)) return null;
  // Only what routes the request is kept: the user, host and port, and the transport (RFC 3261
  // 19.1.1); other parameters and headers of the agent's URI are not sent on.
  const host = uri.host.includes(':') ? `[${uri.host.toLowerCase()}]` : uri.host.toLowerCase();
  const transport = uri.params.get('transport');
  return {
    kind: 'sip',
    uri: `${uri.scheme}:${user}@${host}${uri.port === undefined ? '' : `:${uri.port}`}${typeof transport === 'string' ? `;transport=${transport.toLowerCase()}` : ''}`,
  };
}

const globToRegExp = (pattern: string): RegExp =>
  new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 'i');

/** The text a pattern is matched against: the number, or `sip:user@host[:port]` (a port must be in the pattern too). */
const subjectOf = (target: TransferTarget): string => (target.kind === 'number' ? target.number : target.uri.split(';')[0]!);

export type TransferVerdict = { allowed: true } | { allowed: false; why: string };

/**
 * Whether `target` may be transferred to now, `done` transfers into the call. The operator's
 * denied prefixes win over any policy; then the per-call cap; then the allow list.
 */
export function checkTransfer(target: TransferTarget, policy: TransferPolicy, deniedPrefixes: readonly string[], done: number): TransferVerdict {
  if (target.kind === 'number') {
    const denied = deniedPrefixes.find((prefix) => target.number.startsWith(prefix));
    if (denied !== undefined) return { allowed: false, why: `${denied} numbers are denied by the operator` };
  }
  if (done >= policy.maxPerCall) return { allowed: false, why: policy.maxPerCall === 0 ? 'the agent has no transfer policy' : `at most ${policy.maxPerCall} transfer(s) per call` };
  const subject = subjectOf(target);
  if (!policy.allow.some((pattern) => globToRegExp(pattern).test(subject))) return { allowed: false, why: 'the target is outside the agent\'s transfer policy' };
  return { allowed: true };
}
