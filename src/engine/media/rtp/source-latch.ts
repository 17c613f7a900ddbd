/**
 * @module Which transport address an RTP session takes media from: symmetric latching (RFC 4961)
 * held to the strict-source rule of docs/SECURITY.md "Media sources".
 */
import { BlockList, isIP } from 'node:net';
import { LatchCandidate } from './latch-candidate.js';
import type { MediaAddress } from './rtp-session-types.js';

/**
 * Why a datagram was refused, as `vgw_rtp_packets_refused_total{reason}` counts it:
 * - `source`: RTP from an address the strict-source rule never learns from;
 * - `probation`: RTP from an address that may be learned, before its run in sequence is complete;
 * - `ssrc-collision`: the latched SSRC from another host while the latched source is active, or
 *   from a new port of its host with sequence numbers that do not follow it (RFC 3550 §8.2);
 * - `malformed`: RTP from another address whose header overruns the packet;
 * - `rtcp-source`: RTCP from a host the session does not take media from;
 * - `invalid`: neither RTP version 2 nor RTCP;
 * - `unauthenticated`: SRTP or SRTCP that fails its tag or is a replay (RFC 3711 §3.3).
 */
export type RtpRefusalReason = 'source' | 'probation' | 'ssrc-collision' | 'malformed' | 'rtcp-source' | 'invalid' | 'unauthenticated';

/** Where refused datagrams are counted (the gateway's Prometheus counter). */
export interface RtpRefusalCounter {
  refused(reason: RtpRefusalReason): void;
}

/** RFC 3550 A.1 MAX_DROPOUT: how far ahead a sequence number may be and still follow the stream. */
const MAX_DROPOUT = 3000;

/** What {@link SourceLatch.admit} decided: take the packet, take it and follow its source, or refuse it. */
export type SourceVerdict = 'taken' | 'learned' | RtpRefusalReason;

export interface SourceLatchOptions {
  /** `rtp.strict_source`: learn new sources only from signalled or configured hosts. */
  strict: boolean;
  /** The latched SSRC from another host is taken once the latched source was silent this long. */
  relatchIdleMs: number;
  /** CIDRs (or addresses) a carrier sends media from; sources there may be learned. */
  mediaNetworks?: readonly string[];
}

/**
 * The latch of one session. Until a source is latched (at the start, and after an offer/answer
 * names a new address), the session is learning: a packet from the host the SDP named latches at
 * once, any other source after RFC 3550 A.1 probation ({@link LatchCandidate}), so a far end
 * behind a NAT whose SDP names a private address is still heard. Before any SDP (our offer out,
 * no answer yet) the first packet latches, and the answer discards that latch. Once latched, the latched
 * transport address is the far end, whatever its SSRC. Another address is learned only after
 * probation, and with `strict` only from a host that is trusted: the latched host (a NAT
 * rebinding changed the port), the host the SDP named, or the carrier's media networks. Without
 * `strict` any host may be learned, as symmetric RTP without SRTP allows.
 */
export class SourceLatch {
  readonly #options: SourceLatchOptions;
  readonly #networks: BlockList | null;
  #sdp: MediaAddress | null = null;
  #latched: MediaAddress | null = null;
  #ssrc = 0;
  #seq = 0;
  readonly #candidate = new LatchCandidate();

  constructor(options: SourceLatchOptions) {
    this.#options = options;
    this.#networks = networksOf(options.mediaNetworks ?? []);
  }

  get latched(): MediaAddress | null {
    return this.#latched;
  }

  /**
   * The far end an offer/answer named. A new address starts learning afresh (true); the same
   * address again (a session refresh) keeps the latch (false).
   */
  signalled(rtp: MediaAddress): boolean {
    const previous = this.#sdp;
    this.#sdp = rtp;
    if (previous !== null && previous.address === rtp.address && previous.port === rtp.port) return false;
    this.#latched = null;
    this.#candidate.reset();
    return true;
  }

  /**
   * Decides one RTP packet (version 2, at least a fixed header, authenticated under SRTP).
   * `wellFormed`: its header fits the packet; `silentForMs`: since the latched source was last heard.
   */
  admit(address: string, port: number, ssrc: number, seq: number, wellFormed: boolean, silentForMs: number): SourceVerdict {
    const latched = this.#latched;
    if (latched !== null && port === latched.port && address === latched.address) {
      // The far end may change its SSRC (RFC 3550 §8.2); the collision check compares with its current one.
      this.noteTaken(ssrc, seq);
      return 'taken';
    }
    // Only a well-formed header may latch; the latched source's own malformed packets go on to the owner, which counts them.
    if (!wellFormed) return 'malformed';
    if (latched === null) {
      // Before any offer/answer there is nothing to trust or distrust: the first packet latches,
      // and the answer, when it comes, starts learning afresh (a packet racing it loses nothing).
      const atOnce = !this.#options.strict || this.#sdp === null || this.#isSdpHost(address);
      if (!atOnce && !this.#candidate.observe(address, port, ssrc, seq)) return 'probation';
      return this.#learn(address, port, ssrc, seq);
    }
    const sameHost = address === latched.address;
    if (this.#options.strict && !sameHost && !this.#isSdpHost(address) && !this.#inMediaNetworks(address)) return 'source';
    if (ssrc === this.#ssrc) {
      // RFC 3550 §8.2: the latched SSRC from elsewhere is a loop or a collision, unless its host
      // only changed port (a NAT rebinding: it must continue the stream's numbering) or the
      // latched source went silent (the far end moved).
      const ahead = (seq - this.#seq) & 0xffff;
      const follows = ahead > 0 && ahead < MAX_DROPOUT;
      if (sameHost ? !follows : silentForMs < this.#options.relatchIdleMs) return 'ssrc-collision';
    }
    if (!this.#candidate.observe(address, port, ssrc, seq)) return 'probation';
    return this.#learn(address, port, ssrc, seq);
  }

  /** A packet of the latched source (also one the media I/O relayed). */
  noteTaken(ssrc: number, seq: number): void {
    this.#ssrc = ssrc;
    this.#seq = seq;
  }

  /** Whether RTCP from `address` is taken: with `strict`, only from hosts media is taken or learned from. */
  acceptsRtcpFrom(address: string): boolean {
    if (!this.#options.strict) return true;
    return address === this.#latched?.address || this.#isSdpHost(address) || this.#inMediaNetworks(address);
  }

  #learn(address: string, port: number, ssrc: number, seq: number): 'learned' {
    this.#candidate.reset();
    this.#latched = { address, port };
    this.noteTaken(ssrc, seq);
    return 'learned';
  }

  #isSdpHost(address: string): boolean {
    return this.#sdp !== null && this.#sdp.address === address;
  }

  #inMediaNetworks(address: string): boolean {
    const family = isIP(address);
    return this.#networks !== null && family !== 0 && this.#networks.check(address, family === 6 ? 'ipv6' : 'ipv4');
  }
}

/** Addresses and CIDRs (validated with the carriers file) as a BlockList, or null for none. */
function networksOf(networks: readonly string[]): BlockList | null {
  if (networks.length === 0) return null;
  const list = new BlockList();
  for (const network of networks) {
    const [address = '', prefix] = network.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, family);
    else list.addSubnet(address, Number(prefix), family);
  }
  return list;
}
