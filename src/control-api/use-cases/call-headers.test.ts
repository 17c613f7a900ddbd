/**
 * @module The tenant's `sip_headers` and `custom_parameters` of POST /v1/calls (docs/API.md "SIP
 * headers carried through"): what passes, and each refusal with its stable code and path.
 */
import t from 'tap';
import { ApiError } from '../../common/errors.js';
import { checkCustomParameters, checkSipHeaders, CUSTOM_PARAMETER_LIMITS, SIP_HEADER_LIMITS } from './call-headers.js';

function refusal(fn: () => unknown): { code: string; path: string } | null {
  try {
    fn();
    return null;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    return { code: err.code, path: err.errors?.[0]?.path ?? '' };
  }
}

t.test('docs/API.md "SIP headers carried through": X- headers on one line pass; anything else is sip_header_not_allowed naming the header', (t) => {
  t.same(checkSipHeaders({ 'X-Campaign': 'spring-42', 'x-ticket': 'T-1 "quoted"\tand tabbed' }), { 'X-Campaign': 'spring-42', 'x-ticket': 'T-1 "quoted"\tand tabbed' });
  t.equal(checkSipHeaders(undefined), undefined);
  t.equal(checkSipHeaders({}), undefined, 'an empty object adds nothing');
  const cases: [string, Record<string, string>, string][] = [
    ['CR LF (RFC 3261 7.3.1)', { 'X-A': 'a\r\nVia: x' }, '/sip_headers/X-A'],
    ['a NUL', { 'X-A': 'a\u0000b' }, '/sip_headers/X-A'],
    ['a non-ASCII character', { 'X-A': 'caf\u00e9' }, '/sip_headers/X-A'],
    ['Via', { Via: 'SIP/2.0/UDP h' }, '/sip_headers/Via'],
    ['P-Asserted-Identity', { 'P-Asserted-Identity': '<sip:+1@h>' }, '/sip_headers/P-Asserted-Identity'],
    ['a bare X-', { 'X-': 'a' }, '/sip_headers/X-'],
    ['a space in the name', { 'X-A B': 'a' }, '/sip_headers/X-A B'],
    ['a slash in the name, escaped in the pointer', { 'X-A/B': 'a' }, '/sip_headers/X-A~1B'],
    ['the same name twice', { 'X-A': 'a', 'x-a': 'b' }, '/sip_headers/x-a'],
    ['an oversized value', { 'X-A': 'a'.repeat(SIP_HEADER_LIMITS.valueLength + 1) }, '/sip_headers/X-A'],
    ['too many', Object.fromEntries(Array.from({ length: SIP_HEADER_LIMITS.count + 1 }, (_, i) => [`X-H${i}`, 'a'])), '/sip_headers/'],
    ['too many bytes', Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`X-H${i}`, 'a'.repeat(250)])), '/sip_headers/'],
  ];
  for (const [what, headers, path] of cases) t.same(refusal(() => checkSipHeaders(headers)), { code: 'sip_header_not_allowed', path }, what);
  t.end();
});

t.test('docs/API.md "SIP headers carried through": custom_parameters are flat short strings under keys the gateway does not write', (t) => {
  t.same(checkCustomParameters({ customer_tier: 'gold', 'order.id': '42' }), { customer_tier: 'gold', 'order.id': '42' });
  const cases: [string, Record<string, string>, string][] = [
    ['a gateway key', { call_id: 'x' }, '/custom_parameters/call_id'],
    ['sip_headers', { sip_headers: 'x' }, '/custom_parameters/sip_headers'],
    ['a key with a space', { 'a b': 'x' }, '/custom_parameters/a b'],
    ['an empty key', { '': 'x' }, '/custom_parameters/'],
    ['an oversized value', { tier: 'a'.repeat(CUSTOM_PARAMETER_LIMITS.valueLength + 1) }, '/custom_parameters/tier'],
    ['too many', Object.fromEntries(Array.from({ length: CUSTOM_PARAMETER_LIMITS.count + 1 }, (_, i) => [`k${i}`, 'a'])), '/custom_parameters/'],
  ];
  for (const [what, parameters, path] of cases) t.same(refusal(() => checkCustomParameters(parameters)), { code: 'custom_parameter_not_allowed', path }, what);
  t.end();
});
