import { createHmac } from 'node:crypto';
import t from 'tap';
import { serializeRtp, type RtpPacketFields } from '../rtp/packet.js';
import { deriveSessionKeys } from './key-derivation.js';
import { SrtpReceiver } from './srtp-receiver.js';
import { SrtpSender } from './srtp-sender.js';
import { generateMasterKey, SRTP_SUITES, srtpSuite, type SrtpMasterKey, type SrtpSuiteName } from './srtp-suite.js';

const key = (name: SrtpSuiteName = 'AES_CM_128_HMAC_SHA1_80'): SrtpMasterKey => generateMasterKey(srtpSuite(name)!);
const payload = Buffer.from(Array.from({ length: 160 }, (_, i) => (i * 37) & 0xff));
const rtp = (seq: number, extra: Partial<RtpPacketFields> = {}, body = payload): Buffer =>
  serializeRtp({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 0xabcd, ...extra }, body);
/** An empty-bodied SR-shaped RTCP packet of 28 octets. */
const rtcp = (ssrc = 0xabcd): Buffer => {
  const sr = Buffer.alloc(28, 0x5a);
  sr.writeUInt32BE(0x80c80006, 0);
  sr.writeUInt32BE(ssrc, 4);
  return sr;
};
const hexOf = (b: Buffer | null): string | null => b && b.toString('hex');

/** A sender and receiver keyed alike. */
function pair(master = key()) {
  return { master, sender: new SrtpSender(master), receiver: new SrtpReceiver(master) };
}

t.test('RFC 3711 3.1: round trip with CSRCs, a header extension and padding, for every suite', (t) => {
  for (const suite of SRTP_SUITES) {
    const { sender, receiver } = pair(generateMasterKey(suite));
    const plain = rtp(7, { csrc: [1, 2, 3], extensionProfile: 0xbede, extensionPayload: Buffer.from('12345678'), paddingSize: 4 }, Buffer.from('voice'));
    const srtp = sender.protectRtp(Buffer.from(plain));
    const headerEnd = 12 + 3 * 4 + 4 + 8;
    t.equal(srtp.length, plain.length + suite.rtpTagLength, `${suite.name}: tag appended`);
    t.equal(hexOf(srtp.subarray(0, headerEnd)), hexOf(plain.subarray(0, headerEnd)), `${suite.name}: header, CSRCs, extension in the clear`);
    t.not(hexOf(srtp.subarray(headerEnd, plain.length)), hexOf(plain.subarray(headerEnd)), `${suite.name}: payload and padding encrypted`);
    t.equal(hexOf(receiver.unprotectRtp(srtp)), hexOf(plain), `${suite.name}: decrypted`);
    const srtcp = sender.protectRtcp(rtcp());
    t.equal(srtcp.length, 28 + 4 + 10, `${suite.name}: SRTCP tag is 80 bits`);
    t.equal(hexOf(receiver.unprotectRtcp(srtcp)), hexOf(rtcp()), `${suite.name}: SRTCP decrypted`);
  }
  t.end();
});

t.test('RFC 3711 3.3: unprotect decrypts in place and returns a view without the tag', (t) => {
  const { sender, receiver } = pair(key('AES_CM_128_HMAC_SHA1_32'));
  const srtp = sender.protectRtp(rtp(1));
  const out = receiver.unprotectRtp(srtp)!;
  t.equal(out.buffer, srtp.buffer);
  t.equal(out.byteOffset, srtp.byteOffset);
  t.equal(out.length, srtp.length - 4);
  t.equal(hexOf(srtp.subarray(0, out.length)), hexOf(rtp(1)));
  t.end();
});

t.test('RFC 3711 3.3.1: a receiver follows the sender across SEQ 65535 -> 0 and takes a late packet from before the wrap', (t) => {
  const { master, sender, receiver } = pair();
  const sent = new Map([65533, 65534, 65535, 0, 1, 2].map((seq) => [seq, sender.protectRtp(rtp(seq))]));
  const recv = (seq: number): string | null => hexOf(receiver.unprotectRtp(Buffer.from(sent.get(seq)!)));
  for (const seq of [65533, 65534, 0, 1]) t.equal(recv(seq), hexOf(rtp(seq)), `seq ${seq}`);
  // s_l is 1 under ROC 1: SEQ 65535 estimates to ROC - 1 (Appendix A), the ROC it was sent under.
  t.equal(recv(65535), hexOf(rtp(65535)), 'late 65535 under ROC 0');
  t.equal(recv(65535), null, 'but not twice');
  t.equal(recv(2), hexOf(rtp(2)), 'then on under ROC 1');
  t.equal(receiver.authFailures, 0);
  t.equal(receiver.replays, 1);
  // A receiver that joins after the wrap assumes ROC 0 (§3.3.1), so the tag cannot verify.
  const late = new SrtpReceiver(master);
  t.equal(late.unprotectRtp(Buffer.from(sent.get(1)!)), null);
  t.equal(late.authFailures, 1);
  t.end();
});

t.test('RFC 3711 Appendix A: a late packet from before the first one is too old, not a wrap', (t) => {
  const { sender, receiver } = pair();
  const early = sender.protectRtp(rtp(65000));
  const first = sender.protectRtp(rtp(10)); // ROC 1 for the sender, which saw 65000 first
  const fresh = pair();
  t.ok(fresh.receiver.unprotectRtp(fresh.sender.protectRtp(rtp(10))));
  t.equal(fresh.receiver.unprotectRtp(fresh.sender.protectRtp(rtp(65000))), null, 'ROC - 1 of ROC 0');
  t.equal(fresh.receiver.replays, 1);
  // And in the other order the receiver sees the wrap the sender made.
  t.ok(receiver.unprotectRtp(early));
  t.ok(receiver.unprotectRtp(first));
  t.end();
});

t.test('RFC 3711 3.3.2: replay list of 64', (t) => {
  const { sender, receiver } = pair();
  const sent = Array.from({ length: 200 }, (_, seq) => sender.protectRtp(rtp(seq)));
  const recv = (seq: number): boolean => receiver.unprotectRtp(Buffer.from(sent[seq]!)) !== null;
  t.test('the same packet twice: the second is dropped', (t) => {
    t.ok(recv(100));
    t.notOk(recv(100));
    t.equal(receiver.replays, 1);
    t.end();
  });
  t.test('out of order within 64 is accepted, once', (t) => {
    t.ok(recv(110));
    t.ok(recv(105));
    t.ok(recv(47), '110 - 47 = 63: the oldest in the window');
    t.notOk(recv(105));
    t.equal(receiver.replays, 2);
    t.end();
  });
  t.test('older than the window is dropped', (t) => {
    t.notOk(recv(46), '110 - 46 = 64');
    t.notOk(recv(0));
    t.equal(receiver.replays, 4);
    t.ok(recv(111));
    t.ok(recv(199), 'a jump ahead');
    t.ok(recv(150), 'within 64 of the new highest, never seen');
    t.notOk(recv(111), 'now too old');
    t.equal(receiver.authFailures, 0);
    t.end();
  });
  t.end();
});

t.test('RFC 3711 3.3 step 5: a tampered payload or tag is dropped and changes nothing', (t) => {
  const { sender, receiver } = pair();
  t.ok(receiver.unprotectRtp(sender.protectRtp(rtp(1))));
  const ahead = sender.protectRtp(rtp(500)); // would move the window past 2 if accepted
  const badPayload = Buffer.from(ahead);
  badPayload[20] = badPayload[20]! ^ 1;
  const copy = Buffer.from(badPayload);
  t.equal(receiver.unprotectRtp(badPayload), null);
  t.equal(hexOf(badPayload), hexOf(copy), 'left as it came');
  const badTag = Buffer.from(ahead);
  badTag[badTag.length - 1] = badTag[badTag.length - 1]! ^ 0x80;
  t.equal(receiver.unprotectRtp(badTag), null);
  const badHeader = Buffer.from(ahead);
  badHeader[1] = badHeader[1]! ^ 0x80; // the marker bit is authenticated too
  t.equal(receiver.unprotectRtp(badHeader), null);
  t.equal(receiver.authFailures, 3);
  t.equal(hexOf(receiver.unprotectRtp(sender.protectRtp(rtp(2)))), hexOf(rtp(2)), 'a genuine next packet still passes');
  t.equal(hexOf(receiver.unprotectRtp(ahead)), hexOf(rtp(500)), 'and so does the genuine one');
  t.equal(receiver.replays, 0);
  t.end();
});

t.test('RFC 3711 3.3: a forged first packet does not set up the source', (t) => {
  const { master, sender, receiver } = pair();
  const forged = new SrtpSender(master).protectRtp(rtp(40000));
  forged[forged.length - 2] = forged[forged.length - 2]! ^ 1;
  t.equal(receiver.unprotectRtp(forged), null);
  t.ok(receiver.unprotectRtp(sender.protectRtp(rtp(5))), 'a genuine first packet sets s_l');
  t.end();
});

t.test('RFC 3711 3.3: too short or not RTP is dropped without counting', (t) => {
  const { sender, receiver } = pair();
  t.equal(receiver.unprotectRtp(Buffer.alloc(21)), null, 'shorter than header + tag');
  const srtp = sender.protectRtp(rtp(1, { extensionProfile: 1, extensionPayload: Buffer.alloc(4) }, Buffer.alloc(0)));
  srtp.writeUInt16BE(50, 14); // extension length now runs past the packet
  t.equal(receiver.unprotectRtp(srtp), null);
  t.equal(receiver.unprotectRtcp(Buffer.alloc(21)), null);
  t.equal(receiver.authFailures + receiver.replays, 0);
  t.end();
});

t.test('RFC 3711 3.3: per-SSRC state, at most 16 sources, the least recently used evicted', (t) => {
  const { sender, receiver } = pair();
  const first = new Map<number, Buffer>();
  for (let ssrc = 1; ssrc <= 16; ssrc++) {
    first.set(ssrc, sender.protectRtp(rtp(100, { ssrc })));
    t.ok(receiver.unprotectRtp(Buffer.from(first.get(ssrc)!)));
  }
  t.ok(receiver.unprotectRtp(sender.protectRtp(rtp(101, { ssrc: 1 }))), 'SSRC 1 used again');
  t.ok(receiver.unprotectRtp(sender.protectRtp(rtp(100, { ssrc: 17 }))), 'a 17th source evicts SSRC 2');
  t.equal(receiver.unprotectRtp(Buffer.from(first.get(1)!)), null, 'SSRC 1 is remembered');
  t.ok(receiver.unprotectRtp(Buffer.from(first.get(2)!)), 'SSRC 2 was forgotten and starts over');
  t.end();
});

t.test('RFC 3711 3.4: SRTCP index replay and tamper', (t) => {
  const { sender, receiver } = pair(key('AES_256_CM_HMAC_SHA1_32'));
  const sent = Array.from({ length: 70 }, () => sender.protectRtcp(rtcp()));
  const recv = (i: number): Buffer | null => receiver.unprotectRtcp(Buffer.from(sent[i]!));
  t.equal(hexOf(recv(0)), hexOf(rtcp()));
  t.equal(recv(0), null, 'replayed');
  t.ok(recv(68));
  t.ok(recv(10), 'out of order within the window');
  t.equal(recv(3), null, 'older than the window');
  t.equal(receiver.replays, 2);
  const tampered = Buffer.from(sent[69]!);
  tampered[10] = tampered[10]! ^ 4;
  t.equal(receiver.unprotectRtcp(tampered), null);
  const flipped = Buffer.from(sent[69]!);
  flipped[28] = flipped[28]! ^ 0x80; // E flag
  t.equal(receiver.unprotectRtcp(flipped), null);
  t.equal(receiver.authFailures, 2);
  t.ok(recv(69), 'the genuine packet after the forgeries');
  t.end();
});

t.test('RFC 3711 3.4: an SRTCP packet sent with E=0 is authenticated and left unencrypted', (t) => {
  const { master, receiver } = pair();
  const plain = rtcp(0x77);
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(9); // E=0, index 9
  const authKey = deriveSessionKeys(master, 'srtcp').authKey;
  const tag = createHmac('sha1', authKey).update(plain).update(trailer).digest().subarray(0, 10);
  t.equal(hexOf(receiver.unprotectRtcp(Buffer.concat([plain, trailer, tag]))), hexOf(plain));
  t.end();
});

t.test('RFC 3711 3.3 and 3.4: random datagrams never throw and never pass, whatever their length or header bits', (t) => {
  const { sender, receiver } = pair();
  let seed = 7;
  const random = (n: number): number => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  let passed = 0;
  for (let i = 0; i < 20_000; i++) {
    const datagram = Buffer.from(Array.from({ length: random(320) }, () => random(256)));
    // Half of them look like RTP or RTCP version 2, some with CSRC counts and extensions that overrun.
    if (datagram.length > 0 && i % 2 === 0) datagram[0] = 0x80 | (datagram[0]! & 0x3f);
    if ((i % 4 === 0 ? receiver.unprotectRtcp(datagram) : receiver.unprotectRtp(datagram)) !== null) passed++;
  }
  t.equal(passed, 0, 'no forgery passed');
  const genuine = sender.protectRtp(rtp(1));
  t.same(receiver.unprotectRtp(genuine)?.subarray(12), payload, 'and the context still takes genuine packets');
  t.end();
});
