/**
 * @module What a placed call may carry to the carrier and the agent (docs/API.md "SIP headers
 * carried through"): `sip_headers`, X- headers only, for the carrier's INVITE, and
 * `custom_parameters`, a flat map of strings for the agent's `start.customParameters`. Anything
 * that could change the INVITE beyond one header line (CR, LF, other control characters), a name
 * outside `X-`, or an oversized value is refused before the call is placed: nothing reaches the wire.
 */
import { ApiError } from '../../common/errors.js';

/** docs/API.md "SIP headers carried through": the limits of `sip_headers`. */
export const SIP_HEADER_LIMITS = { count: 16, nameLength: 64, valueLength: 256, totalBytes: 2048 } as const;
/** docs/API.md "Calls": the limits of `custom_parameters`. */
export const CUSTOM_PARAMETER_LIMITS = { count: 32, keyLength: 64, valueLength: 512, totalBytes: 4096 } as const;

/** An `X-` name of RFC 3261 token characters (25.1), nothing else. */
const X_HEADER_NAME = /^X-[A-Za-z0-9!%'*+._`~-]+$/i;
/** Printable ASCII, space and tab: a header value on one line (RFC 3261 7.3.1), no obs-fold, no control characters. */
const ONE_LINE_VALUE = /^[\x20-\x7e\t]*$/;
const PARAMETER_KEY = /^[A-Za-z0-9_.-]+$/;
/** The keys the gateway itself writes in `start.customParameters` (docs/API.md "Agent WebSocket protocol"). */
const RESERVED_PARAMETERS = new Set(['call_id', 'call_control_id', 'from', 'to', 'direction', 'verstat', 'identity_header', 'sip_headers']);

function refusedHeader(name: string, message: string): ApiError {
  return new ApiError(400, 'sip_header_not_allowed', 'A SIP header of the request cannot be put on the INVITE.', {
    errors: [{ path: `/sip_headers/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`, message }],
  });
}

function refusedParameter(key: string, message: string): ApiError {
  return new ApiError(400, 'custom_parameter_not_allowed', 'A custom parameter of the request cannot be given to the agent.', {
    errors: [{ path: `/custom_parameters/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`, message }],
  });
}

/** `sip_headers` as checked; throws `sip_header_not_allowed` (400) on the first header it refuses. */
export function checkSipHeaders(headers: Record<string, string> | undefined): Record<string, string> | undefined {
  if (headers === undefined) return undefined;
  const entries = Object.entries(headers);
  if (entries.length > SIP_HEADER_LIMITS.count) throw refusedHeader('', `at most ${SIP_HEADER_LIMITS.count} headers`);
  const seen = new Set<string>();
  let total = 0;
  for (const [name, value] of entries) {
    if (name.length > SIP_HEADER_LIMITS.nameLength || !X_HEADER_NAME.test(name)) {
      throw refusedHeader(name, 'only X- headers may be set (a token name starting with X-); the gateway writes every other header itself');
    }
    if (seen.has(name.toLowerCase())) throw refusedHeader(name, 'is given twice (header names are case-insensitive)');
    seen.add(name.toLowerCase());
    if (!ONE_LINE_VALUE.test(value)) throw refusedHeader(name, 'must be printable ASCII on one line: no CR, LF or other control characters');
    if (value.length > SIP_HEADER_LIMITS.valueLength) throw refusedHeader(name, `is longer than ${SIP_HEADER_LIMITS.valueLength} characters`);
    total += name.length + value.length;
  }
  if (total > SIP_HEADER_LIMITS.totalBytes) throw refusedHeader('', `names and values together exceed ${SIP_HEADER_LIMITS.totalBytes} bytes`);
  return entries.length > 0 ? headers : undefined;
}

/** `custom_parameters` as checked; throws `custom_parameter_not_allowed` (400) on the first one it refuses. */
export function checkCustomParameters(parameters: Record<string, string> | undefined): Record<string, string> | undefined {
  if (parameters === undefined) return undefined;
  const entries = Object.entries(parameters);
  if (entries.length > CUSTOM_PARAMETER_LIMITS.count) throw refusedParameter('', `at most ${CUSTOM_PARAMETER_LIMITS.count} parameters`);
  let total = 0;
  for (const [key, value] of entries) {
    if (key.length === 0 || key.length > CUSTOM_PARAMETER_LIMITS.keyLength || !PARAMETER_KEY.test(key)) {
      throw refusedParameter(key, `keys are 1 to ${CUSTOM_PARAMETER_LIMITS.keyLength} letters, digits, _ . or -`);
    }
    if (RESERVED_PARAMETERS.has(key)) throw refusedParameter(key, 'is a key the gateway writes itself in start.customParameters');
    if (value.length > CUSTOM_PARAMETER_LIMITS.valueLength) throw refusedParameter(key, `is longer than ${CUSTOM_PARAMETER_LIMITS.valueLength} characters`);
    total += Buffer.byteLength(key) + Buffer.byteLength(value);
  }
  if (total > CUSTOM_PARAMETER_LIMITS.totalBytes) throw refusedParameter('', `keys and values together exceed ${CUSTOM_PARAMETER_LIMITS.totalBytes} bytes`);
  return entries.length > 0 ? parameters : undefined;
}
