/** @module The sending SRTP/SRTCP context of one master key: protects RTP (RFC 3711 §3.1) and RTCP (§3.4) packets. */
import { rtpPayloadOffset, rtpSequenceNumber, rtpSsrc } from '../rtp/packet.js';
import { estimateIndex, SsrcTable } from './replay-window.js';
import { SessionContext } from './session-context.js';
import type { SrtpMasterKey } from './srtp-suite.js';

/*
 * SRTP packet (RFC 3711 §3.1), as protectRtp() writes it:
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+<+
 * |V=2|P|X|  CC   |M|     PT      |       sequence number         | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |                           timestamp                           | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |           synchronization source (SSRC) identifier            | |
 * +=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+=+ |
 * |            contributing source (CSRC) identifiers             | |
 * |                               ....                            | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |                   RTP extension (OPTIONAL)                    | |
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * | |                          payload  ...                       | |
 * | |                               +-------------------------------+ |
 * | |                               | RTP padding   | RTP pad count | |
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+<+
 * | :                 authentication tag (10 or 4 octets)         : |
 * | +- - - - - - - - - - - - - - - - - - - - - - - - - - - - - - - -+ |
 * |                                                                  |
 * +- Encrypted Portion                       Authenticated Portion ---+
 *
 * The tag is HMAC-SHA1(k_a, Authenticated Portion || ROC), truncated (§4.2). No MKI.
 *
 * SRTCP packet (§3.4), as protectRtcp() writes it:
 *
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+<+
 * |V=2|P|    RC   |   PT=SR or RR   |             length          | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |                         SSRC of sender                        | |
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * | ~                sender info, report blocks, and               ~ |
 * | ~          the rest of the compound packet (encrypted)         ~ |
 * +>+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+ |
 * |E|                         SRTCP index                         | |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+<+
 * ~                  authentication tag (10 octets)               ~
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */

/** Octets of the RTCP header left in the clear: the first packet's header and SSRC. */
export const RTCP_CLEAR_OCTETS = 8;
/** The E flag and the 31-bit SRTCP index. */
export const SRTCP_INDEX_OCTETS = 4;
/** The E flag of the SRTCP index word: the packet is encrypted. */
export const E_FLAG = 0x80000000;
export const INDEX_MASK = 0x7fffffff;
/** 2^16: the packet index is ROC * SEQ_MODULUS + SEQ. */
export const SEQ_MODULUS = 0x10000;
/** Sources per context: a leg sends one or two (a re-INVITE may change it), and hears a few. */
export const MAX_SSRCS = 16;

export class SrtpSender {
  readonly #srtp: SessionContext;
  readonly #srtcp: SessionContext;
  readonly #rtpTagLength: number;
  readonly #rtcpTagLength: number;
  /** Per SSRC the highest packet index sent: 2^16 * ROC + SEQ (RFC 3711 §3.2.1). */
  readonly #sent = new SsrcTable<{ highest: number }>(MAX_SSRCS);
  /** The SRTCP index of the last packet sent (0 before the first). */
  #rtcpIndex = 0;

  constructor(master: SrtpMasterKey) {
    this.#srtp = new SessionContext(master, 'srtp');
    this.#srtcp = new SessionContext(master, 'srtcp');
    this.#rtpTagLength = master.suite.rtpTagLength;
    this.#rtcpTagLength = master.suite.rtcpTagLength;
  }

  /** RFC 3711 §3.1: encrypts the payload (everything after the header, CSRCs and header extension; padding included) and appends the auth tag. Returns a NEW buffer; the input may be clobbered. */
  protectRtp(packet: Buffer): Buffer {
    const offset = rtpPayloadOffset(packet);
    if (offset < 0) throw new RangeError('protectRtp: not a well-formed RTP packet');
    const ssrc = rtpSsrc(packet);
    const index = this.#nextIndex(ssrc, rtpSequenceNumber(packet));
    const length = packet.length;
    const out = Buffer.allocUnsafe(length + this.#rtpTagLength);
    packet.copy(out, 0, 0, offset);
    this.#srtp.cipher.xor(ssrc, index, packet, out, offset, length);
    // M = Authenticated Portion || ROC (§4.2): the ROC goes where the tag will, then the tag over it.
    // Both tag lengths are at least the ROC's 4 octets.
    out.writeUInt32BE(Math.floor(index / SEQ_MODULUS), length);
    this.#srtp.mac(out.subarray(0, length + 4)).copy(out, length, 0, this.#rtpTagLength);
    return out;
  }

  /** RFC 3711 §3.4: encrypts after the first 8 octets, appends E-flag|SRTCP index (E=1) and the 80-bit tag. Returns a new buffer. */
  protectRtcp(packet: Buffer): Buffer {
    const length = packet.length;
    if (length < RTCP_CLEAR_OCTETS) throw new RangeError('protectRtcp: shorter than an RTCP header');
    // §3.4 has the index zero before the first packet and incremented per packet; libsrtp's
    // reading, whose reference packet carries index 1, is that the first packet sends 1. Wraps mod 2^31.
    const index = (this.#rtcpIndex = (this.#rtcpIndex + 1) & INDEX_MASK);
    const ssrc = packet.readUInt32BE(4);
    const trailer = length + SRTCP_INDEX_OCTETS;
    const out = Buffer.allocUnsafe(trailer + this.#rtcpTagLength);
    packet.copy(out, 0, 0, RTCP_CLEAR_OCTETS);
    this.#srtcp.cipher.xor(ssrc, index, packet, out, RTCP_CLEAR_OCTETS, length);
    out.writeUInt32BE((E_FLAG | index) >>> 0, length);
    this.#srtcp.mac(out.subarray(0, trailer)).copy(out, trailer, 0, this.#rtcpTagLength);
    return out;
  }

  /**
   * The packet index of SEQ from `ssrc`. The sender estimates it the way the receiver will
   * (Appendix A) rather than counting wraps itself, so a resent or reordered packet keeps the ROC
   * it was first sent under and both ends agree on every index: 65535 then 0 bumps the ROC.
   * A SEQ sent before gets the same index again (libsrtp's allow_repeat_tx): fine for a resend,
   * but different payload under a reused SEQ would reuse keystream (§9.1), so callers must not.
   */
  #nextIndex(ssrc: number, seq: number): number {
    let state = this.#sent.get(ssrc);
    let index = seq;
    if (state === undefined) {
      state = { highest: seq };
    } else {
      const estimated = estimateIndex(state.highest, seq);
      // Negative: behind the first packet, sent at ROC 0, so ROC 0 too, and no new highest.
      if (estimated >= 0) {
        index = estimated;
        if (index > state.highest) state.highest = index;
      }
    }
    this.#sent.use(ssrc, state);
    return index;
  }
}
