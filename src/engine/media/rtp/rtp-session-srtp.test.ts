import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { openTestSession, RtpPeer, settle } from '../../../../test/support/rtp-peer.js';
import { SrtpReceiver } from '../srtp/srtp-receiver.js';
import { SrtpSender } from '../srtp/srtp-sender.js';
import { generateMasterKey, srtpSuite, type SrtpMasterKey } from '../srtp/srtp-suite.js';
import { serializeRtp } from './packet.js';

const speech = Buffer.from(Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff));
const fields = (seq: number, ssrc = 42) => ({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc });
const key = (name = 'AES_CM_128_HMAC_SHA1_80'): SrtpMasterKey => generateMasterKey(srtpSuite(name)!);


t.test('RFC 3711 3.1: two sessions keyed crosswise exchange media that is encrypted and authenticated on the wire', async (t) => {
  const [k1, k2] = [key(), key('AES_CM_128_HMAC_SHA1_32')];
  const a = await openTestSession(t);
  const b = await openTestSession(t);
  a.setRemote({ address: '127.0.0.1', port: b.localPort });
  b.setRemote({ address: '127.0.0.1', port: a.localPort });
  a.setSrtp({ send: k1, receive: k2 });
  b.setSrtp({ send: k2, receive: k1 });
  const atB: Buffer[] = [];
  const atA: Buffer[] = [];
  b.take({ onRtp: (p) => atB.push(Buffer.from(p)) });
  a.take({ onRtp: (p) => atA.push(Buffer.from(p)) });
  for (let seq = 1; seq <= 5; seq++) {
    a.send(serializeRtp(fields(seq, 7), speech), 1);
    b.send(serializeRtp(fields(seq, 8), speech), 1);
  }
  await settle();
  t.equal(atB.length, 5, 'B decrypted all of A\'s packets');
  t.equal(atA.length, 5, 'and A all of B\'s');
  t.same(atB[0]!.subarray(12), speech, 'the payload arrives as sent');
  t.equal(atB[0]!.length, 172, 'with the tag taken off');
  t.equal(a.stats().srtpSuite, 'AES_CM_128_HMAC_SHA1_80', 'the suite of what we send is in the stats');
  t.match(a.describe(), / srtp$/);

  // What crosses the wire: a session keyed as A, sending to a plain socket. A fresh one, so its
  // first packet has ROC 0 as a receiver that joins at it assumes (RFC 3711 3.3.1); A itself may
  // have wrapped its random initial sequence number by now.
  const tap = await RtpPeer.open(t);
  const a2 = await openTestSession(t);
  a2.setRemote({ address: '127.0.0.1', port: tap.port });
  a2.setSrtp({ send: k1, receive: k2 });
  a2.send(serializeRtp(fields(6, 7), speech), 1);
  await tap.waitFor(1);
  const wire = tap.received[0]!.data;
  t.equal(wire.length, 172 + 10, 'an 80-bit tag is appended');
  t.notSame(wire.subarray(12, 172), speech, 'the payload is encrypted');
  const opened = new SrtpReceiver(k1).unprotectRtp(Buffer.from(wire));
  t.same(opened?.subarray(12), speech, 'and the holder of A\'s key reads it');
});

t.test('RFC 3711 3.3 and RFC 4961: packets without the key neither pass nor latch, and are counted', async (t) => {
  const [ours, theirs] = [key(), key()];
  const session = await openTestSession(t);
  const far = await RtpPeer.open(t);
  const intruder = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: far.port });
  session.setSrtp({ send: ours, receive: theirs });
  const got: Buffer[] = [];
  session.take({ onRtp: (p) => got.push(Buffer.from(p)) });
  const farSender = new SrtpSender(theirs);
  const wrongKey = new SrtpSender(key());
  for (let seq = 1; seq <= 8; seq++) {
    await intruder.sendRtp(session.localPort, fields(seq, 99), speech);
    await intruder.sendRaw(session.localPort, wrongKey.protectRtp(serializeRtp(fields(seq, 98), speech)));
  }
  await settle();
  t.equal(got.length, 0, 'plain RTP and RTP under another key are dropped');
  t.equal(session.isLatched, false, 'and do not move the latch, however well-formed and in sequence');
  t.equal(session.stats().packetsUnauthenticated, 16);
  const first = farSender.protectRtp(serializeRtp(fields(1, 5), speech));
  await far.sendRaw(session.localPort, Buffer.from(first));
  await far.sendRaw(session.localPort, first);
  await settle();
  t.equal(got.length, 1, 'the keyholder\'s packet passes, its replay does not (3.3.2)');
  t.equal(session.isLatched, true, 'and only the keyholder latches');
  t.equal(session.stats().packetsUnauthenticated, 17);
});

t.test('RFC 3711 3.2.1: keys repeated by a re-offer keep the contexts; a new key replaces them', async (t) => {
  const [ours, theirs] = [key(), key()];
  const session = await openTestSession(t);
  const far = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: far.port });
  session.setSrtp({ send: ours, receive: theirs });
  let got = 0;
  session.take({ onRtp: () => got++ });
  const farSender = new SrtpSender(theirs);
  const early = farSender.protectRtp(serializeRtp(fields(1, 5), speech));
  await far.sendRaw(session.localPort, Buffer.from(early));
  await settle();
  session.setSrtp({ send: { ...ours }, receive: { ...theirs, key: Buffer.from(theirs.key), salt: Buffer.from(theirs.salt) } });
  await far.sendRaw(session.localPort, Buffer.from(early));
  await settle();
  t.equal(got, 1, 'the same key again keeps the replay window: the old packet is still a replay');
  const rekeyed = key();
  session.setSrtp({ send: ours, receive: rekeyed });
  await far.sendRaw(session.localPort, farSender.protectRtp(serializeRtp(fields(2, 5), speech)));
  await far.sendRaw(session.localPort, new SrtpSender(rekeyed).protectRtp(serializeRtp(fields(3, 5), speech)));
  await settle();
  t.equal(got, 2, 'after a new key only packets under it pass');
  session.setSrtp(null);
  await far.sendRtp(session.localPort, fields(4, 5), speech);
  await settle();
  t.equal(got, 3, 'without keys the session is plain RTP again');
  t.equal(session.stats().srtpSuite, null);
});

for (const muxOnly of [false, true]) {
  t.test(`RFC 3711 3.4: reports go as SRTCP${muxOnly ? ' on the RTP port (RFC 5761)' : ''} and are read back`, async (t) => {
    const clock = new FakeClock();
    const [k1, k2] = [key('AES_256_CM_HMAC_SHA1_80'), key('AES_256_CM_HMAC_SHA1_32')];
    const a = await openTestSession(t, { clock, rtcpIntervalMs: 5000, muxOnly });
    const b = await openTestSession(t, { clock, rtcpIntervalMs: 5000, muxOnly });
    a.setRemote({ address: '127.0.0.1', port: b.localPort }, { rtcpMux: muxOnly });
    b.setRemote({ address: '127.0.0.1', port: a.localPort }, { rtcpMux: muxOnly });
    a.setSrtp({ send: k1, receive: k2 });
    b.setSrtp({ send: k2, receive: k1 });
    let media = 0;
    a.take({ onRtp: () => media++ });
    b.take({ onRtp: () => media++ });
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 10; i++) {
        const seq = round * 10 + i;
        a.send(serializeRtp(fields(seq, 5), speech), 5);
        b.send(serializeRtp(fields(seq, 6), speech), 6);
        clock.advance(20);
        await settle(2);
      }
      clock.advance(7600);
      await settle();
    }
    t.equal(media, 60, 'SRTCP on the same port is not taken for media');
    t.ok(a.stats().remoteReport, 'A read B\'s SRTCP report about its stream');
    t.ok(b.stats().remoteReport, 'and B read A\'s');
    t.equal(a.stats().packetsUnauthenticated + b.stats().packetsUnauthenticated, 0, 'no RTP failed authentication');
    t.equal(a.stats().rtcpUnauthenticated + b.stats().rtcpUnauthenticated, 0, 'nor any RTCP');
    const peer = await RtpPeer.open(t);
    await peer.sendRaw(muxOnly ? a.localPort : a.localPort + 1, Buffer.from('80cc000383905cbe50494e47504f4e47', 'hex'));
    await settle();
    t.equal(a.stats().rtcpUnauthenticated, 1, 'clear RTCP (an APP keep-alive, as baresip sends) is dropped and counted apart');
    t.equal(a.stats().packetsUnauthenticated, 0);
  });
}
