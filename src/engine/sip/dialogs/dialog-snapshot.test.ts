/** @module Dialog snapshots: what a BYE from another process is built from, and its CSeq rule (RFC 3261 §12.2.1.1, §12.2.2). */
import t from 'tap';
import { testRequest, testResponse } from '../../../../test/support/sip-messages.js';
import { byeFromSnapshot, SNAPSHOT_BYE_REASON } from '../user-agent-core/snapshot-bye.js';
import { Dialog } from './dialog.js';
import { parseDialogSnapshot, SNAPSHOT_CSEQ_MARGIN, snapshotCSeq, type DialogSnapshot } from './dialog-snapshot.js';

/** Our UAC dialog through two record-routing proxies, confirmed by a 2xx. */
function uacDialog(cseq = 1): Dialog {
  const inv = testRequest({ cseq });
  const ok = testResponse(inv, 200, 'callee-tag');
  ok.headers.append('Record-Route', '<sip:edge.example;lr>');
  ok.headers.append('Record-Route', '<sip:carrier-sbc.example;lr>');
  ok.headers.append('Contact', '<sip:bob@192.0.2.2:5070>');
  return Dialog.fromUac(inv, ok);
}

t.test('RFC 3261 12.2.1.1: a BYE from the JSON snapshot carries the dialog id, route set and remote target', (t) => {
  const d = uacDialog();
  const json = JSON.stringify(d.snapshot('TCP'));
  const s = parseDialogSnapshot(json);
  if (!s) throw new Error('the snapshot did not parse back');
  t.equal(s.transport, 'TCP');
  const { request: bye, nextHop } = byeFromSnapshot(s);
  t.equal(bye.method, 'BYE');
  t.equal(bye.callId, d.callId, 'Call-ID');
  t.equal(bye.from.tag, 'ftag', 'From tag is our local tag');
  t.equal(bye.to.tag, 'callee-tag', 'To tag is the remote tag');
  t.equal(bye.uri, 'sip:bob@192.0.2.2:5070', 'loose routing: the Request-URI is the remote target');
  t.same(bye.headers.getAll('Route'), ['<sip:carrier-sbc.example;lr>', '<sip:edge.example;lr>'], 'the route set in order');
  t.equal(nextHop, 'sip:carrier-sbc.example;lr', '8.1.2: the next hop is the first Route');
  t.equal(bye.headers.get('Reason'), SNAPSHOT_BYE_REASON, 'RFC 3326: Q.850 cause 41');
  t.equal(bye.cseq.method, 'BYE');
  t.end();
});

t.test('RFC 3261 12.2.2: the BYE CSeq is above every request the owner sent after the snapshot', (t) => {
  // [CSeq of the INVITE, requests the owner sent after the snapshot (refreshes, holds, INFO digits)]
  const table: [number, number][] = [[1, 0], [1, 1], [1, 500], [1, 100_000], [40_000, 3], [1, SNAPSHOT_CSEQ_MARGIN - 1]];
  for (const [inviteSeq, sentAfter] of table) {
    const owner = uacDialog(inviteSeq);
    const snapshot = owner.snapshot('UDP');
    for (let i = 0; i < sentAfter; i++) owner.localSeq++; // what createRequest does per request
    // The far end's view of the dialog: it saw every request the owner sent.
    const far = new Dialog({ ...snapshot, localTag: 'callee-tag', remoteTag: 'ftag', remoteSeq: owner.localSeq, state: 'Confirmed' });
    const { request: bye } = byeFromSnapshot(snapshot);
    t.ok(bye.cseq.seq > owner.localSeq, `INVITE ${inviteSeq}, ${sentAfter} after: BYE ${bye.cseq.seq} > ${owner.localSeq}`);
    t.ok(far.acceptRemoteCSeq(bye), 'the far end accepts it (no 500)');
  }
  t.end();
});

t.test('RFC 3261 8.1.1.5: the snapshot CSeq stays below 2**31', (t) => {
  const table: [number, number][] = [[0, SNAPSHOT_CSEQ_MARGIN], [1, 1 + SNAPSHOT_CSEQ_MARGIN], [2 ** 31 - 10, 2 ** 31 - 1], [2 ** 31 - 1, 2 ** 31 - 1]];
  for (const [localSeq, expected] of table) t.equal(snapshotCSeq({ localSeq }), expected, `${localSeq} → ${expected}`);
  t.end();
});

t.test('RFC 3261 12.1.1: a UAS dialog snapshot keeps the Record-Route order; a strict first route becomes the Request-URI', (t) => {
  const inv = testRequest({ extra: [['Record-Route', '<sip:strict.example>'], ['Record-Route', '<sip:p2.example;lr>']] });
  const d = Dialog.fromUas(inv, 'our-tag', 'Confirmed');
  const { request: bye, nextHop } = byeFromSnapshot(d.snapshot('UDP'));
  t.equal(bye.uri, 'sip:strict.example', '12.2.1.1: the strict route is the Request-URI');
  t.same(bye.headers.getAll('Route'), ['<sip:p2.example;lr>', '<sip:alice@192.0.2.1:5060>'], 'the remote target goes last');
  t.equal(nextHop, 'sip:strict.example');
  t.equal(bye.from.tag, 'our-tag');
  t.equal(bye.to.tag, 'ftag');
  t.match(bye.headers.get('From') ?? '', /sip:bob@192\.0\.2\.2/, 'From is our side (the INVITE To)');
  t.end();
});

t.test('docs/ARCHITECTURE.md "Process roles": a stored snapshot that is not one is refused', (t) => {
  const good: DialogSnapshot = uacDialog().snapshot('UDP');
  const table: [string, string][] = [
    ['not JSON', '{'],
    ['not an object', '"x"'],
    ['no Call-ID', JSON.stringify({ ...good, callId: '' })],
    ['a tag of the wrong type', JSON.stringify({ ...good, remoteTag: 5 })],
    ['a route set of numbers', JSON.stringify({ ...good, routeSet: [1] })],
    ['a negative CSeq', JSON.stringify({ ...good, localSeq: -1 })],
    ['a fractional CSeq', JSON.stringify({ ...good, localSeq: 1.5 })],
    ['an unknown transport', JSON.stringify({ ...good, transport: 'SCTP' })],
  ];
  for (const [what, json] of table) t.equal(parseDialogSnapshot(json), null, what);
  t.same(parseDialogSnapshot(JSON.stringify(good)), good, 'a good one reads back equal');
  t.end();
});

t.test('RFC 3261 12.2.1.2: a target refresh that moves the remote target is reported, so the stored snapshot can be replaced', (t) => {
  const d = uacDialog();
  let refreshed = 0;
  d.onTargetRefresh = () => refreshed++;
  const reinvite = testRequest({ method: 'INVITE', cseq: 3 });
  d.refreshTarget(reinvite.headers);
  t.equal(refreshed, 1, 'a new Contact');
  t.equal(d.snapshot('UDP').remoteTarget, 'sip:alice@192.0.2.1:5060', 'the snapshot takes the new target');
  d.refreshTarget(reinvite.headers);
  t.equal(refreshed, 1, 'the same Contact again is no change');
  t.end();
});
