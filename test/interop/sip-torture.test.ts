/**
 * @module RFC 4475 and RFC 5118 torture messages through parseMessage, serializeMessage,
 * createResponse and checkUasRequest: each file gives the outcome named in the README beside it.
 */
import t, { type Test } from 'tap';
import { readFileSync } from 'node:fs';
import { parseMessage, type ParseOutcome } from '../../src/engine/sip/messages/parse.js';
import { serializeMessage } from '../../src/engine/sip/messages/serialize.js';
import { createResponse } from '../../src/engine/sip/messages/response.js';
import { checkUasRequest, type UasCapabilities } from '../../src/engine/sip/messages/uas-checks.js';
import { parseUri } from '../../src/engine/sip/grammar/uri.js';
import type { SipMessage } from '../../src/engine/sip/messages/sip-message.js';

const DATA = new URL('../../../shared/testdata/', import.meta.url);

/**
 * accept: parses (a request passes the UAS checks); reject: a request answered with `status`;
 * drop: a response discarded (no answer is possible); uas: parses, then checkUasRequest gives `status`.
 */
type Expect =
  | { outcome: 'accept'; check?: (m: SipMessage, t: Test) => void }
  | { outcome: 'reject'; status: number }
  | { outcome: 'drop' }
  | { outcome: 'uas'; status: number };

interface Row {
  file: string;
  section: string;
  expect: Expect;
}

const accept = (check?: (m: SipMessage, t: Test) => void): Expect => (check ? { outcome: 'accept', check } : { outcome: 'accept' });
const reject = (status = 400): Expect => ({ outcome: 'reject', status });
const uas = (status: number): Expect => ({ outcome: 'uas', status });
const drop: Expect = { outcome: 'drop' };

const CAPS: UasCapabilities = {
  methods: ['INVITE', 'ACK', 'BYE', 'CANCEL', 'OPTIONS', 'REGISTER', 'INFO', 'UPDATE', 'REFER', 'NOTIFY', 'PRACK'],
  extensions: ['100rel', 'timer', 'replaces'],
  contentTypes: ['application/sdp', 'multipart/mixed', 'application/dtmf-relay'],
  answerContentTypes: ['application/sdp'],
};

function req(m: SipMessage): Extract<SipMessage, { kind: 'request' }> {
  if (m.kind !== 'request') throw new Error('expected a request');
  return m;
}

/** RFC 4475 section 3: one row per message, outcome as its README summarizes the RFC prose. */
const RFC4475: Row[] = [
  { file: 'wsinv', section: '3.1.1.1', expect: accept((m, t) => {
    t.equal(m.to.tag, '1918181833n');
    t.equal(m.from.tag, '98asjd8');
    t.equal(m.from.displayName, 'J Rosenberg \\"');
    t.equal(m.maxForwards, 68);
    t.same(m.cseq, { seq: 9, method: 'INVITE' });
    t.equal(m.vias.length, 3);
    t.equal(m.vias[1]!.branch, 'z9hG4bK9ikj8');
    t.equal(m.vias[2]!.host, '192.168.255.111');
    t.equal(m.headers.get('Subject'), '');
    t.equal(m.headers.get('NewFangledHeader'), 'newfangled value continued newfangled value');
    t.equal(m.contacts[0]!.params.get('q'), '0.33');
    t.equal(m.body.length, 150);
  }) },
  { file: 'intmeth', section: '3.1.1.2', expect: accept((m, t) => {
    t.equal(req(m).method, "!interesting-Method0123456789_*+`.%indeed'~");
    const u = parseUri(req(m).uri);
    t.equal(u.user, "1_unusual.URI~(to-be!sure)&isn't+it$/crazy?,/;;*");
    t.equal(u.password, "&it+has=1,weird!*pas$wo~d_too.(doesn't-it)");
    t.equal(m.to.displayName, 'BEL:\x07 NUL:\x00 DEL:\x7f');
    t.equal(m.from.tag, "_token~1'+`*%!-.");
  }) },
  { file: 'esc01', section: '3.1.1.3', expect: accept((m, t) => t.equal(parseUri(req(m).uri).user, 'sips%3Auser%40example.com')) },
  { file: 'escnull', section: '3.1.1.4', expect: accept((m, t) => t.equal(m.contacts.length, 2)) },
  { file: 'esc02', section: '3.1.1.5', expect: accept((m, t) => {
    t.equal(req(m).method, 'RE%47IST%45R');
    t.equal(m.headers.getAll('Contact').length, 2, 'C%6Fntact is another header');
  }) },
  { file: 'lwsdisp', section: '3.1.1.6', expect: accept((m, t) => t.equal(m.from.displayName, 'caller')) },
  { file: 'longreq', section: '3.1.1.7', expect: accept((m, t) => t.equal(m.headers.getAll('Via').length, 34)) },
  { file: 'dblreq', section: '3.1.1.8', expect: accept((m, t) => {
    t.equal(req(m).method, 'REGISTER');
    t.equal(m.body.length, 0, 'the trailing INVITE is ignored');
  }) },
  { file: 'semiuri', section: '3.1.1.9', expect: accept((m, t) => t.equal(parseUri(req(m).uri).user, 'user;par=u%40example.net')) },
  { file: 'transports', section: '3.1.1.10', expect: accept((m, t) => t.same(m.vias.map((v) => v.protocol), ['UDP', 'SCTP', 'TLS', 'UNKNOWN', 'TCP'])) },
  { file: 'mpart01', section: '3.1.1.11', expect: accept((m, t) => t.equal(m.body.length, 553)) },
  { file: 'unreason', section: '3.1.1.12', expect: accept((m, t) => t.ok(m.kind === 'response' && m.reason.startsWith('= 2**3 * 5**2 но'))) },
  { file: 'noreason', section: '3.1.1.13', expect: accept((m, t) => t.ok(m.kind === 'response' && m.reason === '')) },
  { file: 'badinv01', section: '3.1.2.1', expect: reject() },
  { file: 'clerr', section: '3.1.2.2', expect: reject() },
  { file: 'ncl', section: '3.1.2.3', expect: reject() },
  { file: 'scalar02', section: '3.1.2.4', expect: reject() },
  { file: 'scalarlg', section: '3.1.2.5', expect: drop },
  { file: 'quotbal', section: '3.1.2.6', expect: reject() },
  { file: 'ltgtruri', section: '3.1.2.7', expect: reject() },
  { file: 'lwsruri', section: '3.1.2.8', expect: reject() },
  { file: 'lwsstart', section: '3.1.2.9', expect: reject() },
  { file: 'trws', section: '3.1.2.10', expect: reject() },
  { file: 'escruri', section: '3.1.2.11', expect: reject() },
  // 3.1.2.12: Date is not interpreted by this stack, so the message is accepted and Date ignored.
  { file: 'baddate', section: '3.1.2.12', expect: accept() },
  // 3.1.2.13 to 3.1.2.15: the liberal choice the RFC allows.
  { file: 'regbadct', section: '3.1.2.13', expect: accept() },
  { file: 'badaspec', section: '3.1.2.14', expect: accept((m, t) => t.equal(m.to.uri.host, 'example.org')) },
  { file: 'baddn', section: '3.1.2.15', expect: accept((m, t) => t.equal(m.from.displayName, 'Bell, Alexander')) },
  { file: 'badvers', section: '3.1.2.16', expect: reject(505) },
  { file: 'mismatch01', section: '3.1.2.17', expect: reject() },
  // 3.1.2.18: 501 preferred, 400 acceptable; the parser rejects the CSeq mismatch first.
  { file: 'mismatch02', section: '3.1.2.18', expect: reject() },
  { file: 'bigcode', section: '3.1.2.19', expect: drop },
  { file: 'badbranch', section: '3.2.1', expect: accept((m, t) => t.equal(m.topVia.branch, 'z9hG4bK')) },
  { file: 'insuf', section: '3.3.1', expect: reject() },
  { file: 'unkscm', section: '3.3.2', expect: uas(416) },
  { file: 'novelsc', section: '3.3.3', expect: uas(416) },
  { file: 'unksm2', section: '3.3.4', expect: accept((m, t) => t.equal(m.to.uri.scheme, 'isbn')) },
  { file: 'bext01', section: '3.3.5', expect: uas(420) },
  { file: 'invut', section: '3.3.6', expect: uas(415) },
  { file: 'regaut01', section: '3.3.7', expect: accept((m, t) => t.match(m.headers.get('Authorization'), /^NoOneKnowsThisScheme/)) },
  { file: 'multi01', section: '3.3.8', expect: reject() },
  { file: 'mcl01', section: '3.3.9', expect: reject() },
  { file: 'bcast', section: '3.3.10', expect: accept((m, t) => t.equal(m.vias[1]!.host, '255.255.255.255')) },
  { file: 'zeromf', section: '3.3.11', expect: accept((m, t) => t.equal(m.maxForwards, 0)) },
  { file: 'cparam01', section: '3.3.12', expect: accept((m, t) => t.ok(m.contacts[0]!.params.has('unknownparam'), 'header parameter')) },
  { file: 'cparam02', section: '3.3.13', expect: accept((m, t) => t.ok(m.contacts[0]!.uri.params.has('unknownparam'), 'URI parameter')) },
  { file: 'regescrt', section: '3.3.14', expect: accept((m, t) => t.equal(m.contacts[0]!.uri.headers.get('Route'), '%3Csip:sip.example.com%3E')) },
  { file: 'sdp01', section: '3.3.15', expect: uas(406) },
  { file: 'inv2543', section: '3.4.1', expect: accept((m, t) => t.equal(m.maxForwards, undefined)) },
];

/** RFC 5118 section 4. */
const RFC5118: Row[] = [
  { file: 'ipv6-good', section: '4.1', expect: accept((m, t) => t.equal(parseUri(req(m).uri).host, '2001:db8::10')) },
  { file: 'ipv6-bad', section: '4.2', expect: reject() },
  { file: 'port-ambiguous', section: '4.3', expect: accept((m, t) => t.same([parseUri(req(m).uri).host, parseUri(req(m).uri).port], ['2001:db8::10:5070', undefined])) },
  { file: 'port-unambiguous', section: '4.4', expect: accept((m, t) => t.equal(parseUri(req(m).uri).port, 5070)) },
  { file: 'via-received-param-with-delim', section: '4.5', expect: accept((m, t) => t.equal(m.topVia.received, '[2001:db8::9:255]')) },
  { file: 'via-received-param-no-delim', section: '4.5', expect: accept((m, t) => t.equal(m.topVia.received, '2001:db8::9:255')) },
  // 4.6, 4.8, 4.9: the declared Content-Length is shorter than the SDP; the tail is ignored (RFC 3261 18.3).
  { file: 'ipv6-in-sdp', section: '4.6', expect: accept((m, t) => t.equal(m.body.length, 241)) },
  { file: 'mult-ip-in-header', section: '4.7', expect: accept((m, t) => t.same(m.vias.map((v) => v.host), ['2001:db8::9:1', '192.0.2.1', '2001:db8::9:255'])) },
  { file: 'mult-ip-in-sdp', section: '4.8', expect: accept((m, t) => t.equal(m.body.length, 181)) },
  { file: 'ipv4-mapped-ipv6', section: '4.9', expect: accept((m, t) => t.equal(m.topVia.host, '::ffff:192.0.2.10')) },
  { file: 'ipv6-bug-abnf-3-colons', section: '4.10', expect: accept() },
  { file: 'ipv6-correct-abnf-2-colons', section: '4.10', expect: accept() },
];

function load(dir: string, file: string): Buffer {
  return readFileSync(new URL(`${dir}/${file}.dat`, DATA));
}

function checkRow(tt: Test, outcome: ParseOutcome, e: Expect): void {
  switch (e.outcome) {
    case 'accept':
    case 'uas': {
      if (!outcome.ok) {
        tt.fail(`parse failed: ${outcome.error.reason}`);
        return;
      }
      const m = outcome.message;
      // Unusual methods (3.1.1.2, 3.1.1.5) are about parsing: the UAS is taken to implement them.
      const caps = m.kind === 'request' && e.outcome === 'accept' ? { ...CAPS, methods: [...CAPS.methods, m.method] } : CAPS;
      const rejection = m.kind === 'request' ? checkUasRequest(m, caps) : undefined;
      tt.equal(rejection?.status, e.outcome === 'uas' ? e.status : undefined, 'UAS checks');
      if (e.outcome === 'accept') e.check?.(m, tt);
      const again = parseMessage(serializeMessage(m));
      tt.ok(again.ok, 'serialized form parses again');
      if (again.ok) tt.equal(again.message.headers.size, m.headers.size + (m.headers.has('Content-Length') ? 0 : 1));
      return;
    }
    case 'reject': {
      tt.notOk(outcome.ok, 'rejected');
      if (outcome.ok) return;
      tt.equal(outcome.error.status, e.status);
      tt.ok(outcome.request, 'enough was parsed to answer');
      if (!outcome.request) return;
      const answer = parseMessage(serializeMessage(createResponse(outcome.request, outcome.error.status)));
      tt.ok(answer.ok || outcome.request.headers.has('Via'), 'the answer is a message');
      return;
    }
    case 'drop':
      tt.notOk(outcome.ok, 'not accepted');
      tt.notOk(!outcome.ok && outcome.request, 'no request to answer: the response is dropped');
      return;
  }
}

for (const [rfc, dir, rows] of [['RFC 4475', 'rfc4475', RFC4475], ['RFC 5118', 'rfc5118', RFC5118]] as const) {
  t.test(`${rfc}: every torture message is in the table`, (tt) => {
    tt.equal(rows.length, rfc === 'RFC 4475' ? 49 : 12);
    tt.end();
  });
  for (const row of rows) {
    t.test(`${rfc} ${row.section} ${row.file}: ${row.expect.outcome}${'status' in row.expect ? ` ${row.expect.status}` : ''}`, (tt) => {
      checkRow(tt, parseMessage(load(dir, row.file)), row.expect);
      tt.end();
    });
  }
}
