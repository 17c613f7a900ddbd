/** @module UAS early dialogs over real UDP on 127.0.0.1 (RFC 3261 §12.1.1, §15; RFC 3311), and the §12.2.2 CSeq rule. */
import t from 'tap';
import type { TestTransport } from '../../../../test/support/sip-test-transport.js';
import { startGatewayUaOnTestTransport } from '../../../../test/support/sip-sipp.js';
import type { SessionDialog } from '../dialogs/session-dialog.js';
import type { InboundCall } from './inbound-call.js';
import type { OutboundCall } from './outbound-call.js';
import type { SipUserAgent } from './sip-user-agent.js';

interface TapTest { teardown(fn: () => void | Promise<void>): void }

const SDP_A = Buffer.from('v=0\r\no=a 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=sendrecv\r\n');
const SDP_B = Buffer.from('v=0\r\no=b 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 5000 RTP/AVP 0\r\na=sendrecv\r\n');

/** Two-or-more-UA tests over the minimal test transport; `tr` is the UA's transport. */
async function makeUa(t: TapTest): Promise<{ ua: SipUserAgent; tr: TestTransport }> {
  const { ua, transport } = await startGatewayUaOnTestTransport(t);
  return { ua, tr: transport };
}

/**
 * Calls b from a; b answers with `progress` (which must send a 18x). `sa` is the caller side of the
 * early dialog, which the UAC handle built from the 18x (§12.1.2).
 */
async function ringing(t: TapTest, progress: (call: InboundCall) => void): Promise<{ a: SipUserAgent; b: SipUserAgent; call: OutboundCall; inbound: InboundCall; sa: SessionDialog }> {
  const { ua: a } = await makeUa(t);
  const { ua: b, tr: tb } = await makeUa(t);
  const inbound = new Promise<InboundCall>((resolve) => b.events.on('invite', (c) => {
    progress(c);
    resolve(c);
  }));
  const call = a.invite({ target: `sip:bob@127.0.0.1:${tb.udpPort}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A });
  const sa = await new Promise<SessionDialog>((resolve) => call.events.on('early', (s) => resolve(s)));
  return { a, b, call, inbound: await inbound, sa };
}

t.test('RFC 3261 15: BYE from the caller in the early dialog gets 200, the INVITE 487, and the cancel event', async (t) => {
  const { b, call, inbound, sa } = await ringing(t, (c) => void c.progress(180));
  t.equal(b.dialogCount, 1, '12.1.1: the 180 with our To tag registered an early dialog');
  const cancelled = new Promise<string>((resolve) => inbound.events.on('cancel', (req) => resolve(req.method)));
  const ended = new Promise((resolve) => inbound.session?.events.on('terminated', resolve));
  const failed = new Promise<number>((resolve) => call.events.on('failed', (s) => resolve(s)));
  t.equal(await sa.bye(), 200, 'BYE answered 200, not 481');
  t.equal(await failed, 487, 'the pending INVITE got 487');
  t.equal(await cancelled, 'BYE', 'the UAS handle reports the call ended before answer');
  t.equal(await ended, 'remote-bye');
  t.equal(b.dialogCount, 0);
  t.ok(inbound.isFinal);
});

t.test('RFC 3261 12.1.1: INFO during ringing is delivered; the early dialog becomes the confirmed one on our 2xx', async (t) => {
  let early: SessionDialog | undefined;
  const { b, call, inbound, sa } = await ringing(t, (c) => { early = c.progress(183, SDP_B); });
  const info = new Promise<string>((resolve) => early?.events.on('info', (req) => resolve(req.body.toString())));
  t.equal(await sa.info(Buffer.from('Signal=5\r\nDuration=160\r\n'), 'application/dtmf-relay'), 200);
  t.equal(await info, 'Signal=5\r\nDuration=160\r\n');
  const accepted = new Promise<SessionDialog>((resolve) => call.events.on('accepted', (s) => resolve(s)));
  const confirmed = inbound.accept(SDP_B);
  t.equal(confirmed, early, 'the same session, now confirmed');
  t.equal(confirmed?.dialog.state, 'Confirmed');
  t.equal(b.dialogCount, 1);
  const s = await accepted;
  t.equal(s, sa, '13.2.2.4: the 2xx confirmed the UAC early dialog itself');
  t.equal(s.dialog.state, 'Confirmed');
  t.equal(await s.bye(), 200, '12.2.1.1: the BYE continues the CSeq space the early INFO used');
});

t.test('RFC 3311 5.2: UPDATE in the early dialog is answered through onOffer; 491 while our offer is pending', async (t) => {
  let early: SessionDialog | undefined;
  const { sa, inbound } = await ringing(t, (c) => { early = c.progress(183, SDP_B); });
  if (!early) throw new Error('no early session');
  early.onOffer = (offer) => Buffer.from(offer.toString().replace('a=sendonly', 'a=recvonly'));
  const up = await sa.update(Buffer.from(SDP_A.toString().replace('a=sendrecv', 'a=sendonly')));
  t.equal(up.status, 200);
  t.match('headers' in up ? up.body.toString() : '', /a=recvonly/, '200 carries the answer');
  sa.onOffer = async (offer) => {
    await new Promise((r) => setTimeout(r, 100));
    return offer;
  };
  const ours = early.update(SDP_B);
  await new Promise((r) => setTimeout(r, 20));
  t.equal((await sa.update(SDP_A)).status, 491, 'an UPDATE offer while ours is outstanding gets 491');
  t.equal((await ours).status, 200);
  inbound.reject(486);
});

t.test('RFC 3311 5.2: UPDATE while the INVITE offer is unanswered gets 500 with Retry-After; our non-2xx drops the early dialog', async (t) => {
  let early: SessionDialog | undefined;
  const { b, inbound, sa, call } = await ringing(t, (c) => { early = c.progress(180); });
  if (!early) throw new Error('no early session');
  early.onOffer = (offer) => offer;
  const up = await sa.update(SDP_A);
  t.equal(up.status, 500);
  t.ok('headers' in up && up.headers.has('Retry-After'));
  const failed = new Promise<number>((resolve) => call.events.on('failed', (s) => resolve(s)));
  const ended = new Promise((resolve) => early?.events.on('terminated', resolve));
  inbound.reject(486);
  t.equal(await failed, 486);
  t.equal(await ended, 'request-failed');
  t.equal(b.dialogCount, 0, '12.3: the early dialog is gone');
  t.equal((await sa.info(Buffer.from('x'), 'application/dtmf-relay')), 481, 'requests in it now get 481');
  t.equal(sa.isEnded, true, '12.3: the 486 ended the caller side of the early dialog too');
});

t.test('RFC 3261 12.2.2: a request with an equal CSeq on a new branch gets 500', async (t) => {
  const { call, inbound, sa } = await ringing(t, (c) => void c.progress(180));
  const accepted = new Promise<SessionDialog>((resolve) => call.events.on('accepted', (s) => resolve(s)));
  inbound.accept(SDP_B);
  const s = await accepted;
  t.equal(s.id, sa.id);
  t.equal(await s.info(Buffer.from('a'), 'application/dtmf-relay'), 200);
  s.dialog.localSeq -= 1;
  t.equal(await s.info(Buffer.from('b'), 'application/dtmf-relay'), 500, 'the same CSeq again, new branch: 500');
  t.equal(await s.info(Buffer.from('c'), 'application/dtmf-relay'), 200, 'the next higher CSeq is accepted');
  t.equal(await s.bye(), 200);
});
