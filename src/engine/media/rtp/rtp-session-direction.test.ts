import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { openTestSession, RtpPeer, settle } from '../../../../test/support/rtp-peer.js';
import { serializeRtp } from './packet.js';

const ulaw = Buffer.alloc(160, 0xff);
const packet = (seq: number): Buffer => serializeRtp({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 7 }, ulaw);

t.test('RFC 3264 5.1: a recvonly or inactive side sends no RTP but still RTCP; toward c=0.0.0.0 (8.4) it sends neither', async (t) => {
  const clock = new FakeClock();
  const session = await openTestSession(t, { clock, muxOnly: true, rtcpIntervalMs: 5000 });
  const peer = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: peer.port });
  session.send(packet(1), 1);
  await peer.waitFor(1);
  t.equal(peer.received[0]!.data[1]! & 0x7f, 0, 'sendrecv: RTP goes out');

  session.setSending(false, true);
  t.equal(session.isSending, false);
  session.send(packet(2), 1);
  await settle();
  t.equal(peer.received.length, 1, 'recvonly: the packet is dropped');
  t.equal(session.stats().packetsSent, 1, 'and not counted as sent');
  clock.advance(8000);
  await peer.waitFor(2);
  t.equal(peer.received[1]!.data[1], 200, 'RTCP still goes out (a sender report for what went before)');

  session.setSending(false, false);
  clock.advance(16_000);
  await settle();
  t.equal(peer.received.length, 2, 'toward the RFC 2543 hold address: no RTCP either');

  session.setSending(true, true);
  session.send(packet(3), 1);
  await peer.waitFor(3);
  t.equal(peer.received[2]!.data[1]! & 0x7f, 0, 'sendrecv again: RTP goes out');
});
