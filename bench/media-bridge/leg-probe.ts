/**
 * @module One measured media_bridge leg: a phone socket sending 20 ms PCMU to a real
 * AgentMediaLeg on loopback, and an in-process agent link that records when caller frames come
 * out and pushes bursts of agent audio whose first RTP packet the phone timestamps.
 *
 * Observation points, none of which changes what the leg does: the phone's send and receive,
 * the link's `sendAudio`, a wrapper around the RTP session's owner (where the packet enters
 * the leg) and around its `send` (where the pacer hands a packet out), and the injected clock,
 * whose timers tell which 20 ms slot the pacer was serving.
 */
import { createSocket, type Socket } from 'node:dgram';
import { systemClock, type Clock } from '../../src/common/clock.js';
import { AgentMediaLeg } from '../../src/engine/calls/connected/agent-media/agent-media-leg.js';
import type { AgentAudioFormat, AgentLink } from '../../src/engine/calls/ports.js';
import {
  CODECS, createAnswer, createOffer, FramePacer, isPortsExhausted, linearToUlaw, RtpSession, rtpSequenceNumber, serializeRtp,
  type PortPool,
} from '../../src/engine/media/index.js';
import type { LegSamples } from './samples.js';

const FRAME = 160;
const SLOT_MS = 20;
/** A burst of agent speech: 60 ms, then 200-220 ms until the next (random, so bursts fall anywhere in the pacer's slot). */
const BURST_MS = 60;

/** True when a µ-law payload carries sound: the leg sends 0xff for digital silence. */
function carriesAudio(packet: Buffer): boolean {
  for (let i = 12; i < packet.length; i++) if (packet[i] !== 0xff && packet[i] !== 0x7f) return true;
  return false;
}

/** Ten seconds of a speech-like signal (voiced bursts and pauses over faint noise) as µ-law, shared by all phones. */
export function callerLoop(): Buffer {
  const n = 8000 * 10;
  const out = Buffer.alloc(n);
  let seed = 7;
  for (let i = 0; i < n; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    const pitch = 110 + 30 * Math.sin(i / 3000);
    let s = ((seed / 2 ** 32) * 2 - 1) * 60;
    if (Math.floor(i / 6000) % 3 !== 2) for (let h = 1; h <= 12; h++) s += (3000 / h) * Math.sin((2 * Math.PI * pitch * h * i) / 8000);
    out[i] = linearToUlaw(Math.max(-32768, Math.min(32767, Math.round(s))));
  }
  return out;
}

/** A burst of agent audio in the link's output format: a 500 Hz tone. */
function agentBurst(format: AgentAudioFormat): Buffer {
  const n = (format.sampleRate * BURST_MS) / 1000;
  const pcm = Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 500 * i) / format.sampleRate)));
  if (format.encoding === 'pcm16') return Buffer.from(pcm.buffer);
  return Buffer.from(pcm.map((x) => linearToUlaw(x)));
}

/** The provider end, in process: records when frames arrive, nothing else. */
class ProbeLink implements AgentLink {
  readonly inputFormat: AgentAudioFormat;
  readonly outputFormat: AgentAudioFormat;
  readonly #onFrame: () => void;
  constructor(format: AgentAudioFormat, onFrame: () => void) {
    this.inputFormat = format;
    this.outputFormat = format;
    this.#onFrame = onFrame;
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  sendAudio(): void {
    this.#onFrame();
  }
  sendDtmf(): boolean {
    return true;
  }
  hold(): void {}
  unhold(): void {}
  markPlayed(): void {}
  close(): void {}
}

async function bound(): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return socket;
}

/** A leg, its phone and its agent; {@link start} begins the traffic, {@link stop} ends and frees it. */
export class LegProbe {
  readonly #samples: LegSamples;
  readonly #counting: () => boolean;
  readonly #format: AgentAudioFormat;
  readonly #loop: Buffer;
  #phone: Socket | null = null;
  #session: RtpSession | null = null;
  #leg: AgentMediaLeg | null = null;
  #phonePacer: FramePacer | null = null;
  #burstTimer: NodeJS.Timeout | null = null;
  readonly #sentAt = new Float64Array(65536);
  /** Sequence number and arrival time of the packet the leg is handling now. */
  #inLeg = { seq: 0, at: 0 };
  /** When the pacer's running timer was due: the slot it serves (its first packet goes out at attach). */
  #slotDue = 0;
  /** The burst in flight: when the agent gave it, and the slot of its first packet (-1 until sent). */
  #burstAt = -1;
  #burstSlot = -1;

  constructor(format: AgentAudioFormat, loop: Buffer, samples: LegSamples, counting: () => boolean) {
    this.#format = format;
    this.#loop = loop;
    this.#samples = samples;
    this.#counting = counting;
  }

  async open(ports: PortPool): Promise<void> {
    const phone = await bound();
    this.#phone = phone;
    const session = await RtpSession.open({ clock: systemClock, ports, bindAddress: '127.0.0.1', rtcpIntervalMs: 0 });
    if (isPortsExhausted(session)) throw new Error('no free RTP ports for the benchmark');
    this.#session = session;
    session.setRemote({ address: '127.0.0.1', port: phone.address().port });
    const offer = createOffer({ address: '127.0.0.1', port: phone.address().port, codecs: [CODECS.PCMU, CODECS.TELEPHONE_EVENT], sessionId: 1, sessionVersion: 1 });
    const answer = createAnswer(offer, { address: '127.0.0.1', port: session.localPort, codecs: [CODECS.PCMU, CODECS.TELEPHONE_EVENT], sessionId: 2, sessionVersion: 1 });
    if ('error' in answer) throw new Error(answer.detail);
    // The pacer is the leg's only timer; its deadline is the slot a packet was due in.
    const clock: Clock = {
      now: () => systemClock.now(),
      monotonic: () => systemClock.monotonic(),
      setTimeout: (fn, ms) => {
        const due = performance.now() + ms;
        return systemClock.setTimeout(() => {
          this.#slotDue = due;
          fn();
        }, ms);
      },
    };
    const leg = new AgentMediaLeg({ clock, rtp: session, audio: answer.negotiated });
    this.#leg = leg;
    const send = session.send.bind(session);
    session.send = (packet, source, advancesClock) => {
      if (this.#burstAt >= 0 && this.#burstSlot < 0 && carriesAudio(packet)) this.#burstSlot = this.#slotDue;
      send(packet, source, advancesClock);
    };
    this.#slotDue = performance.now();
    phone.on('message', (msg) => this.#onPhoneReceive(msg));
    // The leg takes the session on attach: its owner is wrapped on the way in.
    const take = session.take.bind(session);
    session.take = (owner) => take({
      ...owner,
      onRtp: (packet, s) => {
        this.#inLeg.seq = rtpSequenceNumber(packet);
        this.#inLeg.at = performance.now();
        owner.onRtp?.(packet, s);
      },
    });
    await leg.attach(new ProbeLink(this.#format, () => this.#onProviderFrame()));
  }

  /** Starts the phone's 20 ms packets and the agent's bursts. */
  start(): void {
    const phone = this.#phone;
    const session = this.#session;
    if (phone === null || session === null) throw new Error('LegProbe.start before open');
    const port = session.localPort;
    this.#phonePacer = new FramePacer(systemClock, SLOT_MS, (frame) => {
      const at = (frame * FRAME) % this.#loop.length;
      const packet = serializeRtp({ payloadType: 0, sequenceNumber: frame & 0xffff, timestamp: frame * FRAME, ssrc: 0x5eed }, this.#loop.subarray(at, at + FRAME));
      this.#sentAt[frame & 0xffff] = performance.now();
      phone.send(packet, port, '127.0.0.1');
    });
    this.#phonePacer.start();
    this.#scheduleBurst();
  }

  stop(): void {
    this.#phonePacer?.stop();
    if (this.#burstTimer) clearTimeout(this.#burstTimer);
    this.#leg?.close();
    this.#session?.close();
    this.#phone?.close();
  }

  #scheduleBurst(): void {
    this.#burstTimer = setTimeout(() => this.#burst(), 200 + Math.random() * SLOT_MS);
  }

  #burst(): void {
    const leg = this.#leg;
    if (leg === null) return;
    // A burst the phone has not seen yet is dropped from the figures, not mixed with the next.
    this.#burstAt = performance.now();
    this.#burstSlot = -1;
    leg.handlers.onAudio?.(agentBurst(this.#format));
    this.#scheduleBurst();
  }

  #onProviderFrame(): void {
    if (!this.#counting()) return;
    const now = performance.now();
    this.#samples.callerTotal.push(now - this.#sentAt[this.#inLeg.seq]!);
    this.#samples.callerInLeg.push(now - this.#inLeg.at);
  }

  #onPhoneReceive(packet: Buffer): void {
    if (this.#burstAt < 0 || !carriesAudio(packet)) return;
    const total = performance.now() - this.#burstAt;
    // The design's wait: from the burst to the slot its packet was due in (a late timer is the gateway's delay).
    const slot = Math.min(SLOT_MS, Math.max(0, this.#burstSlot - this.#burstAt));
    this.#burstAt = -1;
    if (!this.#counting()) return;
    this.#samples.agentTotal.push(total);
    this.#samples.agentPacerSlot.push(slot);
    this.#samples.agentAdded.push(total - slot);
  }
}
