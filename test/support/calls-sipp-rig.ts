/**
 * @module Outbound calls against sipp as the carrier's far end: a gateway whose carrier `far`
 * dials a sipp UAS with `-rtp_echo`, a test agent on a real WebSocket, and the RTP tap that sees
 * what the far end hears (the `calls-uas-tap.xml` scenario advertises its port instead of sipp's
 * media port: it records every packet the gateway sends, passes it on to sipp's echo port, and
 * returns the echo). Also what the tests read back: sipp's message log, call states.
 */
import type { Test } from 'tap';
import { createSocket, type Socket } from 'node:dgram';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { serializeRtp, ulawToLinear } from '../../src/engine/media/index.js';
import { FakeCustomAgent } from './fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from './gateway-harness.js';
import { mulawTone } from './audio-probe.js';
import { tempWorkdir } from './peers.js';
import { freeMediaPort, freePort, SCENARIOS, startSipp, type SippRun } from './sip-sipp.js';

const ALLOW_LOCAL_AGENTS = 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 5';
const PCMU = 0;

/** One gateway RTP leg as the relay sees it: what went to the far end, what came back. */
interface TapLeg {
  toFar: Buffer[];
  /** Whole RTP packets of other payload types the gateway sent (RFC 4733 events), in order. */
  otherToFar: Buffer[];
  fromFar: Buffer[];
  /** The relay's socket toward sipp for this leg (sipp echoes to the sender). */
  upstream: Socket;
  /** While set, the relay plays its own audio to the gateway instead of relaying sipp's echo. */
  injecting: boolean;
}

/** The RTP relay between the gateway and sipp's `-rtp_echo` port (see the module comment). */
export class RtpTap {
  readonly legs = new Map<number, TapLeg>();
  readonly #socket: Socket;
  readonly #echoPort: number;

  private constructor(socket: Socket, echoPort: number) {
    this.#socket = socket;
    this.#echoPort = echoPort;
    socket.on('message', (packet, from) => this.#fromGateway(packet, from.port));
  }

  static async open(t: Test, echoPort: number): Promise<RtpTap> {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    const tap = new RtpTap(socket, echoPort);
    t.teardown(() => tap.close());
    return tap;
  }

  get port(): number {
    return this.#socket.address().port;
  }

  /** µ-law the far end received on the leg from gateway port `gw`, from packet `from` on. */
  heardByFarEnd(gw: number, from = 0): Buffer {
    return Buffer.concat(this.legs.get(gw)?.toFar.slice(from) ?? []);
  }

  /** Sends `audio` (µ-law) to the gateway on leg `gw` as the far end, one packet per 20 ms, instead of the echo. */
  async inject(gw: number, audio: Buffer): Promise<void> {
    const leg = this.legs.get(gw);
    if (!leg) throw new Error(`no leg from gateway port ${gw}`);
    leg.injecting = true;
    const ssrc = 0x7a9ecafe;
    for (let i = 0, seq = 1; i + 160 <= audio.length; i += 160, seq++) {
      this.#socket.send(serializeRtp({ payloadType: PCMU, sequenceNumber: seq, timestamp: i, ssrc, marker: seq === 1 }, audio.subarray(i, i + 160)), gw, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  close(): void {
    for (const leg of this.legs.values()) leg.upstream.close();
    this.#socket.close();
  }

  #fromGateway(packet: Buffer, gw: number): void {
    let leg = this.legs.get(gw);
    if (!leg) {
      const upstream = createSocket('udp4');
      const created: TapLeg = { toFar: [], otherToFar: [], fromFar: [], upstream, injecting: false };
      upstream.bind(0, '127.0.0.1');
      upstream.on('message', (echo) => {
        if (created.injecting) return;
        created.fromFar.push(payloadOf(echo));
        this.#socket.send(echo, gw, '127.0.0.1');
      });
      this.legs.set(gw, created);
      leg = created;
    }
    const payloadType = packet[1]! & 0x7f;
    // Audio is what is heard; events are kept apart (RTCP, payload types 72-76 with the marker bit, is not RTP).
    if (payloadType !== PCMU) {
      if (packet.length >= 12 && (packet[1]! < 200 || packet[1]! > 204)) leg.otherToFar.push(Buffer.from(packet));
      return;
    }
    leg.toFar.push(payloadOf(packet));
    if (!leg.injecting) leg.upstream.send(packet, this.#echoPort, '127.0.0.1');
  }
}

/** RFC 3550 5.1: the payload follows 12 bytes of header and CC 32-bit CSRC entries (no extension from our sender). */
const payloadOf = (packet: Buffer): Buffer => packet.subarray(12 + 4 * (packet[0]! & 0x0f));

/** Loudest sample, linear, of µ-law audio. */
export const peak = (mulaw: Buffer): number => mulaw.reduce((max, b) => Math.max(max, Math.abs(ulawToLinear(b))), 0);

export interface Rig {
  gw: TestGateway;
  bot: FakeCustomAgent;
  sipp: SippRun;
  cwd: string;
  tap: RtpTap | null;
}

/**
 * A gateway whose live carrier `far` points at a sipp UAS running `scenario` (a file in
 * test/interop/scenarios, or `-sn uas`), with `-rtp_echo`, plus a test agent.
 */
export async function rig(t: Test, scenario: string, options: { tap?: boolean; calls?: number; codecs?: string } = {}): Promise<Rig> {
  const cwd = tempWorkdir(t);
  const [sipPort, mediaPort] = [await freePort(), await freeMediaPort()];
  const tap = options.tap ? await RtpTap.open(t, mediaPort) : null;
  const gw = await startTestGateway(t, {
    yaml: ALLOW_LOCAL_AGENTS,
    carriers: `carriers:\n  - name: far\n    outbound:\n      uri: "sip:127.0.0.1:${sipPort};transport=udp"\n    codecs: [${options.codecs ?? 'PCMU'}]\n    options_ping_s: 0\n`,
  });
  // The caller-ID policy `owned` (docs/API.md "Caller IDs"): the tenant holds the number it calls from.
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'far');
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const which = scenario === 'uas' ? ['-sn', 'uas'] : ['-sf', join(SCENARIOS, scenario)];
  const sipp = startSipp(t, cwd, [
    ...which, '-i', '127.0.0.1', '-p', String(sipPort), '-mp', String(mediaPort), '-rtp_echo', '-trace_msg',
    ...(tap ? ['-key', 'probe_port', String(tap.port)] : []), '-m', String(options.calls ?? 1), '-timeout', '60s', '-timeout_error',
  ]);
  return { gw, bot, sipp, cwd, tap };
}

/** sipp's message log (`-trace_msg`), one entry per SIP message it sent or received. */
export function sippMessages(cwd: string): string[] {
  const log = readdirSync(cwd).find((n) => n.endsWith('_messages.log'));
  return log ? readFileSync(join(cwd, log), 'utf8').split(/^-{20,}.*$/m) : [];
}

/** Request-URIs of the `method` requests sipp received, one per Call-ID (retransmissions are logged too). */
export function requestsIn(messages: string[], method: string): string[] {
  const byCallId = new Map<string, string>();
  for (const m of messages) {
    const uri = new RegExp(`^${method} (\\S+) SIP/2\\.0`, 'm').exec(m)?.[1];
    const callId = /^Call-ID:\s*(\S+)/im.exec(m)?.[1];
    if (uri && callId && m.includes('message received') && !byCallId.has(callId)) byCallId.set(callId, uri);
  }
  return [...byCallId.values()];
}

/**
 * Waits until sipp has answered the gateway's BYE, and a moment for the 200 to arrive, so the
 * test ends with the call torn down at both ends rather than racing the BYE with the teardown.
 */
export async function byeAnswered(r: Rig): Promise<void> {
  const isAnswer = (m: string): boolean => m.includes('message sent') && /^SIP\/2\.0 200 /m.test(m) && /^CSeq:\s*\d+ BYE/im.test(m);
  await waitFor('sipp answered the BYE', () => sippMessages(r.cwd).some(isAnswer));
  await sleep(200);
}

export async function callState(gw: TestGateway, id: string, state: string): Promise<ApiBody> {
  return waitFor(`call ${id} ${state}`, async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    return r.body.state === state ? r.body : undefined;
  }, 20_000);
}

export async function placeCall(r: Rig, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<{ status: number; body: ApiBody }> {
  return r.gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'far', agent_ws_url: r.bot.url, ...extra }, { key: r.gw.liveKey, headers });
}

/** Sends `ms` of a `hz` tone from the agent (the gateway paces it out). */
export function agentSays(bot: FakeCustomAgent, hz: number, ms: number): void {
  const tone = mulawTone(hz, ms);
  for (let i = 0; i < tone.length; i += 160) bot.sendAudio(tone.subarray(i, i + 160));
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The gateway's local RTP port toward the far end, from the call's live session. */
export async function gatewayRtpPort(r: Rig, id: string): Promise<number> {
  const detail = await r.gw.api('GET', `/v1/calls/${id}`, undefined, { key: r.gw.liveKey });
  const remote = (detail.body.session as { remote?: { local_rtp_port?: number } } | null)?.remote;
  if (typeof remote?.local_rtp_port !== 'number') throw new Error(`no RTP port in ${JSON.stringify(detail.body.session)}`);
  return remote.local_rtp_port;
}
