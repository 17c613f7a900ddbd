/**
 * @module Secure-call helpers for the SRTP and TLS interop tests: flite speech as samples and as a
 * WAV for baresip, µ-law conversions, the carrier leg of a call detail, a baresip phone requiring
 * SRTP, and self-signed certificates for loopback.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Test } from 'tap';
import { linearToUlaw, ulawToLinear } from '../../src/engine/media/index.js';
import { samples8k } from './audio-probe.js';
import { startBaresip, type BaresipPeer } from './baresip-peer.js';
import { waitFor, type ApiBody, type TestGateway } from './gateway-harness.js';

/** See test/interop/media-baresip.test.ts: an intact G.711 relay peaks near 1.0, other speech near 0.15. */
export const CORRELATION_PASS = 0.6;

/** flite's "hello world" as 8 kHz samples, and as a WAV with `before` s of silence ahead and `after` s behind. */
export function speech(dir: string, before: number, after: number): { samples: Int16Array; wav: string } {
  execFileSync('flite', ['-t', 'hello world', '-o', join(dir, 'flite.wav')]);
  const plain = join(dir, 'speech.wav');
  execFileSync('sox', [join(dir, 'flite.wav'), '-r', '8000', '-c', '1', '-b', '16', plain]);
  const wav = join(dir, 'played.wav');
  execFileSync('sox', [plain, wav, 'pad', String(before), String(after)]);
  return { samples: samples8k(plain), wav };
}

export const mulaw = (samples: Int16Array): Buffer => Buffer.from(Array.from(samples, (s) => linearToUlaw(s)));
export const linear = (audio: Buffer): Int16Array => Int16Array.from(audio, (b) => ulawToLinear(b));

/** The carrier leg of a call detail's session view (`session.remote`), empty when there is none. */
export function remoteLeg(detail: ApiBody): Record<string, unknown> {
  return ((detail.session as { remote?: Record<string, unknown> } | null)?.remote) ?? {};
}

/** A baresip requiring SRTP (RTP/SAVP with SDES keys), playing `wav`, its folder `name` in `dir`. */
export async function startPhone(t: Test, dir: string, name: string, wav: string, autoAnswer: boolean, rtpBase: number): Promise<BaresipPeer> {
  const phoneDir = join(dir, name);
  mkdirSync(phoneDir);
  return startBaresip(t, {
    dir: phoneDir, sourceWav: wav, user: name, autoAnswer, rtpPorts: `${rtpBase}-${rtpBase + 99}`, mediaenc: 'srtp-mand',
  });
}

/** A self-signed certificate for 127.0.0.1 (IP SAN) in `dir` as `name`-cert.pem and `name`-key.pem, made with the openssl CLI. */
export function selfSigned(dir: string, name: string): { cert: string; key: string } {
  const [cert, key] = [join(dir, `${name}-cert.pem`), join(dir, `${name}-key.pem`)];
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert], { stdio: 'ignore' });
  return { cert, key };
}

/** `seconds` of silence as an 8 kHz mono WAV in `dir` (baresip hangs up when its file ends). */
export function silenceWav(dir: string, seconds: number): string {
  const path = join(dir, `silence-${seconds}s.wav`);
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', path, 'trim', '0', String(seconds)]);
  return path;
}

/** The detail of the answered inbound call to `did`, once there is one. */
export function activeInboundCall(gw: TestGateway, did: string): Promise<ApiBody> {
  return waitFor(`the inbound call to ${did}`, async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound&state=active', undefined, { key: gw.liveKey });
    const call = r.body.data.find((c) => c.to === did);
    return call && (await gw.api('GET', `/v1/calls/${call.id}`, undefined, { key: gw.liveKey })).body;
  });
}
