import t from 'tap';
import { openTestSession, RtpPeer, testPortPool } from '../../../../test/support/rtp-peer.js';
import { nativeMediaIo } from './native-udp.js';
import { useMediaIo, type MediaIoKind } from './media-socket.js';
import { serializeRtp } from './packet.js';
import { buildCompoundReport } from './rtcp.js';

const ulaw = Buffer.alloc(160, 0xff);
const fields = (seq: number) => ({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 7 });

t.test('rtp.socket_io: auto takes the addon where it is built, dgram never does, native needs it', (t) => {
  const built = nativeMediaIo() !== null;
  t.equal(useMediaIo('auto'), built ? 'native' : 'dgram');
  t.equal(useMediaIo('native'), built ? 'native' : null);
  t.equal(useMediaIo('dgram'), 'dgram');
  t.end();
});

// Each kind of socket carries one RTP session through the same exchange: RTP in from the SDP
// peer and out to it, RTCP on port+1 (RFC 3550 §11), and the port pair free again on close.
const kinds: MediaIoKind[] = nativeMediaIo() === null ? ['dgram'] : ['native', 'dgram'];
for (const kind of kinds) {
  t.test(`RFC 3550 / RFC 4961 on ${kind} sockets: RTP both ways, latching, RTCP on port+1, close`, async (t) => {
    t.equal(useMediaIo(kind), kind);
    const ports = testPortPool(2);
    const session = await openTestSession(t, { ports });
    const peer = await RtpPeer.open(t);
    const received: Buffer[] = [];
    session.take({ onRtp: (packet) => received.push(packet) });
    session.setRemote({ address: '127.0.0.1', port: peer.port });
    await peer.sendRtp(session.localPort, fields(1), ulaw);
    await peer.sendRtp(session.localPort, fields(2), ulaw);
    const block = { ssrc: session.sequencer.ssrc, fractionLost: 64, cumulativeLost: 3, extendedHighestSeq: 2, jitter: 80, lastSr: 0, delaySinceLastSr: 0 };
    await peer.sendRaw(session.localPort + 1, buildCompoundReport({ ssrc: 7, cname: 'peer', senderInfo: null, reports: [block] }));
    const deadline = Date.now() + 2000;
    while ((received.length < 2 || session.stats().remoteReport === null) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    t.equal(received.length, 2);
    t.ok(session.isLatched, 'latched to the peer');
    t.same(session.remote, { address: '127.0.0.1', port: peer.port });
    t.equal(session.stats().remoteReport?.fractionLost, 0.25, 'the receiver report on port+1 was read');
    session.send(serializeRtp(fields(9), ulaw), 1);
    await peer.waitFor(1);
    t.equal(peer.received[0]!.data.length, 172);
    t.equal(peer.received[0]!.port, session.localPort, 'sent from the RTP port (symmetric RTP)');
    // A pool of one pair: the second session binds the same two ports only if close freed them.
    const port = session.localPort;
    session.close();
    const again = await openTestSession(t, { ports });
    t.equal(again.localPort, port);
  });
}
