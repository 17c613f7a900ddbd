import t from 'tap';
import {
  isRtcpPacket, parseRtpHeader, rtpPayloadOffset, rtpPayloadType, rtpSequenceNumber, rtpSsrc, rtpTimestamp,
  serializeRtp, setRtpMarker, setRtpPayloadType, setRtpSeqTsSsrc, type RtpHeader,
} from './packet.js';

// A packet as pion/rtp's tests build it: V=2, X=1, CC=0, M=1, PT=96, seq 27023, ts 3653407706,
// SSRC 476325762, one-word extension with profile 0x0001, then a 5-byte payload.
const withExtension = Buffer.from([
  0x90, 0xe0, 0x69, 0x8f, 0xd9, 0xc2, 0x93, 0xda, 0x1c, 0x64, 0x27, 0x82,
  0x00, 0x01, 0x00, 0x01, 0xff, 0xff, 0xff, 0xff, 0x98, 0x36, 0xbe, 0x88, 0x9e,
]);

const parsed = (buf: Buffer): RtpHeader => {
  const h = parseRtpHeader(buf);
  if ('error' in h) throw new Error(h.error);
  return h;
};

t.test('RFC 3550 5.1: fixed header fields are read from their bit positions', (t) => {
  const h = parsed(withExtension);
  t.equal(h.version, 2);
  t.equal(h.marker, true);
  t.equal(h.payloadType, 96);
  t.equal(h.sequenceNumber, 27023);
  t.equal(h.timestamp, 3653407706);
  t.equal(h.ssrc, 476325762);
  t.same(h.csrc, []);
  t.end();
});

t.test('RFC 3550 5.3.1: the extension length counts 32-bit words after its header', (t) => {
  const h = parsed(withExtension);
  t.equal(h.extension, true);
  t.equal(h.extensionProfile, 1);
  t.same([...h.extensionPayload!], [0xff, 0xff, 0xff, 0xff]);
  t.equal(h.payloadOffset, 20);
  t.equal(h.payloadLength, 5);
  t.equal(rtpPayloadOffset(withExtension), 20);
  t.end();
});

t.test('RFC 3550 5.1: CC counts the CSRC identifiers that follow the SSRC', (t) => {
  const buf = serializeRtp({ payloadType: 0, sequenceNumber: 1, timestamp: 160, ssrc: 7, csrc: [0x11111111, 0x22222222] }, Buffer.from([1, 2, 3]));
  const h = parsed(buf);
  t.same(h.csrc, [0x11111111, 0x22222222]);
  t.equal(h.payloadOffset, 20);
  t.same([...buf.subarray(h.payloadOffset)], [1, 2, 3]);
  t.end();
});

t.test('RFC 3550 5.1: the last padding octet counts the padding, itself included', (t) => {
  const buf = serializeRtp({ payloadType: 8, sequenceNumber: 9, timestamp: 0, ssrc: 1, paddingSize: 4 }, Buffer.from([0xd5, 0xd5]));
  const h = parsed(buf);
  t.equal(h.padding, true);
  t.equal(h.paddingSize, 4);
  t.equal(h.payloadLength, 2);
  const zeroPad = Buffer.from(buf);
  zeroPad[zeroPad.length - 1] = 0;
  t.same(parseRtpHeader(zeroPad), { error: 'bad-padding' });
  const overlong = Buffer.from(buf);
  overlong[overlong.length - 1] = 200;
  t.same(parseRtpHeader(overlong), { error: 'bad-padding' });
  t.equal(rtpPayloadOffset(overlong), -1);
  t.end();
});

t.test('RFC 3550 5.1: malformed headers are values, not exceptions', (t) => {
  t.same(parseRtpHeader(Buffer.alloc(11, 0x80)), { error: 'too-short' });
  const v1 = Buffer.from(withExtension);
  v1[0] = 0x50;
  t.same(parseRtpHeader(v1), { error: 'bad-version' });
  t.equal(rtpPayloadOffset(v1), -1);
  t.same(parseRtpHeader(withExtension.subarray(0, 18)), { error: 'bad-extension' });
  const cc15 = Buffer.alloc(20, 0);
  cc15[0] = 0x8f;
  t.same(parseRtpHeader(cc15), { error: 'too-short' });
  t.end();
});

t.test('serializeRtp and parseRtpHeader round-trip every field', (t) => {
  const ext = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]);
  const buf = serializeRtp(
    { marker: true, payloadType: 101, sequenceNumber: 65535, timestamp: 0xffffffff, ssrc: 0xdeadbeef, csrc: [5], extensionProfile: 0xbede, extensionPayload: ext, paddingSize: 3 },
    Buffer.from('abc'),
  );
  const h = parsed(buf);
  t.match(h, { marker: true, payloadType: 101, sequenceNumber: 65535, timestamp: 0xffffffff, ssrc: 0xdeadbeef, csrc: [5], extensionProfile: 0xbede, paddingSize: 3, payloadLength: 3 });
  t.same([...h.extensionPayload!], [...ext]);
  t.throws(() => serializeRtp({ payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0, extensionPayload: Buffer.alloc(3) }, Buffer.alloc(0)));
  t.end();
});

t.test('in-place setters change only their fields', (t) => {
  const buf = Buffer.from(withExtension);
  setRtpPayloadType(buf, 8);
  t.equal(rtpPayloadType(buf), 8);
  t.equal(parsed(buf).marker, true, 'marker kept');
  setRtpMarker(buf, false);
  t.equal(parsed(buf).marker, false);
  t.equal(rtpPayloadType(buf), 8, 'PT kept');
  setRtpSeqTsSsrc(buf, 0x1234, 0x89abcdef, 0x01020304);
  t.equal(rtpSequenceNumber(buf), 0x1234);
  t.equal(rtpTimestamp(buf), 0x89abcdef);
  t.equal(rtpSsrc(buf), 0x01020304);
  t.same(buf.subarray(12), withExtension.subarray(12), 'extension and payload untouched');
  t.end();
});

t.test('RFC 5761 4: RTCP is told apart from RTP by packet types 192-223', (t) => {
  t.equal(isRtcpPacket(Buffer.from([0x80, 200])), true, 'SR');
  t.equal(isRtcpPacket(Buffer.from([0x81, 201])), true, 'RR');
  t.equal(isRtcpPacket(Buffer.from([0x80, 0x00])), false, 'PCMU');
  t.equal(isRtcpPacket(Buffer.from([0x80, 0xe5])), false, 'marker + PT 101');
  t.end();
});
