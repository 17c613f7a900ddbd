/** @module The receiving SRTP/SRTCP context of one master key: authenticates, replay-checks and decrypts RTP (RFC 3711 §3.3) and RTCP (§3.4) packets. */
import { timingSafeEqual } from 'node:crypto';
import { RTP_HEADER_SIZE, rtpSequenceNumber, rtpSsrc } from '../rtp/packet.js';
import { estimateIndex, ReplayWindow, SsrcTable } from './replay-window.js';
import { SessionContext } from './session-context.js';
import { E_FLAG, INDEX_MASK, MAX_SSRCS, RTCP_CLEAR_OCTETS, SEQ_MODULUS, SRTCP_INDEX_OCTETS } from './srtp-sender.js';
import type { SrtpMasterKey } from './srtp-suite.js';

/*
 * Where the receiver cuts a packet (full diagrams in srtp-sender.ts); `end` and `trailer` are what
 * the unprotect methods return the length of:
 *
 *   SRTP   | header, CSRCs, extension | payload (+ padding), encrypted | auth tag (10 or 4) |
 *          0                     offset                              end            length
 *
 *   SRTCP  | header + SSRC | rest of compound, encrypted if E | E|SRTCP index | auth tag (10) |
 *          0               8                           trailer        tagStart         length
 *
 *    0                   1                   2                   3
 *    0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *   |E|                         SRTCP index                         |  at trailer
 *   +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 */


/**
 * Where the payload of the RTP packet in packet[0, end) starts (after CSRCs and the header
 * extension), or -1 when the header does not fit. Not rtpPayloadOffset(): that one also checks
 * the padding count in the last octet, which is still ciphertext here.
 */
function rtpHeaderEnd(packet: Buffer, end: number): number {
  const b0 = packet[0]!;
  if (b0 >> 6 !== 2) return -1;
  let offset = RTP_HEADER_SIZE + (b0 & 0x0f) * 4;
  if (b0 & 0x10) {
    if (offset + 4 > end) return -1;
    offset += 4 + packet.readUInt16BE(offset + 2) * 4;
  }
  return offset <= end ? offset : -1;
}

export class SrtpReceiver {
  readonly #srtp: SessionContext;
  readonly #srtcp: SessionContext;
  readonly #rtpTagLength: number;
  readonly #rtcpTagLength: number;
  /** Per SSRC: highest index (2^16 * ROC + s_l) and replay list of SRTP. */
  readonly #rtp = new SsrcTable<ReplayWindow>(MAX_SSRCS);
  /** Per SSRC of the RTCP sender: highest SRTCP index and its replay list. */
  readonly #rtcp = new SsrcTable<ReplayWindow>(MAX_SSRCS);
  /** The ROC that goes after the authenticated portion into the MAC (§4.2). */
  readonly #roc = Buffer.alloc(4);
  #authFailures = 0;
  #replays = 0;

  constructor(master: SrtpMasterKey) {
    this.#srtp = new SessionContext(master, 'srtp');
    this.#srtcp = new SessionContext(master, 'srtcp');
    this.#rtpTagLength = master.suite.rtpTagLength;
    this.#rtcpTagLength = master.suite.rtcpTagLength;
  }

  /** Packets dropped because the tag did not verify. */
  get authFailures(): number {
    return this.#authFailures;
  }

  /** Packets dropped as replayed or older than the replay window. */
  get replays(): number {
    return this.#replays;
  }

  /** Verifies tag and replay, decrypts IN PLACE, returns packet.subarray(0, length - tag), or null (too short, bad tag, replayed or too old). Context state (ROC, highest seq, replay window) is only updated for authenticated packets. */
  unprotectRtp(packet: Buffer): Buffer | null {
    const end = packet.length - this.#rtpTagLength;
    if (end < RTP_HEADER_SIZE) return null;
    const offset = rtpHeaderEnd(packet, end);
    if (offset < 0) return null;
    const ssrc = rtpSsrc(packet);
    const seq = rtpSequenceNumber(packet);
    const window = this.#rtp.get(ssrc);
    // §3.3.1: the first packet of a source sets s_l with ROC 0; later ones are estimated from it.
    const index = window === undefined ? seq : estimateIndex(window.highest, seq);
    if (window !== undefined && !window.check(index)) {
      this.#replays++;
      return null;
    }
    this.#roc.writeUInt32BE(Math.floor(index / SEQ_MODULUS), 0);
    const tag = this.#srtp.mac(packet.subarray(0, end), this.#roc);
    if (!timingSafeEqual(tag.subarray(0, this.#rtpTagLength), packet.subarray(end))) {
      this.#authFailures++;
      return null;
    }
    this.#srtp.cipher.xor(ssrc, index, packet, packet, offset, end);
    // §3.3.1 step 6: only now does the packet move ROC, s_l and the replay list.
    const state = window ?? new ReplayWindow();
    state.accept(index);
    this.#rtp.use(ssrc, state);
    return packet.subarray(0, end);
  }

  /** RFC 3711 §3.4: the same for SRTCP; the index is explicit in the packet, E=0 means it was sent unencrypted. */
  unprotectRtcp(packet: Buffer): Buffer | null {
    const tagStart = packet.length - this.#rtcpTagLength;
    const trailer = tagStart - SRTCP_INDEX_OCTETS;
    if (trailer < RTCP_CLEAR_OCTETS || packet[0]! >> 6 !== 2) return null;
    const word = packet.readUInt32BE(trailer);
    const index = word & INDEX_MASK;
    const ssrc = packet.readUInt32BE(4);
    const window = this.#rtcp.get(ssrc);
    if (window !== undefined && !window.check(index)) {
      this.#replays++;
      return null;
    }
    // The authenticated portion runs through E and the index.
    const tag = this.#srtcp.mac(packet.subarray(0, tagStart));
    if (!timingSafeEqual(tag.subarray(0, this.#rtcpTagLength), packet.subarray(tagStart))) {
      this.#authFailures++;
      return null;
    }
    if (word >= E_FLAG) this.#srtcp.cipher.xor(ssrc, index, packet, packet, RTCP_CLEAR_OCTETS, trailer);
    const state = window ?? new ReplayWindow();
    state.accept(index);
    this.#rtcp.use(ssrc, state);
    return packet.subarray(0, trailer);
  }
}
