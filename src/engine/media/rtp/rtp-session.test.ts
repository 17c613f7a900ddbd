import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import { openTestSession, RtpPeer, settle } from '../../../../test/support/rtp-peer.js';
import { parseRtpHeader, serializeRtp, type RtpHeader } from './packet.js';
import { isPortsExhausted, PortPool } from './port-pool.js';
import { RtpSession } from './rtp-session.js';

const ulaw = Buffer.alloc(160, 0xff);
const fields = (seq: number, ssrc = 42) => ({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc });


t.test('RFC 3550 11: sessions bind an even RTP port and RTCP on the next; exhaustion is a value', async (t) => {
  const base = 40000 + 2 * Math.floor(Math.random() * 9000);
  const pool = new PortPool({ min: base, max: base + 1 });
  const one = await RtpSession.open({ clock: new FakeClock(), ports: pool, bindAddress: '127.0.0.1' });
  if (isPortsExhausted(one)) return t.fail('first session must open');
  t.teardown(() => one.close());
  t.equal(one.localPort % 2, 0);
  t.same(await RtpSession.open({ clock: new FakeClock(), ports: pool, bindAddress: '127.0.0.1' }), { error: 'ports-exhausted' });
  one.close();
  one.close();
  t.equal(pool.available, 1, 'close is idempotent and returns the port once');
});

t.test('RFC 4961: the session sends to the SDP address, then latches to the first packet source', async (t) => {
  const session = await openTestSession(t);
  const sdpPeer = await RtpPeer.open(t);
  const natPeer = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: sdpPeer.port });
  session.send(serializeRtp(fields(1), ulaw), 1);
  await sdpPeer.waitFor(1);
  const got: Buffer[] = [];
  session.take({ onRtp: (p) => got.push(Buffer.from(p)) });
  await natPeer.sendRtp(session.localPort, fields(1), ulaw);
  await settle();
  t.equal(got.length, 1);
  t.equal(session.isLatched, true);
  t.same(session.remote, { address: '127.0.0.1', port: natPeer.port });
  t.match(session.describe(), /\(latched\)/);
  session.send(serializeRtp(fields(2), ulaw), 1);
  await natPeer.waitFor(1);
  t.equal(sdpPeer.received.length, 1, 'nothing more to the SDP address');
  session.setRemote({ address: '127.0.0.1', port: sdpPeer.port });
  t.equal(session.remote?.port, natPeer.port, 'the same SDP address again keeps the latch');
  const moved = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: moved.port });
  t.equal(session.isLatched, false, 'a new SDP address (re-INVITE) unlatches');
  session.send(serializeRtp(fields(3), ulaw), 1);
  await moved.waitFor(1);
});

// Another host (127.0.0.2) with rtp.strict_source off: the rule before strict sources, still available.
t.test('RFC 4961 and RFC 3550 A.1, strict_source off: another host re-latches after MIN_SEQUENTIAL packets in sequence, for a new SSRC or after the latched source went idle', async (t) => {
  const clock = new FakeClock();
  const session = await openTestSession(t, { clock, relatchIdleMs: 1000, strictSource: false });
  const first = await RtpPeer.open(t);
  const intruder = await RtpPeer.open(t, '127.0.0.2');
  let accepted = 0;
  session.take({ onRtp: () => accepted++ });
  await first.sendRtp(session.localPort, fields(1, 42), ulaw);
  await settle();
  await intruder.sendRtp(session.localPort, fields(2, 42), ulaw);
  await intruder.sendRtp(session.localPort, fields(3, 42), ulaw);
  await settle();
  t.equal(accepted, 1, 'RFC 3550 8.2: the same SSRC from another address while active is rejected');
  t.equal(session.stats().packetsRejected, 2);
  clock.advance(1500);
  await intruder.sendRtp(session.localPort, fields(4, 42), ulaw);
  await settle();
  t.equal(accepted, 1, 'once idle, one packet is not enough');
  await intruder.sendRtp(session.localPort, fields(5, 42), ulaw);
  await settle();
  t.equal(accepted, 2, 'the second in sequence re-latches (the far end moved)');
  t.equal(session.remote?.port, intruder.port);
  await first.sendRtp(session.localPort, fields(6, 99), ulaw);
  await settle();
  t.equal(accepted, 2, 'a new SSRC from another address: one packet is a stray');
  await first.sendRtp(session.localPort, fields(7, 99), ulaw);
  await settle();
  t.equal(accepted, 3, 'the second in sequence re-latches at once (a transferred source)');
  t.equal(session.remote?.port, first.port);
  await first.sendRtp(session.localPort, fields(900, 7), ulaw);
  await settle();
  t.equal(accepted, 4, 'the latched address is the far end: a new SSRC from it is taken at once');
  await intruder.sendRtp(session.localPort, fields(901, 7), ulaw);
  await intruder.sendRtp(session.localPort, fields(902, 7), ulaw);
  await settle();
  t.equal(accepted, 4, 'RFC 3550 8.2: its new SSRC from another address, even in sequence, is refused while it is active');
  t.equal(session.remote?.port, first.port);
});

t.test('RFC 4961: random and malformed datagrams from another address neither latch nor pass, however many', async (t) => {
  const session = await openTestSession(t);
  const first = await RtpPeer.open(t);
  const intruder = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: first.port });
  let accepted = 0;
  session.take({ onRtp: () => accepted++ });
  await intruder.sendRaw(session.localPort, Buffer.from([0x8f, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]));
  await settle();
  t.equal(session.isLatched, false, 'a header whose CSRC list runs past the packet does not latch');
  await first.sendRtp(session.localPort, fields(1, 42), ulaw);
  await settle();
  for (let i = 0; i < 50; i++) {
    const junk = serializeRtp({ payloadType: 0, sequenceNumber: 7, timestamp: 0, ssrc: 1000 + i }, ulaw);
    await intruder.sendRaw(session.localPort, junk);
  }
  await settle();
  t.equal(accepted, 1, 'only the latched source');
  t.equal(session.remote?.port, first.port, 'still latched to it');
  t.equal(session.stats().packetsRejected, 51);
  await intruder.sendRaw(session.localPort, Buffer.from([0x40, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1]));
  await first.sendRaw(session.localPort, Buffer.alloc(5));
  await settle();
  t.equal(session.stats().packetsInvalid, 2, 'RFC 3550 5.1: version 1 and a 5-byte datagram are counted as invalid');
});

t.test('media timeout fires once per silence, driven by the clock', async (t) => {
  const clock = new FakeClock();
  const session = await openTestSession(t, { clock, mediaTimeoutMs: 5000 });
  const peer = await RtpPeer.open(t);
  let timeouts = 0;
  session.watchMedia(() => timeouts++);
  await peer.sendRtp(session.localPort, fields(1), ulaw);
  await settle();
  clock.advance(4000);
  await peer.sendRtp(session.localPort, fields(2), ulaw);
  await settle();
  clock.advance(4000);
  t.equal(timeouts, 0, 'packets keep it alive');
  clock.advance(1500);
  t.equal(timeouts, 1);
  clock.advance(20000);
  t.equal(timeouts, 1, 'not repeated during the same silence');
  await peer.sendRtp(session.localPort, fields(3), ulaw);
  await settle();
  clock.advance(5000);
  t.equal(timeouts, 2, 're-armed by the next packet');
});

t.test('RFC 3550 6.4: sessions exchange SR/RR and expose loss, jitter and RTT', async (t) => {
  const clock = new FakeClock();
  const a = await openTestSession(t, { clock, rtcpIntervalMs: 5000 });
  const b = await openTestSession(t, { clock, rtcpIntervalMs: 5000 });
  a.setRemote({ address: '127.0.0.1', port: b.localPort });
  b.setRemote({ address: '127.0.0.1', port: a.localPort });
  let received = 0;
  b.take({ onRtp: () => received++ });
  a.take({ onRtp: () => received++ });
  let seq = 0;
  // Three report rounds with media in each, so each side holds the other's SR for LSR/DLSR.
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 10; i++, seq++) {
      if (seq !== 5) a.send(serializeRtp(fields(100 + seq, 5), ulaw), 5);
      b.send(serializeRtp(fields(seq, 6), ulaw), 6);
      clock.advance(20);
      await settle(2);
    }
    clock.advance(7600);
    await settle();
  }
  t.ok(received > 50);
  const stats = a.stats();
  t.equal(b.stats().reception.packetsLost, 1, 'B saw the gap');
  t.ok(stats.remoteReport, 'A has B report about its stream');
  t.equal(stats.remoteReport!.cumulativeLost, 1);
  t.not(stats.remoteReport!.rttMs, null, 'RTT from LSR and DLSR');
  t.equal(stats.packetsSent, 29);
});

t.test('RFC 5761: with rtcp-mux, RTCP on the RTP port is not passed on as media', async (t) => {
  const session = await openTestSession(t);
  const peer = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: peer.port }, { rtcpMux: true });
  let media = 0;
  session.take({ onRtp: () => media++ });
  await peer.sendRaw(session.localPort, Buffer.from([0x80, 201, 0, 1, 0, 0, 0, 9]));
  await peer.sendRtp(session.localPort, fields(1), ulaw);
  await settle();
  t.equal(media, 1);
  const h = parseRtpHeader(serializeRtp(fields(1), ulaw)) as RtpHeader;
  t.equal(h.payloadType, 0);
});

t.test('RFC 5761: a mux-only session binds no port+1 and reports on the RTP port', async (t) => {
  const clock = new FakeClock();
  const session = await openTestSession(t, { clock, muxOnly: true, rtcpIntervalMs: 5000 });
  const peer = await RtpPeer.open(t);
  session.setRemote({ address: '127.0.0.1', port: peer.port });
  await peer.sendRtp(session.localPort, fields(1), ulaw);
  await peer.sendRtp(session.localPort, fields(2), ulaw);
  await settle();
  clock.advance(8000);
  await peer.waitFor(1);
  const report = peer.received[0]!;
  t.equal(report.port, session.localPort, 'sent from the RTP port');
  t.equal(report.data[1], 201, 'an RR about the stream we received');
  t.match(session.describe(), /rtcp-mux/);
});
