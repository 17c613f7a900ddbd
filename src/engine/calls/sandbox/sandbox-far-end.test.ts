/**
 * The sandbox far end over real loopback sockets: our SipUserAgent calls it, our RtpSession
 * hears the announcement and the echo. No timing assertions: waits are hang guards only.
 */
import t, { type Test } from 'tap';
import { systemClock } from '../../../common/clock.js';
import {
  CODECS, createOffer, decodeG711, isPortsExhausted, processAnswer, RtpSession, rtpMarker, rtpPayloadOffset, rtpPayloadType,
  rtpSequenceNumber, rtpSsrc, rtpTimestamp, RTP_HEADER_SIZE, encodeG711, writeRtpHeader,
  type Direction, type LocalCapabilities, type PortPool,
} from '../../media/index.js';
import type { SessionDialog, SipResponse, SipUserAgent } from '../../sip/index.js';
import { startGatewayUa } from '../../../../test/support/sip-sipp.js';
import { testPortPool } from '../../../../test/support/rtp-peer.js';
import { SandboxFarEnd, type SandboxFarEndOptions } from './sandbox-far-end.js';

/** `ms` of a sine at `hz`, 8 kHz, about -10 dBFS. */
function tone(hz: number, ms: number): Int16Array {
  return Int16Array.from({ length: (ms * 8000) / 1000 }, (_, n) => Math.round(10000 * Math.sin((2 * Math.PI * hz * n) / 8000)));
}

/** Goertzel power of `hz` in `pcm`. */
function power(pcm: Int16Array, hz: number): number {
  const k = 2 * Math.cos((2 * Math.PI * hz) / 8000);
  let s1 = 0;
  let s2 = 0;
  for (const x of pcm) [s1, s2] = [x + k * s1 - s2, s1];
  return s1 * s1 + s2 * s2 - k * s1 * s2;
}

/** Polls `check` until true; rejects after `ms` as a hang guard. */
async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Received {
  pt: number;
  seq: number;
  ts: number;
  ssrc: number;
  marker: boolean;
  payload: Buffer;
}

/** Our end of the call's media: an RTP session that records every packet it gets. */
class Leg {
  readonly rtp: RtpSession;
  readonly received: Received[] = [];
  version = 1;

  constructor(rtp: RtpSession) {
    this.rtp = rtp;
    rtp.take({
      onRtp: (p) => {
        const o = rtpPayloadOffset(p);
        this.received.push({ pt: rtpPayloadType(p), seq: rtpSequenceNumber(p), ts: rtpTimestamp(p), ssrc: rtpSsrc(p), marker: rtpMarker(p), payload: Buffer.from(p.subarray(o)) });
      },
    });
  }

  static async open(tt: Test, ports: PortPool): Promise<Leg> {
    const rtp = await RtpSession.open({ clock: systemClock, ports, bindAddress: '127.0.0.1', rtcpIntervalMs: 0 });
    if (isPortsExhausted(rtp)) throw new Error('no ports');
    tt.teardown(() => rtp.close());
    return new Leg(rtp);
  }

  caps(direction: Direction = 'sendrecv'): LocalCapabilities {
    return { address: '127.0.0.1', port: this.rtp.localPort, codecs: [CODECS.PCMU, CODECS.TELEPHONE_EVENT], direction, sessionId: 7, sessionVersion: this.version++ };
  }

  offer(direction: Direction = 'sendrecv'): Buffer {
    return Buffer.from(createOffer(this.caps(direction)));
  }

  /** Applies the far end's answer to our session. */
  wire(answer: Buffer): void {
    const n = processAnswer(answer.toString('utf8'), this.caps());
    if ('error' in n) throw new Error(n.detail);
    this.rtp.setRemote(n.remote.rtp, { rtcp: n.remote.rtcp, rtcpMux: n.rtcpMux });
  }

  pcm(from: number, to = this.received.length): Int16Array {
    const frames = this.received.slice(from, to).filter((r) => r.pt === 0);
    const out = new Int16Array(frames.length * 160);
    frames.forEach((f, i) => decodeG711('PCMU', f.payload, out.subarray(i * 160, i * 160 + 160)));
    return out;
  }

  /** Sends `pcm` as 20 ms PCMU packets, paced by a timer. */
  async play(pcm: Int16Array): Promise<void> {
    for (let i = 0; i * 160 < pcm.length; i++) {
      const packet = Buffer.alloc(RTP_HEADER_SIZE + 160);
      writeRtpHeader(packet, 0, i, i * 160, 0, i === 0);
      encodeG711('PCMU', pcm.subarray(i * 160, i * 160 + 160), packet.subarray(RTP_HEADER_SIZE));
      this.rtp.send(packet, 1);
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

interface Outcome {
  status: number;
  provisional: number[];
  session?: SessionDialog;
  response?: SipResponse;
}

/** Places a call to `number` at the far end; resolves with its final outcome. */
function dial(ua: SipUserAgent, farEnd: SandboxFarEnd, number: string, sdp: Buffer | undefined, onProgress?: () => void): Promise<Outcome> {
  const provisional: number[] = [];
  const call = ua.invite({ target: farEnd.uri.replace('sip:', `sip:${number}@`), from: 'sip:+15550001111@127.0.0.1', ...(sdp ? { sdp } : {}) });
  return new Promise((resolve) => {
    call.events.on('progress', (r) => {
      provisional.push(r.status);
      if (onProgress) {
        onProgress();
        call.cancel();
      }
    });
    call.events.on('accepted', (session, response) => resolve({ status: response.status, provisional, session, response }));
    call.events.on('failed', (status) => resolve({ status, provisional }));
  });
}

async function setup(tt: Test, options: Partial<SandboxFarEndOptions> = {}): Promise<{ farEnd: SandboxFarEnd; ports: PortPool; ua: SipUserAgent; callerPorts: PortPool }> {
  const ports = testPortPool();
  const farEnd = await SandboxFarEnd.start({ clock: systemClock, ports, ringMs: 100, announcement: tone(1000, 200), ...options });
  tt.teardown(() => farEnd.stop());
  const { ua } = await startGatewayUa(tt);
  return { farEnd, ports, ua, callerPorts: testPortPool() };
}

t.test('RFC 3261 13.2.2 / 13.3.1: 180 Ringing, then 200 OK with a G.711 answer; announcement, then echo', async (t) => {
  const { farEnd, ports, ua, callerPorts } = await setup(t);
  t.match(farEnd.uri, /^sip:127\.0\.0\.1:\d+;transport=udp$/);
  const leg = await Leg.open(t, callerPorts);
  const outcome = await dial(ua, farEnd, '+15551234567', leg.offer());
  t.same(outcome.provisional, [180], 'one 180 Ringing before the answer');
  t.equal(outcome.status, 200);
  t.match(outcome.response?.body.toString(), /m=audio \d+ RTP\/AVP 0 101/, 'PCMU and telephone-event answered');
  t.equal(farEnd.activeCalls, 1);
  leg.wire(outcome.response!.body);
  await until(() => leg.received.length >= 10, 'the announcement');
  const announcement = leg.pcm(0, 10);
  t.ok(power(announcement, 1000) > 20 * power(announcement, 400), 'the announcement is the 1 kHz tone');
  const heard = leg.received.length;
  await leg.play(tone(400, 400));
  await until(() => leg.received.length >= heard + 15, 'the echo');
  const echo = leg.pcm(heard);
  t.ok(power(echo, 400) > 20 * power(echo, 1000), 'our 400 Hz tone comes back');
  t.equal(new Set(leg.received.map((r) => r.ssrc)).size, 1, 'RFC 3550 8.2: one SSRC for announcement and echo');
  const steps = leg.received.slice(1).map((r, i) => (r.seq - leg.received[i]!.seq) & 0xffff);
  t.ok(steps.every((s) => s === 1), 'RFC 3550 5.1: sequence numbers step by one across the switch');
  t.ok(leg.received.slice(1).every((r, i) => ((r.ts - leg.received[i]!.ts) >>> 0) < 0x80000000 && r.ts !== leg.received[i]!.ts), 'timestamps keep increasing');
  t.ok(leg.received[heard]!.marker, 'RFC 3551 4.1: the echo starts with the marker bit');

  await outcome.session!.bye();
  await until(() => farEnd.activeCalls === 0, 'the call to end');
  t.equal(ports.inUse, 0, 'RTP ports returned to the pool');
});

t.test('RFC 4733 2.5: telephone-events sent into the call are echoed as events', async (t) => {
  const { farEnd, ua, callerPorts } = await setup(t, { announcement: new Int16Array(0) });
  const leg = await Leg.open(t, callerPorts);
  const outcome = await dial(ua, farEnd, '15551234567', leg.offer());
  leg.wire(outcome.response!.body);
  for (let i = 0; i < 3; i++) {
    const p = Buffer.alloc(RTP_HEADER_SIZE + 4);
    writeRtpHeader(p, 101, 100 + i, 8000, 0, i === 0);
    p.writeUInt8(5, RTP_HEADER_SIZE);
    p.writeUInt8(i === 2 ? 0x8a : 0x0a, RTP_HEADER_SIZE + 1);
    p.writeUInt16BE(160 * (i + 1), RTP_HEADER_SIZE + 2);
    leg.rtp.send(p, 2, false);
  }
  await until(() => leg.received.filter((r) => r.pt === 101).length >= 3, 'the echoed events');
  const events = leg.received.filter((r) => r.pt === 101);
  t.same(events.map((e) => e.payload[0]), [5, 5, 5], 'event 5 (digit 5) three times');
  t.equal(events[2]!.payload[1]! & 0x80, 0x80, 'the last one carries the end bit');
  t.equal(new Set(events.map((e) => e.ts)).size, 1, 'RFC 4733 2.5.1.1: one timestamp for the whole event');
  await outcome.session!.bye();
});

t.test('RFC 3264 6.1: a re-INVITE with sendonly is answered recvonly, and the far end stops sending', async (t) => {
  const { farEnd, ua, callerPorts } = await setup(t, { announcement: tone(1000, 3000) });
  const leg = await Leg.open(t, callerPorts);
  const outcome = await dial(ua, farEnd, '15551234567', leg.offer());
  leg.wire(outcome.response!.body);
  await until(() => leg.received.length >= 3, 'announcement packets');
  const hold = await outcome.session!.reinvite(leg.offer('sendonly'));
  t.equal(hold.status, 200);
  t.match('body' in hold ? hold.body.toString() : '', /a=recvonly/, 'answered recvonly');
  t.match('body' in hold ? hold.body.toString() : '', /o=sandbox \d+ 2 /, 'RFC 3264 8: a changed answer has the next o= version');
  await new Promise((r) => setTimeout(r, 100));
  const onHold = leg.received.length;
  await new Promise((r) => setTimeout(r, 200));
  t.equal(leg.received.length, onHold, 'nothing is sent while held');
  const resume = await outcome.session!.reinvite(leg.offer('sendrecv'));
  t.match('body' in resume ? resume.body.toString() : '', /a=sendrecv/, 'resume is answered sendrecv');
  await until(() => leg.received.length > onHold + 3, 'the announcement to resume');
  t.pass('the announcement resumes');
  await outcome.session!.bye();
});

t.test('RFC 3264 8: a re-INVITE with a new address moves the far end\'s RTP there', async (t) => {
  const { farEnd, ua, callerPorts } = await setup(t, { announcement: tone(1000, 3000) });
  const first = await Leg.open(t, callerPorts);
  const outcome = await dial(ua, farEnd, '15551234567', first.offer());
  first.wire(outcome.response!.body);
  await until(() => first.received.length >= 2, 'RTP at the first address');
  const second = await Leg.open(t, callerPorts);
  const moved = await outcome.session!.reinvite(second.offer());
  t.equal(moved.status, 200);
  t.match('body' in moved ? moved.body.toString() : '', /o=sandbox \d+ 1 /, 'our side did not change, so neither does the o= version');
  await until(() => second.received.length >= 3, 'RTP at the new address');
  t.pass('RTP follows the new address');
  await outcome.session!.bye();
});

t.test('RFC 3261 14.2 / RFC 3264 8: a re-INVITE offer we cannot use gets 488 and the call goes on', async (t) => {
  const { farEnd, ua, callerPorts } = await setup(t, { announcement: tone(1000, 3000) });
  const leg = await Leg.open(t, callerPorts);
  const outcome = await dial(ua, farEnd, '15551234567', leg.offer());
  leg.wire(outcome.response!.body);
  const bad = await outcome.session!.reinvite(Buffer.from('v=0\r\nnot really sdp\r\n'));
  t.equal(bad.status, 488);
  const before = leg.received.length;
  await until(() => leg.received.length > before + 3, 'RTP after the failed re-INVITE');
  t.equal(farEnd.activeCalls, 1, 'the call is still up');
  await outcome.session!.bye();
  await until(() => farEnd.activeCalls === 0, 'the call to end');
});
