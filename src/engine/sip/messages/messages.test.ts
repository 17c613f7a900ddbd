import t from 'tap';
import type { SipRequest } from './sip-message.js';
import { SipHeaders } from './sip-message.js';
import { parseMessage, SipStreamFramer, type ParseOutcome } from './parse.js';
import { serializeMessage } from './serialize.js';
import { createResponse } from './response.js';
import type { SipParseError } from '../grammar/parse-error.js';

const INVITE = [
  'INVITE sip:bob@biloxi.example.com SIP/2.0',
  'v: SIP/2.0/UDP pc33.atlanta.example.com;branch=z9hG4bK776asdhds, SIP/2.0/UDP p1.example.com;branch=z9hG4bK1',
  'Via: SIP/2.0/UDP p2.example.com;branch=z9hG4bK2',
  'Max-Forwards: 70',
  't: Bob <sip:bob@biloxi.example.com>',
  'f: "Alice, A." <sip:alice@atlanta.example.com>;tag=1928301774',
  'i: a84b4c76e66710@pc33.atlanta.example.com',
  'CSeq: 314159 INVITE',
  'Record-Route: <sip:p1.example.com;lr>, <sip:p2.example.com;lr>',
  'm: <sip:alice@pc33.atlanta.example.com>',
  'c: application/sdp',
  'l: 4',
  '',
  'v=0\r\n',
].join('\r\n');

function parsed(text: string): SipRequest {
  const o = parseMessage(Buffer.from(text));
  if (!o.ok || o.message.kind !== 'request') throw new Error(`did not parse: ${o.ok ? 'response' : o.error.reason}`);
  return o.message;
}

t.test('RFC 3261 7.3.3: compact forms equal long names; lists split outside quotes', (t) => {
  const m = parsed(INVITE);
  t.equal(m.headers.get('Call-ID'), 'a84b4c76e66710@pc33.atlanta.example.com');
  t.equal(m.headers.get('i'), m.callId);
  t.equal(m.headers.getAll('VIA').length, 3);
  t.same(m.vias.map((v) => v.branch), ['z9hG4bK776asdhds', 'z9hG4bK1', 'z9hG4bK2']);
  t.equal(m.from.displayName, 'Alice, A.');
  t.equal(m.headers.getAll('Record-Route').length, 2);
  t.equal(m.body.toString(), 'v=0\r');
  t.same([...m.headers.entries()].map(([n]) => n).slice(0, 4), ['Via', 'Via', 'Max-Forwards', 'To']);
  t.end();
});

t.test('SipHeaders: set, prepend, delete, removeFirstValue and clone', (t) => {
  const h = new SipHeaders().append('Via', 'SIP/2.0/UDP a;branch=z9hG4bK1, SIP/2.0/UDP b;branch=z9hG4bK2').append('X-A', '1').append('x-a', '2');
  h.prepend('v', 'SIP/2.0/TCP c;branch=z9hG4bK0');
  t.same(h.getAll('Via').map((v) => v.slice(12, 13)), ['c', 'a', 'b']);
  t.equal(h.removeFirstValue('Via'), 'SIP/2.0/TCP c;branch=z9hG4bK0');
  t.equal(h.removeFirstValue('Via'), 'SIP/2.0/UDP a;branch=z9hG4bK1');
  t.same(h.getAll('Via'), ['SIP/2.0/UDP b;branch=z9hG4bK2']);
  const copy = h.clone();
  h.set('X-A', '3');
  t.same(h.getAll('x-a'), ['3']);
  t.same(copy.getAll('x-a'), ['1', '2'], 'a clone is independent');
  t.ok(h.delete('x-a'));
  t.notOk(h.has('X-A'));
  t.end();
});

t.test('RFC 3261 18.3: serialization sets Content-Length and round-trips', (t) => {
  const m = parsed(INVITE);
  m.body = Buffer.from('v=0\r\no=- 1 1 IN IP4 192.0.2.1\r\n');
  const again = parsed(serializeMessage(m).toString('utf8'));
  t.equal(again.headers.get('Content-Length'), String(m.body.length));
  t.same(again.body, m.body);
  t.equal(again.headers.count('Content-Length'), 1);
  t.end();
});

t.test('RFC 3261 8.2.6.2 and 12.1.1: createResponse copies the right headers', (t) => {
  const req = parsed(INVITE);
  const ringing = createResponse(req, 180, undefined, { toTag: 'uas1' });
  t.equal(ringing.reason, 'Ringing');
  t.equal(ringing.headers.getAll('Via').length, 3);
  t.equal(ringing.to.tag, 'uas1');
  t.equal(ringing.from.tag, '1928301774');
  t.same(ringing.cseq, { seq: 314159, method: 'INVITE' });
  t.equal(ringing.headers.getAll('Record-Route').length, 2, 'dialog-creating 18x mirrors Record-Route');
  const trying = createResponse(req, 100, undefined, { toTag: 'uas1' });
  t.equal(trying.to.tag, undefined, '8.2.6.1: no tag on 100');
  t.notOk(trying.headers.has('Record-Route'));
  const busy = createResponse(req, 486, undefined, { toTag: 'uas1' });
  t.notOk(busy.headers.has('Record-Route'), 'failure responses carry no Record-Route');
  const ok = createResponse(req, 200, 'OK', { toTag: 'x', body: Buffer.from('v=0\r\n'), contentType: 'application/sdp', headers: [['Contact', '<sip:gw@192.0.2.9>']] });
  const wire = parseMessage(serializeMessage(ok));
  t.ok(wire.ok && wire.message.kind === 'response' && wire.message.status === 200);
  t.equal(ok.headers.get('Content-Type'), 'application/sdp');
  t.end();
});

t.test('RFC 3261 8.2.6.2: a To that already has a tag keeps it', (t) => {
  const req = parsed(INVITE.replace('t: Bob <sip:bob@biloxi.example.com>', 't: Bob <sip:bob@biloxi.example.com>;tag=existing'));
  t.equal(createResponse(req, 200, undefined, { toTag: 'new' }).to.tag, 'existing');
  t.end();
});

t.test('RFC 3261 7.5: leading CRLFs before the start line are ignored', (t) => {
  t.equal(parsed(`\r\n\r\n${INVITE}`).method, 'INVITE');
  t.end();
});

t.test('malformed inputs give outcomes, never exceptions', (t) => {
  const inputs = ['', '\r\n', 'garbage', 'INVITE\r\n\r\n', 'SIP/2.0 99 x\r\n\r\n', '\x00\x01\x02\r\n\r\n', `${INVITE.slice(0, 200)}\r\n\r\n`, 'INVITE sip:a@b SIP/2.0\r\n:novalue\r\n\r\n', 'INVITE sip:a@b SIP/2.0\r\n folded\r\n\r\n'];
  for (const s of inputs) {
    const o = parseMessage(Buffer.from(s));
    t.notOk(o.ok, JSON.stringify(s.slice(0, 30)));
  }
  t.end();
});

function collect(max = 65535): { framer: SipStreamFramer; messages: ParseOutcome[]; errors: [SipParseError, SipRequest | undefined][]; pings: number[] } {
  const messages: ParseOutcome[] = [];
  const errors: [SipParseError, SipRequest | undefined][] = [];
  const pings: number[] = [];
  const framer = new SipStreamFramer({
    maxMessageSize: max,
    onMessage: (o) => messages.push(o),
    onError: (e, r) => errors.push([e, r]),
    onKeepAlive: () => pings.push(1),
  });
  return { framer, messages, errors, pings };
}

t.test('RFC 3261 18.3: stream framing with split and joined chunks', (t) => {
  const wire = Buffer.from(INVITE.replace('l: 4', 'l: 5'));
  const joined = Buffer.concat([wire, Buffer.from('\r\n\r\n'), wire, wire]);
  const c = collect();
  for (let i = 0; i < joined.length; i += 7) c.framer.push(joined.subarray(i, i + 7));
  t.equal(c.messages.length, 3);
  t.ok(c.messages.every((o) => o.ok && o.message.body.toString() === 'v=0\r\n'));
  t.equal(c.pings.length, 1, 'RFC 5626: double CRLF is a keep-alive');
  const one = collect();
  one.framer.push(joined);
  t.equal(one.messages.length, 3, 'three messages in one chunk');
  t.equal(one.framer.buffered, 0);
  t.end();
});

t.test('RFC 3261 18.3: a stream dribbled one octet at a time frames the same messages, and bodies already handed out stay intact', (t) => {
  // A sender may split a message anywhere; the framer appends into spare capacity (linear cost),
  // and must never write over octets that an earlier message's body still views.
  const big = Buffer.from(INVITE.replace('l: 4', 'l: 5').replace('\r\n\r\n', `\r\nX-Pad: ${'p'.repeat(20_000)}\r\n\r\n`));
  const wire = Buffer.concat([big, Buffer.from(INVITE.replace('l: 4', 'l: 5')), big]);
  const c = collect();
  for (let i = 0; i < wire.length; i++) c.framer.push(wire.subarray(i, i + 1));
  t.equal(c.messages.length, 3, 'three messages');
  t.equal(c.framer.buffered, 0, 'nothing left over');
  t.ok(c.messages.every((o) => o.ok && o.message.body.toString() === 'v=0\r\n'), 'every body intact after all input arrived');
  t.equal(c.messages[0]?.ok && c.messages[0].message.headers.get('X-Pad')?.length, 20_000, 'the long header arrived whole');
  t.end();
});

t.test('stream framing: oversized message gives 513 with the request, then nothing more', (t) => {
  const c = collect(300);
  c.framer.push(Buffer.from(INVITE.replace('l: 4', 'l: 5000')));
  t.equal(c.errors.length, 1);
  t.equal(c.errors[0]![0].status, 513);
  t.equal(c.errors[0]![1]?.method, 'INVITE');
  c.framer.push(Buffer.from(INVITE));
  t.equal(c.messages.length, 0);
  const endless = collect(1000);
  endless.framer.push(Buffer.from(`INVITE sip:a@b SIP/2.0\r\nX: ${'a'.repeat(2000)}`));
  t.equal(endless.errors[0]?.[0].status, 513, 'headers that never end');
  const bad = collect();
  bad.framer.push(Buffer.from(INVITE.replace('l: 4', 'l: -4')));
  t.equal(bad.errors[0]?.[0].status, 400);
  t.end();
});

t.test('getAll never throws on unvalidated list headers with unbalanced quotes', (t) => {
  const h = new SipHeaders().append('Require', '"100rel, timer').append('Supported', 'a, "b');
  t.same(h.getAll('Require'), ['"100rel, timer']);
  t.same(h.getAll('Supported'), ['a, "b']);
  t.end();
});
