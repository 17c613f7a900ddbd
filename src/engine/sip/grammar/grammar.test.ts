import t from 'tap';
import { formatUri, parseUri, unescapeUri } from './uri.js';
import { uriEquals } from './uri-compare.js';
import { formatNameAddr, parseNameAddr } from './name-addr.js';
import { formatVia, parseVia } from './via.js';
import { parseCSeq, parseMaxForwards } from './cseq.js';
import { SipParseError } from './parse-error.js';
import { MAX_PARAMS } from './params.js';

t.test('RFC 3261 19.1.1: SIP URI components', (t) => {
  const u = parseUri('sip:alice:secret@Atlanta.example.com:5070;transport=tcp;lr?subject=project%20x&priority=urgent');
  t.equal(u.scheme, 'sip');
  t.equal(u.user, 'alice');
  t.equal(u.password, 'secret');
  t.equal(u.host, 'Atlanta.example.com');
  t.equal(u.port, 5070);
  t.same([...u.params], [['transport', 'tcp'], ['lr', null]]);
  t.same([...u.headers], [['subject', 'project%20x'], ['priority', 'urgent']]);
  t.equal(formatUri(u), 'sip:alice:secret@Atlanta.example.com:5070;transport=tcp;lr?subject=project%20x&priority=urgent');
  t.equal(unescapeUri('project%20x'), 'project x');
  t.end();
});

t.test('RFC 5118: IPv6 references keep no brackets in host and get them back when formatted', (t) => {
  const u = parseUri('sips:[2001:db8::10]:5061');
  t.same([u.scheme, u.host, u.port], ['sips', '2001:db8::10', 5061]);
  t.equal(formatUri(u), 'sips:[2001:db8::10]:5061');
  t.throws(() => parseUri('sip:2001:db8::10'), SipParseError, 'RFC 5118 4.2: IPv6 without brackets');
  t.end();
});

t.test('RFC 3966: tel URI and unknown schemes kept opaque', (t) => {
  const tel = parseUri('tel:+1-201-555-0123;phone-context=example.com');
  t.same([tel.scheme, tel.host, tel.params.get('phone-context')], ['tel', '+1-201-555-0123', 'example.com']);
  const other = parseUri('urn:service:sos');
  t.same([other.scheme, other.opaque], ['urn', 'service:sos']);
  t.equal(formatUri(other), 'urn:service:sos');
  t.end();
});

t.test('RFC 3261 25.1: malformed URIs throw SipParseError', (t) => {
  for (const bad of ['', '<sip:a@b>', 'sip:', 'sip:a@', 'sip:a b@c', 'sip:host:99999', 'sip:host:port', 'sip:h;a=<', 'sip:[::1']) {
    t.throws(() => parseUri(bad), SipParseError, JSON.stringify(bad));
  }
  t.end();
});

t.test('RFC 3261 20.10: name-addr and addr-spec with parameters', (t) => {
  const a = parseNameAddr('"Bob \\"B\\"" <sip:bob@biloxi.example.com;transport=udp>;tag=a6c85cf;expires=60');
  t.equal(a.displayName, 'Bob "B"');
  t.equal(a.uri.params.get('transport'), 'udp');
  t.equal(a.tag, 'a6c85cf');
  t.equal(a.params.get('expires'), '60');
  t.equal(formatNameAddr(a), '"Bob \\"B\\"" <sip:bob@biloxi.example.com;transport=udp>;tag=a6c85cf;expires=60');
  const spec = parseNameAddr('sip:carol@chicago.example.com;tag=9');
  t.equal(spec.uri.params.size, 0, 'in addr-spec form parameters belong to the header');
  t.equal(spec.tag, '9');
  t.throws(() => parseNameAddr('"unterminated <sip:a@b>'), SipParseError);
  t.throws(() => parseNameAddr('<sip:a@b'), SipParseError);
  t.throws(() => parseNameAddr('<sip:a@b>;;'), SipParseError);
  t.end();
});

t.test('RFC 3261 25.1 gen-value: "<" and ">" are neither token nor host, so a parameter value holding one is rejected', (t) => {
  // Accepted, such a value would swallow a tag added after it: "<sip:a@b>;p=x<y;tag=1" splits as one parameter.
  t.throws(() => parseNameAddr('<sip:a@b>;p=.%<.'), SipParseError);
  t.throws(() => parseNameAddr('<sip:a@b>;p=x>y'), SipParseError);
  t.equal(parseNameAddr('<sip:a@b>;p="x<y";tag=1').tag, '1', 'quoted, they are fine');
  t.equal(parseNameAddr('<sip:a@b>;maddr=[2001:db8::1];tag=2').tag, '2', 'an IPv6 reference still is a host value');
  t.end();
});

t.test('RFC 3261 20.42 and RFC 3581: Via with LWS, IPv6 sent-by, received and rport', (t) => {
  const v = parseVia('SIP / 2.0 / udp [2001:db8::9:1] : 6050 ;branch=z9hG4bK776;rport;received=192.0.2.4');
  t.same([v.protocol, v.host, v.port, v.branch, v.received, v.rport], ['UDP', '2001:db8::9:1', 6050, 'z9hG4bK776', '192.0.2.4', null]);
  v.rport = 40000;
  v.received = '198.51.100.7';
  t.equal(formatVia(v), 'SIP/2.0/UDP [2001:db8::9:1]:6050;branch=z9hG4bK776;rport=40000;received=198.51.100.7');
  t.equal(parseVia('SIP/2.0/TCP a.example.com;rport=5062').rport, 5062);
  for (const bad of ['SIP/2.0/UDP', 'SIP/2.0/UDP a b', 'HTTP/1.1/TCP a', 'SIP/2.0/UDP a;;', 'SIP/2.0/UDP a;rport=x', 'SIP/2.0 UDP a']) {
    t.throws(() => parseVia(bad), SipParseError, bad);
  }
  t.end();
});

t.test('RFC 3261 8.1.1.5: CSeq below 2**31 with a method; Max-Forwards 0-255', (t) => {
  t.same(parseCSeq(' 0009  INVITE '), { seq: 9, method: 'INVITE' });
  t.throws(() => parseCSeq('2147483648 INVITE'), SipParseError);
  t.throws(() => parseCSeq('1'), SipParseError);
  t.throws(() => parseCSeq('-1 INVITE'), SipParseError);
  t.equal(parseMaxForwards('70'), 70);
  t.throws(() => parseMaxForwards('256'), SipParseError);
  t.end();
});

t.test('hostile input: long runs of separators and quotes are linear, never hang', (t) => {
  const semis = `sip:a@b${';x'.repeat(4000)}`;
  t.equal(parseUri(semis).params.size, 1);
  t.throws(() => parseNameAddr(`"${'\\"'.repeat(50000)} <sip:a@b>`), SipParseError);
  t.throws(() => parseVia(`SIP/2.0/UDP h${';'.repeat(50000)}`), SipParseError);
  t.throws(() => parseNameAddr(`${'<'.repeat(50000)}`), SipParseError);
  // Blanks inside a Via sent-by with no colon after them: a backtracking pattern made this quadratic.
  t.throws(() => parseVia(`SIP/2.0/TCP host${' '.repeat(400_000)}x`), SipParseError);
  t.equal(parseVia('SIP/2.0/UDP  host \t: 5060 ;branch=z9hG4bK1').port, 5060, 'LWS around the colon still allowed (RFC 3261 25.1 COLON)');
  t.end();
});

t.test('RFC 3261 19.1.4: URI comparison examples', (t) => {
  const eq = (a: string, b: string): boolean => uriEquals(parseUri(a), parseUri(b));
  // Equivalent pairs from 19.1.4.
  t.ok(eq('sip:%61lice@atlanta.com;transport=TCP', 'sip:alice@AtLanTa.CoM;Transport=tcp'));
  t.ok(eq('sip:carol@chicago.com', 'sip:carol@chicago.com;newparam=5'));
  t.ok(eq('sip:carol@chicago.com;security=on', 'sip:carol@chicago.com;newparam=5'));
  t.ok(eq('sip:biloxi.com;transport=tcp;method=REGISTER?to=sip:bob%40biloxi.com', 'sip:biloxi.com;method=REGISTER;transport=tcp?to=sip:bob%40biloxi.com'));
  t.ok(eq('sip:alice@atlanta.com?subject=project%20x&priority=urgent', 'sip:alice@atlanta.com?priority=urgent&subject=project%20x'));
  // Non-equivalent pairs from 19.1.4.
  t.notOk(eq('SIP:ALICE@AtLanTa.CoM;Transport=udp', 'sip:alice@AtLanTa.CoM;Transport=UDP'), 'usernames are case-sensitive');
  t.notOk(eq('sip:bob@biloxi.com', 'sip:bob@biloxi.com:5060'), 'an explicit port differs');
  t.notOk(eq('sip:bob@biloxi.com', 'sip:bob@biloxi.com;transport=udp'), 'transport in one only');
  t.notOk(eq('sip:bob@biloxi.com', 'sip:bob@biloxi.com:6000;transport=tcp'));
  t.notOk(eq('sip:carol@chicago.com', 'sip:carol@chicago.com?Subject=next%20meeting'), 'headers must match');
  t.notOk(eq('sip:bob@phone21.boxesbybob.com', 'sip:bob@192.0.2.4'));
  t.notOk(eq('sip:carol@chicago.com;security=on', 'sip:carol@chicago.com;security=off'));
  t.notOk(eq('sip:a@b', 'sips:a@b'));
  t.end();
});

t.test('hostile input: a header value with more than MAX_PARAMS parameters is refused (found by fuzzing)', (t) => {
  const many = (n: number): string => `SIP/2.0/UDP host.example.com;branch=z9hG4bK1${';a'.repeat(n - 1)}`;
  t.equal(parseVia(many(MAX_PARAMS)).params.size, 2, 'at the limit: parsed (repeated names collapse)');
  t.throws(() => parseVia(many(MAX_PARAMS + 1)), SipParseError, 'one more: a parse error, so a 400');
  t.throws(() => parseNameAddr(`<sip:a@example.com>${';x=1'.repeat(30_000)}`), SipParseError, 'a datagram-sized run of them');
  t.end();
});
