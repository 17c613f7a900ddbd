import { createHmac } from 'node:crypto';
import t, { type Test } from 'tap';
import { serializeRtp } from '../rtp/packet.js';
import { deriveSessionKeys } from './key-derivation.js';
import { SrtpReceiver } from './srtp-receiver.js';
import { SrtpSender } from './srtp-sender.js';
import { srtpSuite, type SrtpMasterKey, type SrtpSuiteName } from './srtp-suite.js';

const hex = (s: string): Buffer => Buffer.from(s.replace(/\s+/g, ''), 'hex');
const master = (name: SrtpSuiteName, keyAndSalt: Buffer): SrtpMasterKey => {
  const suite = srtpSuite(name)!;
  return { suite, key: keyAndSalt.subarray(0, suite.keyLength), salt: keyAndSalt.subarray(suite.keyLength, suite.keyLength + 14) };
};

/*
 * Reference packets of libsrtp's test driver (cisco/libsrtp test/srtp_driver.c: srtp_validate()
 * and srtp_validate_aes_256()), SSRC 0xcafebabe, SEQ 0x1234, ROC 0, SRTCP index 1. test_key is the
 * RFC 3711 B.3 master key and salt followed by more octets.
 */
const TEST_KEY = hex('e1f97a0d3e018be0d64fa32c06de4139 0ec675ad498afeebb6960b3aabe6 c173c317f2dabe357793b6960b3aabe6');
const AES_256_TEST_KEY = hex('f0f04914b513f2763a1b1fa130f10e2998f6f6e43e4309d1e622a0e332b9f1b6 3b04803de51ee7c96423ab5b78d2');
const RTP_PLAINTEXT = hex('800f1234decafbadcafebabe abababababababababababababababab');
const RTCP_PLAINTEXT = hex('81c8000bcafebabe abababababababababababababababab');
const SRTP_CIPHERTEXT = hex('800f1234decafbadcafebabe 4e55dc4ce79978d88ca4d215949d2402 b78d6acc99ea179b8dbb');
const SRTCP_CIPHERTEXT = hex('81c8000bcafebabe 7128035be487b9bdbef89041f977a5a8 80000001 993e08cd54d6c1230798');
const AES_256_SRTP_CIPHERTEXT = hex('800f1234decafbadcafebabe f1d9de17ff251ff1aa007774b0b4b40d a08d9d9a5b3a55d8873b');

function knownAnswer(t: Test, m: SrtpMasterKey, rtp: Buffer, srtp: Buffer, rtcp?: Buffer, srtcp?: Buffer): void {
  const sender = new SrtpSender(m);
  const receiver = new SrtpReceiver(m);
  t.equal(sender.protectRtp(Buffer.from(rtp)).toString('hex'), srtp.toString('hex'), 'protectRtp');
  t.equal(receiver.unprotectRtp(Buffer.from(srtp))?.toString('hex'), rtp.toString('hex'), 'unprotectRtp');
  if (rtcp && srtcp) {
    t.equal(sender.protectRtcp(Buffer.from(rtcp)).toString('hex'), srtcp.toString('hex'), 'protectRtcp');
    t.equal(receiver.unprotectRtcp(Buffer.from(srtcp))?.toString('hex'), rtcp.toString('hex'), 'unprotectRtcp');
  }
}

t.test('RFC 3711 3.1, 3.4: libsrtp srtp_validate() reference SRTP and SRTCP packets, AES_CM_128_HMAC_SHA1_80', (t) => {
  knownAnswer(t, master('AES_CM_128_HMAC_SHA1_80', TEST_KEY), RTP_PLAINTEXT, SRTP_CIPHERTEXT, RTCP_PLAINTEXT, SRTCP_CIPHERTEXT);
  t.end();
});

t.test('RFC 3711 4.2: AES_CM_128_HMAC_SHA1_32 sends the leftmost 32 bits of the same tag', (t) => {
  // Derived from the libsrtp packet above, not a separate reference: the cipher is the same and
  // the tag is truncated (§4.2); SRTCP keeps its 80 bits (RFC 4568 6.2.1).
  knownAnswer(t, master('AES_CM_128_HMAC_SHA1_32', TEST_KEY), RTP_PLAINTEXT, SRTP_CIPHERTEXT.subarray(0, 32), RTCP_PLAINTEXT, SRTCP_CIPHERTEXT);
  t.end();
});

t.test('RFC 6188 4: libsrtp srtp_validate_aes_256() reference SRTP packet, AES_256_CM_HMAC_SHA1_80', (t) => {
  knownAnswer(t, master('AES_256_CM_HMAC_SHA1_80', AES_256_TEST_KEY), RTP_PLAINTEXT, AES_256_SRTP_CIPHERTEXT);
  t.end();
});

t.test('RFC 6188 4: AES_256_CM_HMAC_SHA1_80 SRTP and SRTCP packets of sipwise/rtpengine t/aes-crypt.c', (t) => {
  // rtpengine's vectors key AES-256 with the first 32 octets of libsrtp's test_key, salt the next 14.
  const srtp = hex('800f1234decafbadcafebabe 0098219f7ebdba1c3d22f4936f1eac99 06f6b227c84961a7b428');
  const srtcp = hex('81c8000bcafebabe 0a865d339e312693592387d45b99a557 80000001 84f3b4f2b595615af9b5');
  knownAnswer(t, master('AES_256_CM_HMAC_SHA1_80', TEST_KEY), RTP_PLAINTEXT, srtp, RTCP_PLAINTEXT, srtcp);
  t.end();
});

t.test('RFC 3711 3.1: a header extension is authenticated as sent and not encrypted (libsrtp RFC 6904 reference packet)', (t) => {
  // libsrtp srtp_validate_encrypted_extensions_headers(): RFC 6904 encrypted some extension
  // elements, but plain SRTP sees the extension as it is on the wire and protects the payload and
  // tag exactly so; the payload ciphertext is the one of the packet without extension.
  const header = hex('900f1234decafbadcafebabe bede0006 17588a9270f4e15e1c220000c8309546a994f0bc54789700');
  const rtp = Buffer.concat([header, Buffer.alloc(16, 0xab)]);
  const srtp = Buffer.concat([header, hex('4e55dc4ce79978d88ca4d215949d2402 5a46b3ca35c535a891c7')]);
  knownAnswer(t, master('AES_CM_128_HMAC_SHA1_80', TEST_KEY), rtp, srtp);
  t.end();
});

t.test('RFC 3711 3.3.1: the sender bumps the ROC when SEQ wraps 65535 -> 0 and authenticates it', (t) => {
  const m = master('AES_CM_128_HMAC_SHA1_80', TEST_KEY);
  const sender = new SrtpSender(m);
  const keys = deriveSessionKeys(m, 'srtp');
  const packet = (seq: number): Buffer => serializeRtp({ payloadType: 0, sequenceNumber: seq, timestamp: seq * 160, ssrc: 0x1234 }, Buffer.alloc(160, 0x55));
  const rocOf = (seq: number, srtp: Buffer): number => {
    // The tag is HMAC(k_a, authenticated portion || ROC): find the ROC that reproduces it.
    const body = srtp.subarray(0, srtp.length - 10);
    for (let roc = 0; roc < 4; roc++) {
      const trailer = Buffer.alloc(4);
      trailer.writeUInt32BE(roc);
      const tag = createHmac('sha1', keys.authKey).update(body).update(trailer).digest().subarray(0, 10);
      if (tag.equals(srtp.subarray(-10))) return roc;
    }
    throw new Error(`no ROC for seq ${seq}`);
  };
  const rocs = [65534, 65535, 0, 1, 65535, 2].map((seq) => rocOf(seq, sender.protectRtp(packet(seq))));
  t.same(rocs, [0, 0, 1, 1, 0, 1], 'a late resend of 65535 keeps ROC 0');
  t.end();
});

t.test('RFC 3711 3.4: SRTCP sets E and counts the index per packet', (t) => {
  const sender = new SrtpSender(master('AES_CM_128_HMAC_SHA1_80', TEST_KEY));
  const indices = [1, 2, 3].map(() => {
    const srtcp = sender.protectRtcp(Buffer.from(RTCP_PLAINTEXT));
    t.equal(srtcp.length, RTCP_PLAINTEXT.length + 4 + 10);
    t.equal(srtcp.subarray(0, 8).toString('hex'), RTCP_PLAINTEXT.subarray(0, 8).toString('hex'), 'header and SSRC in the clear');
    const word = srtcp.readUInt32BE(RTCP_PLAINTEXT.length);
    t.ok(word & 0x80000000, 'E flag');
    return word & 0x7fffffff;
  });
  t.same(indices, [1, 2, 3]);
  t.end();
});

t.test('RFC 3711 3.1: protectRtp returns a new buffer and refuses what is not RTP', (t) => {
  const sender = new SrtpSender(master('AES_CM_128_HMAC_SHA1_80', TEST_KEY));
  const rtp = Buffer.from(RTP_PLAINTEXT);
  const srtp = sender.protectRtp(rtp);
  t.equal(rtp.toString('hex'), RTP_PLAINTEXT.toString('hex'), 'input untouched here');
  t.equal(srtp.length, rtp.length + 10);
  srtp.fill(0);
  t.equal(rtp.toString('hex'), RTP_PLAINTEXT.toString('hex'), 'output shares no octets with input');
  t.throws(() => sender.protectRtp(Buffer.alloc(8)), RangeError);
  t.throws(() => sender.protectRtp(hex('400f1234decafbadcafebabe')), RangeError, 'version 1');
  t.throws(() => sender.protectRtcp(Buffer.alloc(4)), RangeError);
  t.end();
});
