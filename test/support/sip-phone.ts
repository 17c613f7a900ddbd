/**
 * @module A test telephone on loopback built from the product's own SIP user agent and RTP
 * session: it plays the carrier's part (calls the gateway, or answers the gateway's calls), sends
 * a µ-law tone every 20 ms and keeps every µ-law payload it receives.
 */
import { systemClock } from '../../src/common/clock.js';
import {
  CODECS, createAnswer, createOffer, isPortsExhausted, isSdpRejection, processAnswer, RtpSession, rtpPayloadOffset,
  RTP_HEADER_SIZE, writeRtpHeader, type LocalCapabilities,
} from '../../src/engine/media/index.js';
import type { InboundCall, OutboundCall, SessionDialog, SipUserAgentOptions } from '../../src/engine/sip/index.js';
import { mulawTone } from './audio-probe.js';
import { testPortPool } from './rtp-peer.js';
import { startGatewayUa } from './sip-sipp.js';
import { withDeadline } from './deadline.js';

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export class SipPhone {
  readonly rtp: RtpSession;
  readonly received: Buffer[] = [];
  readonly #caps: LocalCapabilities;
  #timer: NodeJS.Timeout | null = null;
  #tone = mulawTone(1000, 1000);
  #seq = 0;

  constructor(rtp: RtpSession) {
    this.rtp = rtp;
    this.#caps = { address: '127.0.0.1', port: rtp.localPort, codecs: [CODECS.PCMU, CODECS.TELEPHONE_EVENT], sessionId: 7, sessionVersion: 1 };
    rtp.take({
      onRtp: (packet) => {
        const offset = rtpPayloadOffset(packet);
        if (offset > 0 && (packet[1]! & 0x7f) === 0) this.received.push(Buffer.from(packet.subarray(offset)));
      },
    });
  }

  get offer(): Buffer {
    return Buffer.from(createOffer(this.#caps));
  }

  /** The µ-law received so far, concatenated. */
  audio(): Buffer {
    return Buffer.concat(this.received);
  }

  /** Reads the answer to our offer and points RTP at it. */
  useAnswer(sdp: Buffer): void {
    const answer = processAnswer(sdp.toString('utf8'), this.#caps);
    if (isSdpRejection(answer)) throw new Error(`bad answer: ${JSON.stringify(answer)}`);
    this.rtp.setRemote(answer.remote.rtp);
  }

  /** Answers an offer and points RTP at it; returns our answer. */
  answerOffer(sdp: Buffer): Buffer {
    const answer = createAnswer(sdp.toString('utf8'), this.#caps);
    if (isSdpRejection(answer)) throw new Error(`bad offer: ${JSON.stringify(answer)}`);
    this.rtp.setRemote(answer.negotiated.remote.rtp);
    return Buffer.from(answer.sdp);
  }

  /** Sends `tone` (µ-law) in a loop, one 20 ms packet every 20 ms, until stopSending(). */
  startSending(tone = this.#tone): void {
    this.#tone = tone;
    this.stopSending();
    let frame = 0;
    this.#timer = setInterval(() => {
      const packet = Buffer.alloc(RTP_HEADER_SIZE + 160);
      writeRtpHeader(packet, 0, this.#seq++, frame * 160, 0x1234, false);
      const at = (frame * 160) % (this.#tone.length - 160);
      this.#tone.copy(packet, RTP_HEADER_SIZE, at, at + 160);
      this.rtp.send(packet, 0);
      frame += 1;
    }, 20);
  }

  stopSending(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  close(): void {
    this.stopSending();
    this.rtp.close();
  }
}

/** A user agent on loopback (UDP) with phones that call out or answer. */
export async function startSipPhoneUa(t: Teardown, options: Partial<SipUserAgentOptions> = {}): Promise<{
  ua: Awaited<ReturnType<typeof startGatewayUa>>['ua'];
  port: number;
  phone(): Promise<SipPhone>;
}> {
  const { ua, transport } = await startGatewayUa(t, options);
  const ports = testPortPool();
  const phone = async (): Promise<SipPhone> => {
    const rtp = await RtpSession.open({ clock: systemClock, ports, bindAddress: '127.0.0.1', rtcpIntervalMs: 0 });
    if (isPortsExhausted(rtp)) throw new Error('no RTP ports');
    const p = new SipPhone(rtp);
    t.teardown(() => p.close());
    return p;
  };
  return { ua, port: transport.udpPort, phone };
}

/**
 * Resolves with the session once `call` is accepted, or rejects with its failure status; rejects
 * after `ms` when neither comes (RFC 3261 Timer B is 32 s; the default is a hang guard below it).
 */
export function answered(call: OutboundCall, ms = 20_000): Promise<{ session: SessionDialog; answer: Buffer }> {
  return withDeadline('an answer to the INVITE', new Promise((resolve, reject) => {
    call.events.on('accepted', (session, response) => resolve({ session, answer: response.body }));
    call.events.on('failed', (status) => reject(Object.assign(new Error(`call failed ${status}`), { status })));
  }), ms);
}

export type { InboundCall };
