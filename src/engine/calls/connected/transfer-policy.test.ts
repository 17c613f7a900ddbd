import t from 'tap';
import { checkTransfer, NO_AGENT_TRANSFERS, parseTransferTarget } from './transfer-policy.js';

t.test('docs/API.md "Transfers asked by the agent": Refer-To forms', (t) => {
  t.same(parseTransferTarget('tel:+14155550100'), { kind: 'number', number: '+14155550100' }, 'tel:+E164 (RFC 3966)');
  t.same(parseTransferTarget('tel:+1-415-555-0100'), { kind: 'number', number: '+14155550100' }, 'tel visual separators dropped');
  t.same(parseTransferTarget('sip:+14155550100@carrier.example.com;user=phone'), { kind: 'number', number: '+14155550100' }, 'sip:+E164@host is a number');
  t.same(parseTransferTarget('+442071234567'), { kind: 'number', number: '+442071234567' }, 'a bare number (WebSocket agents)');
  t.same(parseTransferTarget('sip:Desk@PBX.example.com'), { kind: 'sip', uri: 'sip:Desk@pbx.example.com' }, 'a SIP address, host case folded');
  t.equal(parseTransferTarget('sip:pbx.example.com'), null, 'a SIP URI without a user names nobody');
  t.equal(parseTransferTarget('mailto:a@b.c'), null, 'other schemes are refused');
  t.equal(parseTransferTarget('tel:5550100'), null, 'a local tel number is no E.164');
  t.equal(parseTransferTarget('<sip:x@y'), null, 'garbage');
  t.end();
});

t.test('docs/API.md "Transfers asked by the agent": policy, cap and denied prefixes', (t) => {
  const policy = { allow: ['+1*', '+442071234567', 'sip:*@pbx.example.com'], maxPerCall: 1 };
  const number = (n: string) => ({ kind: 'number' as const, number: n });
  t.same(checkTransfer(number('+14155550100'), policy, [], 0), { allowed: true }, 'a prefix pattern');
  t.same(checkTransfer(number('+442071234567'), policy, [], 0), { allowed: true }, 'an exact number');
  t.match(checkTransfer(number('+442071234568'), policy, [], 0), { allowed: false }, 'an exact pattern matches only itself');
  t.same(checkTransfer({ kind: 'sip', uri: 'sip:desk@pbx.example.com' }, policy, [], 0), { allowed: true }, 'a SIP address pattern');
  t.match(checkTransfer({ kind: 'sip', uri: 'sip:desk@pbx.example.com.evil.net' }, policy, [], 0), { allowed: false }, 'patterns are anchored at both ends');
  t.match(checkTransfer(number('+19005550100'), policy, ['+1900'], 0), { allowed: false, why: /denied by the operator/ }, 'the operator\'s denied prefixes win over the policy');
  t.match(checkTransfer(number('+14155550100'), policy, [], 1), { allowed: false, why: /at most 1/ }, 'max_per_call counts transfers already asked for');
  t.match(checkTransfer(number('+14155550100'), NO_AGENT_TRANSFERS, [], 0), { allowed: false, why: /no transfer policy/ }, 'no policy: no agent-initiated transfer');
  t.match(checkTransfer(number('+14155550100'), { allow: ['+1.*'], maxPerCall: 1 }, [], 0), { allowed: false }, 'pattern text is literal but for *');
  t.end();
});

t.test('docs/API.md "Transfers asked by the agent": a SIP address keeps what routes it (port, transport), and a port must be in the pattern', (t) => {
  t.same(parseTransferTarget('sip:desk@pbx.example.com:5080;transport=TCP;lr?Subject=x'), { kind: 'sip', uri: 'sip:desk@pbx.example.com:5080;transport=tcp' }, 'port and transport kept, other parameters and headers dropped');
  t.same(parseTransferTarget('sip:desk@[2001:db8::1]:5060'), { kind: 'sip', uri: 'sip:desk@[2001:db8::1]:5060' }, 'an IPv6 host keeps its brackets');
  const policy = { allow: ['sip:*@pbx.example.com', 'sip:desk@127.0.0.1:5099'], maxPerCall: 1 };
  const sip = (text: string) => parseTransferTarget(text)!;
  t.same(checkTransfer(sip('sip:desk@pbx.example.com;transport=tcp'), policy, [], 0), { allowed: true }, 'parameters do not count against the pattern');
  t.match(checkTransfer(sip('sip:desk@pbx.example.com:5080'), policy, [], 0), { allowed: false }, 'a port the pattern does not name is refused');
  t.same(checkTransfer(sip('sip:desk@127.0.0.1:5099'), policy, [], 0), { allowed: true }, 'a pattern with the port');
  t.match(checkTransfer(sip('sip:other@127.0.0.1:5099'), policy, [], 0), { allowed: false }, 'another user at that address');
  t.end();
});
