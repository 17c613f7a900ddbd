/**
 * @module The carrier's headers carried to the agent (docs/API.md "SIP headers carried through"),
 * read from real INVITEs: the allow list (names and `X-*` prefixes, case-insensitive), repeated
 * fields joined (RFC 3261 7.3.1), the limits, the privacy rule, and the edge's INVITE headers.
 */
import t from 'tap';
import { parseMessage, type SipRequest } from '../../sip/index.js';
import { agentHeaders, carriedHeaders, edgeHeaders, MAX_CARRIED_HEADERS, MAX_CARRIED_VALUE } from './carried-headers.js';

const DEFAULT = ['X-*', 'P-Asserted-Identity', 'Diversion', 'User-to-User', 'Privacy'];

function invite(...headers: string[]): SipRequest {
  const text = ['INVITE sip:+15550100@127.0.0.1 SIP/2.0', 'Via: SIP/2.0/UDP 127.0.0.1:5080;branch=z9hG4bK1', 'Max-Forwards: 70',
    'From: <sip:+15557770020@127.0.0.1>;tag=a', 'To: <sip:+15550100@127.0.0.1>', 'Call-ID: carried-1', 'CSeq: 1 INVITE',
    'Contact: <sip:127.0.0.1:5080>', ...headers, 'Content-Length: 0', '', ''].join('\r\n');
  const parsed = parseMessage(Buffer.from(text));
  if (!parsed.ok) throw parsed.error;
  return parsed.message as SipRequest;
}

t.test('docs/API.md "SIP headers carried through": the allow list picks names and X- prefixes case-insensitively; nothing else is carried', (t) => {
  const request = invite('x-campaign: spring-42', 'X-Customer-Id: C-7788', 'Diversion: <sip:+15550111@c.example>;reason=unconditional',
    'User-to-User: 56a390f3d2b7310023a2fb;encoding=hex', 'Subject: hello', 'P-Charge-Info: <sip:+15550999@c.example>');
  t.same(carriedHeaders(request, DEFAULT), {
    'x-campaign': 'spring-42', 'X-Customer-Id': 'C-7788', Diversion: '<sip:+15550111@c.example>;reason=unconditional', 'User-to-User': '56a390f3d2b7310023a2fb;encoding=hex',
  }, 'by name as received');
  t.same(carriedHeaders(request, ['X-CAMPAIGN']), { 'x-campaign': 'spring-42' });
  t.equal(carriedHeaders(request, []), null, 'an empty list carries none');
  t.equal(carriedHeaders(invite('Subject: hi'), DEFAULT), null, 'nothing allowed: null');
  t.end();
});

t.test('RFC 3261 7.3.1: repeated fields are joined with a comma; values and counts over the limits are left out, not cut', (t) => {
  const request = invite('Diversion: <sip:a@c.example>', 'Diversion: <sip:b@c.example>', `X-Long: ${'a'.repeat(MAX_CARRIED_VALUE + 1)}`);
  t.same(carriedHeaders(request, DEFAULT), { Diversion: '<sip:a@c.example>, <sip:b@c.example>' });
  const many = Array.from({ length: MAX_CARRIED_HEADERS + 5 }, (_, i) => `X-H${i}: ${i}`);
  t.equal(Object.keys(carriedHeaders(invite(...many), DEFAULT) ?? {}).length, MAX_CARRIED_HEADERS);
  t.end();
});

t.test('RFC 3323 4.1 and RFC 3325 5: with privacy asked the agent gets no identity headers; the edge never a second copy of them, nor of the platform\'s own names', (t) => {
  const sip_headers = { 'X-Campaign': 'spring-42', 'P-Asserted-Identity': '<sip:+15557770020@c.example>', Diversion: '<sip:a@c.example>', Privacy: 'id', 'X-Call-Id': 'forged' };
  t.same(agentHeaders({ sip_headers, caller_privacy: true }), { sipHeaders: { 'X-Campaign': 'spring-42', 'X-Call-Id': 'forged' } });
  t.same(agentHeaders({ sip_headers, caller_privacy: false }), { sipHeaders: sip_headers }, 'without privacy, all of them');
  t.same(agentHeaders({ sip_headers: null, caller_privacy: false }), {});
  const headers = edgeHeaders({ sip_headers, caller_privacy: false }, [['X-Call-Id', 'call_1']], [['Diversion', '<sip:a@c.example>']]);
  t.same(headers, [['X-Call-Id', 'call_1'], ['Diversion', '<sip:a@c.example>'], ['X-Campaign', 'spring-42']]);
  t.end();
});
