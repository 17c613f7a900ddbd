/** @module Tests of the agent media leg over real loopback RTP: formats, pacing, clear, marks, DTMF, hold, detach. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { FakeClock } from '../../../../common/clock.js';
import { InvariantError } from '../../../../common/errors.js';
import { RtpPeer, settle, testPortPool } from '../../../../../test/support/rtp-peer.js';
import { tempWorkdir } from '../../../../../test/support/peers.js';
import {
  ALAW_TO_ULAW, alawEncode, CODECS, createAnswer, createOffer, isPortsExhausted, LoopingPcmSource, parseRtpHeader, RtpSession,
  StereoWavRecorder, ulawDecode, ulawEncode, writeTelephoneEvent,
  type CodecDescription, type NegotiatedAudio, type RtpHeader, type RtpPacketFields,
} from '../../../media/index.js';
import type { AgentAudioFormat, AgentLink, HoldSource } from '../../ports.js';
import { AgentMediaLeg, type AgentMediaLegOptions } from './agent-media-leg.js';

type T = { teardown(fn: () => void): void };

/** A recording implementation of the AgentLink port: what the leg gave the agent. */
class RecordingLink implements AgentLink {
  readonly inputFormat: AgentAudioFormat;
  readonly outputFormat: AgentAudioFormat;
  readonly audio: Buffer[] = [];
  readonly dtmf: string[] = [];
  readonly holdEvents: string[] = [];
  readonly marksPlayed: string[] = [];
  readonly bargeIn: 'client' | 'platform' | undefined;
  interrupts = 0;
  audioFramesDropped = 0;
  constructor(input: AgentAudioFormat, output: AgentAudioFormat, bargeIn?: 'client' | 'platform') {
    this.inputFormat = input;
    this.outputFormat = output;
    this.bargeIn = bargeIn;
  }
  interrupt(): void {
    this.interrupts++;
  }
  start(): Promise<void> {
    return Promise.resolve();
  }
  sendAudio(frame: Buffer): void {
    this.audio.push(frame);
  }
  sendDtmf(digit: string): boolean {
    this.dtmf.push(digit);
    return true;
  }
  hold(source: HoldSource = 'api'): void {
    this.holdEvents.push(source === 'api' ? 'hold' : `hold:${source}`);
  }
  unhold(source: HoldSource = 'api'): void {
    this.holdEvents.push(source === 'api' ? 'unhold' : `unhold:${source}`);
  }
  markPlayed(name: string): void {
    this.marksPlayed.push(name);
  }
  close(): void {}
}

const MULAW_8K: AgentAudioFormat = { encoding: 'mulaw', sampleRate: 8000 };
const ULAW_SILENCE = 0xff;

interface Rig {
  clock: FakeClock;
  phone: RtpPeer;
  session: RtpSession;
  leg: AgentMediaLeg;
  link: RecordingLink;
  digits: string[];
  /** Sends one RTP packet from the phone to the leg. */
  send: (fields: Partial<RtpPacketFields>, payload: Uint8Array) => Promise<void>;
  /** Attaches the link and waits for the pacer's first packet (silence, sent at once). */
  attach: () => Promise<void>;
  /** Runs the 20 ms pacer `n` times and waits for the packets to reach the phone. */
  play: (n: number) => Promise<Buffer[]>;
}

interface RigOptions {
  clock?: FakeClock;
  codec?: CodecDescription;
  input?: AgentAudioFormat;
  output?: AgentAudioFormat;
  leg?: Partial<AgentMediaLegOptions>;
  attach?: boolean;
  bargeIn?: 'client' | 'platform';
}

/** Real SDP offer/answer between the phone and the leg, so payload types come from negotiation. */
function negotiate(codec: CodecDescription, phonePort: number, legPort: number): NegotiatedAudio {
  const offer = createOffer({ address: '127.0.0.1', port: phonePort, codecs: [codec, CODECS.TELEPHONE_EVENT], sessionId: 1, sessionVersion: 1 });
  const answer = createAnswer(offer, {
    address: '127.0.0.1', port: legPort, codecs: [CODECS.PCMU, CODECS.PCMA, CODECS.TELEPHONE_EVENT], sessionId: 2, sessionVersion: 1,
  });
  if ('error' in answer) throw new Error(answer.detail);
  return answer.negotiated;
}

/** Opens the leg's session; a fresh random range when another process holds a stretch of ports. */
async function openSession(clock: FakeClock): Promise<RtpSession> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const opened = await RtpSession.open({ clock, ports: testPortPool(), bindAddress: '127.0.0.1', rtcpIntervalMs: 0 });
    if (!isPortsExhausted(opened)) return opened;
  }
  throw new Error('no free RTP ports');
}

async function rig(t: T, options: RigOptions = {}): Promise<Rig> {
  const clock = options.clock ?? new FakeClock();
  const phone = await RtpPeer.open(t);
  const session = await openSession(clock);
  t.teardown(() => session.close());
  session.setRemote({ address: '127.0.0.1', port: phone.port });
  const audio = negotiate(options.codec ?? CODECS.PCMU, phone.port, session.localPort);
  const digits: string[] = [];
  const leg = new AgentMediaLeg({ clock, rtp: session, audio, onDigit: (d) => digits.push(d), ...options.leg });
  t.teardown(() => leg.close());
  const link = new RecordingLink(options.input ?? MULAW_8K, options.output ?? MULAW_8K, options.bargeIn);
  const attach = async (): Promise<void> => {
    await leg.attach(link);
    await phone.waitFor(1);
  };
  if (options.attach ?? true) await attach();
  let seq = 100;
  return {
    clock, phone, session, leg, link, digits, attach,
    send: (fields, payload) => phone.sendRtp(session.localPort, { payloadType: audio.codec.payloadType, sequenceNumber: seq++, timestamp: seq * 160, ssrc: 0x1234, ...fields }, payload),
    play: async (n) => {
      const before = phone.received.length;
      for (let i = 0; i < n; i++) clock.advance(20);
      await phone.waitFor(before + n);
      return phone.received.slice(before, before + n).map((d) => d.data);
    },
  };
}

/** Waits for a condition on real time; a hang guard, not a timing check. */
async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  for (const end = Date.now() + ms; !cond(); await settle(5)) if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
}

const header = (packet: Buffer): RtpHeader => parseRtpHeader(packet) as RtpHeader;
const payloadOf = (packet: Buffer): Buffer => packet.subarray(12);

function sine(freq: number, n: number, rate = 8000, amp = 8000, phase = 0): Int16Array {
  return Int16Array.from({ length: n }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * freq * (i + phase)) / rate)));
}

/** Goertzel power of `freq` in `pcm`, normalised by length. */
function power(pcm: ArrayLike<number>, freq: number, rate: number): number {
  const k = 2 * Math.cos((2 * Math.PI * freq) / rate);
  let s1 = 0;
  let s2 = 0;
  for (let i = 0; i < pcm.length; i++) {
    const s0 = pcm[i]! + k * s1 - s2;
    s2 = s1;
    s1 = s0;
  }
  return (s1 * s1 + s2 * s2 - k * s1 * s2) / pcm.length;
}

const ulaw = (pcm: Int16Array): Buffer => {
  const out = Buffer.alloc(pcm.length);
  ulawEncode(pcm, out);
  return out;
};

const decodeUlaw = (bytes: Buffer): Int16Array => {
  const out = new Int16Array(bytes.length);
  ulawDecode(bytes, out);
  return out;
};

const pcm16le = (pcm: Int16Array): Buffer => Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);

t.test('docs/API.md "Agent WebSocket protocol": PCMU caller audio reaches a mulaw/8000 agent as the same bytes in 20 ms frames, whatever the ptime', async (t) => {
  const { send, link } = await rig(t);
  // ptime 30 ms: three packets of 240 bytes are 720 bytes, four whole frames and 80 bytes kept.
  const sent = Buffer.concat([0, 1, 2].map((i) => ulaw(sine(440, 240, 8000, 8000, i * 240))));
  for (let i = 0; i < 3; i++) await send({ timestamp: i * 240 }, sent.subarray(i * 240, (i + 1) * 240));
  await until('four frames', () => link.audio.length >= 4);
  await settle();
  t.equal(link.audio.length, 4, 'the last 80 bytes wait for the next packet');
  t.ok(link.audio.every((f) => f.length === 160), '160 bytes each');
  t.same(Buffer.concat(link.audio), sent.subarray(0, 640), 'payload bytes unchanged');
});

t.test('docs/API.md "Agent WebSocket protocol": PCMA caller audio reaches a mulaw/8000 agent as the equivalent µ-law code words', async (t) => {
  const { send, link } = await rig(t, { codec: CODECS.PCMA });
  const alaw = Buffer.alloc(160);
  alawEncode(sine(1000, 160), alaw);
  await send({}, alaw);
  await until('a frame', () => link.audio.length >= 1);
  t.same(link.audio[0], Buffer.from(alaw.map((code) => ALAW_TO_ULAW[code]!)));
});

for (const rate of [16000, 24000]) {
  t.test(`docs/API.md "Agent WebSocket protocol": a pcm16/${rate} agent hears the caller resampled, and its own audio reaches the phone as G.711 at 8 kHz`, async (t) => {
    const format: AgentAudioFormat = { encoding: 'pcm16', sampleRate: rate };
    const { send, link, leg, play } = await rig(t, { input: format, output: format });
    const tone = sine(1000, 160 * 10);
    for (let i = 0; i < 10; i++) await send({ timestamp: i * 160 }, ulaw(tone.subarray(i * 160, (i + 1) * 160)));
    await until('nine frames', () => link.audio.length >= 9);
    t.ok(link.audio.every((f) => f.length === (rate / 50) * 2), `20 ms of pcm16 at ${rate} Hz is ${(rate / 50) * 2} bytes`);
    const heard = new Int16Array(Uint8Array.from(Buffer.concat(link.audio.slice(2))).buffer);
    t.ok(power(heard, 1000, rate) > 100 * power(heard, 3000, rate), `the 1 kHz tone survives at ${rate} Hz`);

    // 200 ms of a 1 kHz tone at the agent's rate, in 1001-byte chunks: odd sizes split samples across chunks.
    const agentAudio = pcm16le(sine(1000, rate / 5, rate));
    for (let at = 0; at < agentAudio.length; at += 1001) leg.handlers.onAudio?.(agentAudio.subarray(at, at + 1001));
    const packets = await play(10);
    t.ok(packets.every((p) => p.length === 12 + 160), '160-sample G.711 packets');
    const played = decodeUlaw(Buffer.concat(packets.slice(2, 9).map(payloadOf)));
    t.ok(power(played, 1000, 8000) > 100 * power(played, 2500, 8000), 'the phone hears the 1 kHz tone');
    t.ok(power(played, 1000, 8000) > 1e6, 'at a useful level');
  });
}

t.test('RFC 3550 5.1: agent audio is paced into 160-sample packets with continuous sequence numbers and timestamps', async (t) => {
  const { leg, play } = await rig(t);
  leg.handlers.onAudio?.(ulaw(sine(440, 800)));
  const packets = await play(8);
  const hs = packets.map(header);
  t.ok(hs.every((h) => h.payloadType === 0 && h.ssrc === hs[0]!.ssrc), 'PCMU, one SSRC');
  t.ok(hs.every((h, i) => i === 0 || ((h.sequenceNumber - hs[i - 1]!.sequenceNumber) & 0xffff) === 1), 'sequence numbers step by one');
  t.ok(hs.every((h, i) => i === 0 || ((h.timestamp - hs[i - 1]!.timestamp) >>> 0) === 160), 'timestamps step by 160');
  t.ok(packets.slice(0, 5).every((p) => payloadOf(p).some((b) => b !== ULAW_SILENCE)), 'five frames of the agent');
  t.ok(packets.slice(5).every((p) => payloadOf(p).every((b) => b === ULAW_SILENCE)), 'then silence: RTP keeps flowing');
  t.equal(leg.stats().underruns, 4, 'the first packet, sent at attach, and the last three');
});

t.test('docs/API.md "Agent WebSocket protocol": clear flushes queued agent audio at once; the phone hears silence from the next packet', async (t) => {
  const { leg, link, play } = await rig(t);
  leg.handlers.onAudio?.(ulaw(sine(440, 8000)));
  leg.handlers.onMark?.('after-the-second');
  const before = await play(3);
  t.ok(before.every((p) => payloadOf(p).some((b) => b !== ULAW_SILENCE)), 'agent audio playing');
  leg.handlers.onClearAudio?.();
  t.same(link.marksPlayed, ['after-the-second'], 'the flushed mark is answered');
  const after = await play(5);
  t.ok(after.every((p) => payloadOf(p).every((b) => b === ULAW_SILENCE)), 'nothing of the flushed audio is played');
  t.equal(leg.stats().clears, 1);
});

t.test('docs/API.md "Agent WebSocket protocol": a mark is echoed once the audio before it has played, not before', async (t) => {
  const { leg, link, play } = await rig(t);
  leg.handlers.onAudio?.(ulaw(sine(440, 480)));
  leg.handlers.onMark?.('greeting');
  leg.handlers.onAudio?.(ulaw(sine(440, 320)));
  await play(2);
  t.same(link.marksPlayed, [], '40 of 60 ms played');
  await play(1);
  t.same(link.marksPlayed, ['greeting'], 'answered with the third frame');
  await play(3);
  t.same(link.marksPlayed, ['greeting'], 'once');
});

t.test('docs/API.md "Agent WebSocket protocol": agent audio and marks that arrive before attach are played in order after it', async (t) => {
  const { leg, link, play, attach, phone } = await rig(t, { attach: false });
  leg.handlers.onAudio?.(ulaw(sine(440, 160)));
  leg.handlers.onMark?.('early');
  await attach();
  t.ok(payloadOf(phone.received[0]!.data).some((b) => b !== ULAW_SILENCE), 'the first packet carries the early audio');
  t.same(link.marksPlayed, ['early']);
  const [second] = await play(1);
  t.ok(payloadOf(second!).every((b) => b === ULAW_SILENCE));
});

/** One telephone-event packet payload (RFC 4733 2.3). */
const eventPayload = (event: number, end: boolean, duration: number): Buffer => {
  const out = Buffer.alloc(4);
  writeTelephoneEvent(out, 0, { event, end, volume: 10, duration });
  return out;
};

t.test('RFC 4733 2.5.1.4: an event with three end packets gives exactly one sendDtmf and one onDigit', async (t) => {
  const { send, link, digits, leg } = await rig(t);
  const ts = 8000;
  await send({ payloadType: 101, timestamp: ts, marker: true }, eventPayload(5, false, 160));
  await send({ payloadType: 101, timestamp: ts }, eventPayload(5, false, 320));
  for (let i = 0; i < 3; i++) await send({ payloadType: 101, timestamp: ts }, eventPayload(5, true, 480));
  await send({ payloadType: 101, timestamp: ts + 2000, marker: true }, eventPayload(11, true, 800));
  await until('two digits', () => link.dtmf.length >= 2);
  await settle();
  t.same(link.dtmf, ['5', '#']);
  t.same(digits, ['5', '#']);
  t.equal(leg.stats().digits, 2);
});

t.test('docs/API.md "Calls": hold stops caller audio to the agent, plays hold music to the phone, pauses the recording; unhold resumes', async (t) => {
  const dir = tempWorkdir(t, 'vgw-agent-leg-');
  const clock0 = new FakeClock();
  const recorder = await StereoWavRecorder.open({ path: join(dir, 'call.wav'), clock: clock0 });
  t.teardown(() => recorder.close().then(() => undefined));
  const music = new LoopingPcmSource(new Int16Array(160).fill(4000), 'test-music');
  const { send, link, leg, play } = await rig(t, { leg: { recorder, holdMusic: music } });
  const frame = ulaw(sine(440, 160));
  await send({}, frame);
  await until('caller audio', () => link.audio.length === 1);

  leg.hold();
  leg.hold();
  t.equal(leg.isHeld, true);
  t.same(link.holdEvents, ['hold'], 'idempotent: one hold event');
  t.equal(recorder.isPaused, true, 'recording paused');
  t.equal(recorder.metadata.pauses.length, 1);
  t.equal(recorder.metadata.pauses[0]!.endedAt, null);
  await send({}, frame);
  await send({ payloadType: 101, timestamp: 99 }, eventPayload(1, true, 160));
  leg.handlers.onAudio?.(ulaw(sine(440, 1600)));
  leg.handlers.onMark?.('held-mark');
  t.same(link.marksPlayed, ['held-mark'], 'a mark during hold is answered at once');
  const held = await play(3);
  const musicCode = ulaw(new Int16Array(1).fill(4000))[0];
  t.ok(held.every((p) => payloadOf(p).every((b) => b === musicCode)), 'the phone hears the music, not the agent');
  await settle();
  t.equal(link.audio.length, 1, 'the agent got no caller audio while held');
  t.same(link.dtmf, [], 'nor digits');

  leg.unhold();
  leg.unhold();
  t.same(link.holdEvents, ['hold', 'unhold']);
  t.equal(recorder.isPaused, false, 'recording resumed');
  t.not(recorder.metadata.pauses[0]!.endedAt, null);
  await send({}, frame);
  await until('caller audio again', () => link.audio.length === 2);
  const after = await play(2);
  t.ok(after.every((p) => payloadOf(p).every((b) => b === ULAW_SILENCE)), 'held agent audio was discarded, not queued');
});

/** The two channels of a finished stereo WAV: left is the remote party, right the agent. */
function readChannels(path: string): { remote: Int16Array; agent: Int16Array } {
  const file = readFileSync(path);
  const data = file.indexOf('data', 12, 'latin1');
  const bytes = file.readUInt32LE(data + 4);
  const samples = new Int16Array(Uint8Array.from(file.subarray(data + 8, data + 8 + bytes)).buffer);
  const remote = new Int16Array(samples.length / 2);
  const agent = new Int16Array(samples.length / 2);
  for (let i = 0; i < remote.length; i++) {
    remote[i] = samples[2 * i]!;
    agent[i] = samples[2 * i + 1]!;
  }
  return { remote, agent };
}

t.test('recording: the remote channel gets the carrier party, the agent channel the agent audio as played', async (t) => {
  const clock = new FakeClock();
  const path = join(tempWorkdir(t, 'vgw-agent-leg-'), 'call.wav');
  const recorder = await StereoWavRecorder.open({ path, clock, writeChunkMs: 100, alignWindowMs: 100 });
  const { send, link, leg, play } = await rig(t, { clock, leg: { recorder } });
  const caller = sine(1000, 160 * 50);
  leg.handlers.onAudio?.(ulaw(sine(400, 160 * 50)));
  for (let i = 0; i < 50; i++) {
    await play(1);
    await send({ timestamp: i * 160 }, ulaw(caller.subarray(i * 160, (i + 1) * 160)));
    await until('caller frame', () => link.audio.length === i + 1);
  }
  await recorder.close();
  const { remote, agent } = readChannels(path);
  t.ok(remote.length >= 160 * 40, `about a second recorded (${remote.length} samples)`);
  t.ok(power(remote, 1000, 8000) > 100 * power(remote, 400, 8000), 'the caller\'s 1 kHz tone is on the remote channel');
  t.ok(power(agent, 400, 8000) > 100 * power(agent, 1000, 8000), 'the agent\'s 400 Hz tone is on the agent channel');
});

t.test('docs/API.md "Calls": a call held before the agent is attached tells the link at attach, and plays no agent audio', async (t) => {
  const { leg, link, attach, play } = await rig(t, { attach: false });
  leg.hold();
  t.same(link.holdEvents, [], 'no link yet');
  leg.handlers.onAudio?.(ulaw(sine(440, 1600)));
  await attach();
  t.same(link.holdEvents, ['hold']);
  const held = await play(3);
  t.ok(held.every((p) => payloadOf(p).every((b) => b === ULAW_SILENCE)));
  leg.unhold();
  t.same(link.holdEvents, ['hold', 'unhold']);
});

t.test('docs/DECISIONS.md hold: an API hold and the remote party\'s own overlap; the link hears the first hold and the last unhold, with their source', async (t) => {
  const { leg, link } = await rig(t);
  leg.hold('remote');
  leg.hold();
  t.equal(leg.isHeld, true);
  leg.unhold('remote');
  t.equal(leg.isHeld, true, 'still held by the API');
  leg.unhold();
  t.equal(leg.isHeld, false);
  leg.hold();
  leg.hold('remote');
  leg.unhold();
  leg.unhold('remote');
  t.same(link.holdEvents, ['hold:remote', 'unhold', 'hold', 'unhold:remote']);
});

t.test('docs/API.md "Calls": without hold music the held phone hears silence, and RTP keeps flowing', async (t) => {
  const { leg, play } = await rig(t);
  leg.handlers.onAudio?.(ulaw(sine(440, 1600)));
  leg.hold();
  const held = await play(4);
  t.equal(held.length, 4);
  t.ok(held.every((p) => payloadOf(p).every((b) => b === ULAW_SILENCE)));
});

t.test('docs/ARCHITECTURE.md "Media ownership": attach takes the session, detach gives it back usable, the time-out stays the call\'s', async (t) => {
  const { clock, session, leg, link, send, phone, play, attach } = await rig(t, { attach: false });
  t.notOk(session.isOwned, 'nobody owns the packets before attach');
  await attach();
  t.ok(session.isOwned, 'attach took the session');
  t.throws(() => session.take({}), InvariantError, 'a second owner is a bug, not a silent replacement');
  await play(1);
  leg.detach();
  leg.detach();
  t.notOk(session.isOwned, 'packets are no longer taken');
  const release = session.take({});
  t.ok(session.isOwned, 'another owner (a transfer\'s bridge) may take it now');
  release();
  const count = phone.received.length;
  clock.advance(200);
  await send({}, ulaw(sine(440, 160)));
  await settle();
  t.equal(phone.received.length, count, 'the pacer stopped');
  t.equal(link.audio.length, 0, 'the agent gets nothing');
  const packet = Buffer.alloc(172);
  packet[0] = 0x80;
  session.send(packet, 7);
  await phone.waitFor(count + 1);
  t.pass('the session still sends');
});

t.test('RFC 3550 5.1: malformed and unexpected packets are dropped and counted, never thrown', async (t) => {
  const { phone, session, send, link, leg } = await rig(t);
  const raw = (bytes: number[]): Promise<void> => phone.sendRaw(session.localPort, Buffer.from(bytes));
  const base = [0x80, 0x00, 0, 1, 0, 0, 0, 1, 0, 0, 0x12, 0x34];
  await raw([...base.slice(0, 1), 0x00, 0, 2, 0, 0, 0, 1, 0, 0, 0x12, 0x34, 0x90, 0x00]); // 2-byte payload: fine, kept
  await raw([0x90, ...base.slice(1, 3), 3, ...base.slice(4), 0, 0, 0, 9]); // extension longer than the packet
  await raw([0xa0, ...base.slice(1, 3), 4, ...base.slice(4), 1, 2, 200]); // padding longer than the packet (RFC 3550 5.1)
  await send({ payloadType: 96 }, Buffer.alloc(160)); // not negotiated
  await send({ payloadType: 101 }, Buffer.alloc(2)); // telephone-event shorter than 4 bytes
  await send({}, Buffer.alloc(2000)); // far beyond any ptime
  leg.handlers.onAudio?.(Buffer.alloc(0));
  leg.handlers.onAudio?.(Buffer.alloc(1));
  await send({}, ulaw(sine(440, 160)));
  await until('the valid packet', () => (leg.stats().packetsDropped) >= 5 && link.audio.length >= 1);
  t.equal(leg.stats().packetsDropped, 5);
  t.equal(link.audio[0]!.length, 160);
  link.audioFramesDropped = 3;
  t.equal(leg.stats().framesToAgentDropped, 3, 'frames an agent that stopped reading lost are in the call detail');
  t.doesNotThrow(() => JSON.stringify(leg.stats()));
});

// Caller speech, echo guard and barge-in.

/** A crude voiced sound (harmonics of a gliding pitch, two stressed like formants); `at` is the absolute sample index. */
function vowel(at: number, pitch: number, formants: readonly number[], amp = 3000): Int16Array {
  return Int16Array.from({ length: 160 }, (_, i) => {
    const k = at + i;
    const f0 = pitch * (1 + 0.4 * Math.sin(k / 4000));
    let s = 0;
    for (let h = 1; h <= 20; h++) s += Math.sin((2 * Math.PI * f0 * h * k) / 8000) * (formants.includes(h) ? 1 : 0.25 / h);
    return Math.round(s * amp);
  });
}
const agentVoice = (frame: number): Int16Array => vowel(frame * 160, 150, [4, 9]);
const callerVoice = (frame: number): Int16Array => vowel(frame * 160, 110, [3, 7]);
const agentSpeech = (frames: number): Buffer => Buffer.concat(Array.from({ length: frames }, (_, f) => ulaw(agentVoice(f))));
const isSilence = (packet: Buffer): boolean => payloadOf(packet).every((b) => b === ULAW_SILENCE);

/** Sends one 20 ms caller packet and waits until the leg has taken it (held or not). */
async function speak(r: Rig, pcm: Int16Array): Promise<void> {
  const before = (r.leg.stats().rtp as { packetsReceived: number }).packetsReceived;
  await r.send({}, ulaw(pcm));
  await until('the caller packet', () => (r.leg.stats().rtp as { packetsReceived: number }).packetsReceived > before);
}

async function speechRig(t: T, options: RigOptions = {}): Promise<Rig & { events: string[] }> {
  const events: string[] = [];
  const r = await rig(t, { ...options, leg: { ...options.leg, onCallerSpeech: (e) => events.push(e) } });
  return { ...r, events };
}

t.test('caller VAD: the carrier party\'s speech gives onCallerSpeech start and stop, counted in stats', async (t) => {
  const r = await speechRig(t);
  for (let f = 0; f < 15; f++) await speak(r, new Int16Array(160));
  t.same(r.events, []);
  for (let f = 15; f < 45; f++) await speak(r, callerVoice(f));
  t.same(r.events, ['start']);
  t.equal(r.leg.stats().callerSpeaking, true);
  for (let f = 45; f < 75; f++) await speak(r, new Int16Array(160));
  t.same(r.events, ['start', 'stop'], 'stop after the 400 ms hangover');
  t.match(r.leg.stats(), { callerSpeechStarts: 1, callerSpeechStops: 1, callerSpeaking: false, echoFrames: 0, bargeIns: 0, bargeIn: 'platform' });
  t.equal(r.link.audio.length, 75, 'the agent got every caller frame, speech or not');
});

/**
 * The line returns what the phone received at -10 dB, `delay` packets (20 ms each) later, with
 * `caller(f)` (or nothing) added: an echoing carrier with a caller who may talk over it.
 */
async function echoingLine(r: Rig, frames: number, caller: (f: number) => Int16Array | null, delay = 5): Promise<void> {
  const heard: Int16Array[] = [];
  for (let f = 0; f < frames; f++) {
    const [packet] = await r.play(1);
    heard.push(decodeUlaw(payloadOf(packet!)));
    const echo = f >= delay ? heard[f - delay]!.map((x) => Math.round(x * 10 ** (-10 / 20))) : new Int16Array(160);
    const own = caller(f);
    await speak(r, own === null ? echo : echo.map((x, i) => Math.max(-32768, Math.min(32767, x + own[i]!))));
  }
}

t.test('echo guard: the agent\'s audio echoed back at -10 dB after 100 ms starts no caller speech; the caller talking over it does', async (t) => {
  const r = await speechRig(t);
  r.leg.handlers.onAudio?.(agentSpeech(150));
  await echoingLine(r, 80, () => null);
  t.same(r.events, [], 'the echo alone is not the caller');
  t.ok((r.leg.stats().echoFrames) >= 70, `echo frames kept from the VAD (${String(r.leg.stats().echoFrames)})`);
  await echoingLine(r, 20, (f) => callerVoice(80 + f));
  t.same(r.events, ['start'], 'the caller, as loud as the agent, is heard over the echo');
  t.equal(r.leg.stats().bargeIns, 0, 'a platform barge-in link: the gateway flushes nothing');
});

/** Agent audio queued with a mark behind it, then the caller speaking until the speech start. Returns the packet index of the start. */
async function talkOver(r: Rig & { events: string[] }): Promise<number> {
  r.leg.handlers.onAudio?.(agentSpeech(150));
  r.leg.handlers.onMark?.('reply-1');
  for (let f = 0; f < 60; f++) {
    await r.play(1);
    await speak(r, f < 15 ? new Int16Array(160) : callerVoice(f));
    if (r.events.length > 0) return f;
  }
  throw new Error('no caller speech start');
}

t.test('barge-in, client: the caller\'s speech start flushes the agent\'s queued audio within one packet and interrupts the link', async (t) => {
  const r = await speechRig(t, { bargeIn: 'client' });
  const at = await talkOver(r);
  t.ok(at >= 17 && at < 25, `speech start after the onset (packet ${at})`);
  t.equal(r.link.interrupts, 1, 'the link is told');
  t.same(r.link.marksPlayed, ['reply-1'], 'the flushed mark is answered');
  const after = await r.play(3);
  t.ok(after.every(isSilence), 'the very next packet is silence: no agent audio 20 ms after the interruption');
  t.match(r.leg.stats(), { bargeIns: 1, bargeIn: 'client', bufferedMs: 0, callerSpeechStarts: 1 });
  r.leg.handlers.onAudio?.(agentSpeech(5));
  const next = await r.play(2);
  t.ok(next.some((p) => !isSilence(p)), 'the agent\'s next reply plays');
  t.equal(r.link.interrupts, 1, 'one interruption per speech start');
});

t.test('barge-in, platform: the gateway reports the caller\'s speech but leaves the flush to the provider', async (t) => {
  const r = await speechRig(t, { bargeIn: 'platform' });
  await talkOver(r);
  t.equal(r.link.interrupts, 0);
  t.same(r.link.marksPlayed, []);
  const after = await r.play(3);
  t.ok(after.every((p) => !isSilence(p)), 'the agent keeps playing until its platform sends a clear');
  t.equal(r.leg.stats().bargeIns, 0);
});

t.test('barge-in, client: speech while the agent is quiet interrupts nothing', async (t) => {
  const r = await speechRig(t, { bargeIn: 'client' });
  for (let f = 0; f < 40; f++) {
    await r.play(1);
    await speak(r, f < 15 ? new Int16Array(160) : callerVoice(f));
  }
  t.same(r.events, ['start']);
  t.equal(r.link.interrupts, 0);
  t.equal(r.leg.stats().bargeIns, 0);
});

t.test('docs/API.md "Calls": hold pauses caller VAD and barge-in; unhold listens again', async (t) => {
  const r = await speechRig(t, { bargeIn: 'client' });
  for (let f = 0; f < 15; f++) await speak(r, new Int16Array(160));
  r.leg.hold();
  r.leg.handlers.onAudio?.(agentSpeech(50));
  for (let f = 15; f < 45; f++) await speak(r, callerVoice(f));
  t.same(r.events, [], 'no speech while held');
  t.match(r.leg.stats(), { callerSpeechStarts: 0, bargeIns: 0 });
  r.leg.unhold();
  for (let f = 45; f < 75; f++) await speak(r, callerVoice(f));
  t.same(r.events, ['start'], 'heard after unhold (and its warm-up)');
});

t.test('docs/API.md "Calls": hold during the caller\'s speech ends it', async (t) => {
  const r = await speechRig(t);
  for (let f = 0; f < 40; f++) await speak(r, f < 15 ? new Int16Array(160) : callerVoice(f));
  t.same(r.events, ['start']);
  r.leg.hold();
  t.same(r.events, ['start', 'stop']);
  t.match(r.leg.stats(), { callerSpeechStarts: 1, callerSpeechStops: 1, callerSpeaking: false });
});
