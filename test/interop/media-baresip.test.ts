/**
 * Real-peer media test: baresip A plays a flite "hello world" WAV as its microphone and calls our
 * SIP user agent; a test-only B2BUA (test/support/mini-b2bua.ts) calls baresip B and bridges the
 * two RTP legs with our MediaBridge; B records what it hears. The recording must carry the speech:
 * by normalized cross-correlation against the source, and by pocketsphinx when it is installed.
 */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { correlationPeak, samples8k } from '../support/audio-probe.js';
import { havePeer, needPeer, tempWorkdir } from '../support/peers.js';
import { startBaresip, type BaresipPeer } from '../support/baresip-peer.js';
import { startMiniB2bua, type MiniB2bua } from '../support/mini-b2bua.js';
import type { MediaBridge } from '../../src/engine/media/index.js';

const RATE = 8000;

/**
 * Pass mark for the normalized cross-correlation peak. G.711 keeps about 38 dB SNR on speech, so
 * an intact relay peaks near 0.9999 (measured: 1.000 at exactly the 0.5 s padding); another flite
 * phrase against the same recording peaks at 0.146 (checked below as a control). 0.6 sits between
 * them with room for a lost packet or a jitter-buffer gap, and still fails any recording that is
 * not this speech.
 */
const CORRELATION_PASS = 0.6;

/** Rejects with `what` after `ms`: a hang guard, never a timing assertion. */
function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), ms); });
  return Promise.race([p, guard]).finally(() => clearTimeout(timer));
}

/** What pocketsphinx hears in a 16 kHz mono WAV, restricted to a small JSGF grammar. */
function recognise(wav16k: string, dir: string): string {
  const grammar = join(dir, 'phrases.gram');
  // Competing words, so that "hello world" is an outcome the audio has to earn.
  writeFileSync(grammar, '#JSGF V1.0;\ngrammar phrases;\npublic <phrase> = (hello | goodbye | yes | no | thank you) (world | moon | there | please);\n');
  const out = execFileSync('pocketsphinx_continuous', ['-infile', wav16k, '-jsgf', grammar], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 20_000 });
  return out.trim();
}

/** baresip B (auto-answer, playing `bWav`), the B2BUA towards it, and baresip A (playing `aWav`) calling through it. */
async function bridgedCall(t: Test, dir: string, aWav: string, bWav: string, mediaenc?: 'srtp-mand'): Promise<{ a: BaresipPeer; b: BaresipPeer; b2bua: MiniB2bua; bridge: MediaBridge }> {
  const [dirA, dirB] = [join(dir, 'a'), join(dir, 'b')];
  mkdirSync(dirA);
  mkdirSync(dirB);
  const rtpBase = 31000 + 200 * Math.floor(Math.random() * 4);
  const b = await startBaresip(t, {
    dir: dirB, sourceWav: bWav, user: 'bob', autoAnswer: true, rtpPorts: `${rtpBase}-${rtpBase + 99}`, ...(mediaenc ? { mediaenc } : {}),
  });
  const b2bua = await startMiniB2bua(t, `sip:bob@127.0.0.1:${b.sipPort}`, mediaenc ? 'required' : 'disabled');
  const a = await startBaresip(t, {
    dir: dirA, sourceWav: aWav, user: 'alice', autoAnswer: false, rtpPorts: `${rtpBase + 100}-${rtpBase + 199}`,
    ...(mediaenc ? { mediaenc } : {}),
  });
  await a.command('dial', `sip:bob@127.0.0.1:${b2bua.sipPort}`);
  const bridge = await within(b2bua.bridged, 10_000, 'both legs bridged');
  t.same(b2bua.errors, [], 'the call was set up without errors');
  await a.waitFor(/established/i);
  return { a, b, b2bua, bridge };
}

/** `seconds` of silence, 8 kHz mono 16-bit (baresip hangs up when its microphone file ends). */
function silenceWav(dir: string, seconds: number): string {
  const path = join(dir, `silence-${seconds}s.wav`);
  execFileSync('sox', ['-n', '-r', String(RATE), '-c', '1', '-b', '16', path, 'trim', '0', String(seconds)]);
  return path;
}

t.test('RFC 3264 on both legs, RFC 3550 relay: baresip A speaks through our SIP UA and MediaBridge to baresip B, whose recording holds the speech', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-media-baresip-');
  const speech = join(dir, 'speech.wav');
  execFileSync('flite', ['-t', 'hello world', '-o', join(dir, 'flite.wav')]);
  execFileSync('sox', [join(dir, 'flite.wav'), '-r', String(RATE), '-c', '1', '-b', '16', speech]);
  // A plays the speech after half a second of silence, so B is already recording when it starts.
  const played = join(dir, 'played.wav');
  execFileSync('sox', [speech, played, 'pad', '0.5', '0.5']);
  // B's microphone: silence longer than any run of the test, since baresip hangs up when it ends.
  const silence = silenceWav(dir, 60);
  const source = samples8k(speech);

  const { a, b, b2bua, bridge } = await bridgedCall(t, dir, played, silence);
  // baresip's aufile source ends the call when its file runs out (menu: "audio error, end of
  // file"), so A hangs up by itself right after the speech and padding have been played.
  const first = await within(b2bua.ended, 20_000, 'the caller hanging up').catch((err: Error) => {
    throw new Error(`${err.message}: ${JSON.stringify(bridge.stats())}\nA:\n${a.output().slice(-2000)}\nB:\n${b.output().slice(-2000)}`);
  });
  t.equal(first, 'caller', 'A hung up after playing the WAV and the B2BUA ended the callee leg with BYE');
  await within(b.waitFor(/terminated|closed/i), 10_000, 'B saw the call end');
  t.equal(b2bua.dialogCount(), 0, 'both dialogs are gone');
  await Promise.all([a.stop(), b.stop()]);

  // The played file (speech plus a second of padding) in 20 ms packets, less a few for start-up.
  const packetsPlayed = Math.floor((source.length / RATE + 1) * 50) - 5;
  const stats = bridge.stats();
  t.ok(stats.a.packetsReceived >= packetsPlayed, `leg a received the caller's audio (${stats.a.packetsReceived} packets)`);
  t.ok(stats.b.packetsSent >= packetsPlayed, `leg b relayed it to the callee (${stats.b.packetsSent} packets)`);

  const recording = samples8k(b.recording());
  t.ok(recording.length >= source.length, `B recorded ${(recording.length / RATE).toFixed(2)} s`);
  const { peak, lag } = correlationPeak(source, recording);
  t.ok(peak >= CORRELATION_PASS, `normalized cross-correlation peak ${peak.toFixed(3)} at ${(lag / RATE).toFixed(3)} s (pass ${CORRELATION_PASS})`);
  // Control: another phrase by the same voice must not pass, or the measure proves nothing.
  execFileSync('flite', ['-t', 'goodbye moon', '-o', join(dir, 'control.wav')]);
  const control = correlationPeak(samples8k(join(dir, 'control.wav')), recording).peak;
  t.ok(control < CORRELATION_PASS, `a different phrase peaks at only ${control.toFixed(3)}`);

  if (!havePeer(t, 'recognising the recording', 'pocketsphinx_continuous')) return;
  const wav16k = join(dir, 'heard16k.wav');
  execFileSync('sox', [b.recording(), '-r', '16000', '-c', '1', '-b', '16', wav16k]);
  t.match(recognise(wav16k, dir), /hello world/, 'pocketsphinx hears "hello world" in B\'s recording');
  // Control: the grammar is not a foregone conclusion; the other phrase is heard as itself.
  const control16k = join(dir, 'control16k.wav');
  execFileSync('sox', [join(dir, 'control.wav'), '-r', '16000', '-c', '1', '-b', '16', control16k]);
  t.notMatch(recognise(control16k, dir), /hello world/, 'and does not hear it in the other phrase');
});

t.test('RFC 3261 15.1.2: the callee hangs up; the B2BUA answers its BYE and ends the caller leg with BYE', async (t) => {
  if (!needPeer(t, 'baresip', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-media-baresip-');
  // B's one-second microphone file makes it hang up first; A's outlasts the test.
  const { a, b, b2bua } = await bridgedCall(t, dir, silenceWav(dir, 60), silenceWav(dir, 1));
  t.equal(await within(b2bua.ended, 20_000, 'the callee hanging up'), 'callee', 'B hung up first');
  await within(a.waitFor(/terminated|closed/i), 10_000, 'A saw the call end');
  t.equal(b2bua.dialogCount(), 0, 'both dialogs are gone');
  await Promise.all([a.stop(), b.stop()]);
});

t.test('RFC 3711 on both legs: the bridge decrypts baresip A\'s SRTP and re-encrypts it for baresip B, whose recording holds the speech', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-media-baresip-');
  execFileSync('flite', ['-t', 'hello world', '-o', join(dir, 'flite.wav')]);
  const speech = join(dir, 'speech.wav');
  execFileSync('sox', [join(dir, 'flite.wav'), '-r', String(RATE), '-c', '1', '-b', '16', speech]);
  const played = join(dir, 'played.wav');
  execFileSync('sox', [speech, played, 'pad', '0.5', '0.5']);
  const { a, b, b2bua, bridge } = await bridgedCall(t, dir, played, silenceWav(dir, 60), 'srtp-mand');
  t.equal(await within(b2bua.ended, 20_000, 'the caller hanging up'), 'caller', 'A hung up when its file ended');
  await within(b.waitFor(/terminated|closed/i), 10_000, 'B saw the call end');
  await Promise.all([a.stop(), b.stop()]);
  const stats = bridge.stats();
  t.same([stats.a.srtpSuite, stats.b.srtpSuite], ['AES_CM_128_HMAC_SHA1_80', 'AES_CM_128_HMAC_SHA1_80'], 'both legs ran SRTP');
  t.same([stats.a.packetsUnauthenticated, stats.b.packetsUnauthenticated], [0, 0], 'and no RTP failed authentication');
  t.ok(stats.a.packetsReceived > 50, `leg a authenticated and decrypted A's SRTP (${stats.a.packetsReceived} packets)`);
  const { peak } = correlationPeak(samples8k(speech), samples8k(b.recording()));
  t.ok(peak >= CORRELATION_PASS, `B decrypted the relayed speech: cross-correlation peak ${peak.toFixed(3)} (pass ${CORRELATION_PASS})`);
});
