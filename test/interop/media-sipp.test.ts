/**
 * Real-peer media test: sipp `uac_pcap` plays the Debian g711a.pcap (PCMA) and RFC 4733 digit
 * captures into our bridge, which transcodes to PCMU (or relays PCMA) towards a sipp UAS running
 * `-rtp_echo`; the echo comes back through the bridge to the UAC. Signalling goes through a test-only shim
 * (test/support/rtp-sip-shim.ts), since the product's SIP stack is separate from this layer.
 */
import t, { type Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../src/common/clock.js';
import {
  bridgeLegOf, CODECS, createAnswer, createOffer, isPortsExhausted, MediaBridge, processAnswer, RtpSession,
  type LocalCapabilities, type NegotiatedAudio,
} from '../../src/engine/media/index.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freeMediaPort } from '../support/sip-sipp.js';
import { settle, testPortPool } from '../support/rtp-peer.js';
import { SipShim } from '../support/rtp-sip-shim.js';
import { PLAYED_DIGITS, uacPcapScenario, uasEchoScenario } from '../support/rtp-sipp-scenarios.js';

/** Packets in /usr/share/sip-tester/g711a.pcap (30 ms PCMA) and in each dtmf_2833_*.pcap. */
const SPEECH_PACKETS = 236;
const PACKETS_PER_DIGIT = 10;

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
}

/**
 * One call from the UAC through a bridge to the echoing UAS; `echoCodec` is what leg b offers the
 * UAS: PCMU makes the bridge transcode, PCMA makes it a passthrough that the media I/O relays.
 */
async function callThroughBridge(t: Test, echoCodec: typeof CODECS.PCMU | typeof CODECS.PCMA): Promise<void> {
  if (!needPeer(t, 'sipp')) return;
  const dir = tempWorkdir(t);
  symlinkSync('/usr/share/sip-tester', join(dir, 'pcap'));
  writeFileSync(join(dir, 'uac.xml'), uacPcapScenario());
  writeFileSync(join(dir, 'uas.xml'), uasEchoScenario(echoCodec.encoding));
  const ports = testPortPool();
  const open = async (): Promise<RtpSession> => {
    const s = await RtpSession.open({ clock: systemClock, ports, bindAddress: '127.0.0.1', mediaTimeoutMs: 0 });
    if (isPortsExhausted(s)) throw new Error('no RTP ports');
    t.teardown(() => s.close());
    return s;
  };
  const a = await open();
  const b = await open();
  const local = (port: number, codecs: LocalCapabilities['codecs']): LocalCapabilities => ({ address: '127.0.0.1', port, codecs, sessionId: 1, sessionVersion: 1 });
  const localA = local(a.localPort, [CODECS.PCMA, CODECS.PCMU, CODECS.TELEPHONE_EVENT]);
  const localB = local(b.localPort, [echoCodec, CODECS.TELEPHONE_EVENT]);

  const [uasSip, uasMedia, uacSip, uacMedia] = [await freeMediaPort(), await freeMediaPort(), await freeMediaPort(), await freeMediaPort()];
  const sippArgs = ['-i', '127.0.0.1', '-m', '1', '-nostdin', '-timeout', '40s', '-timeout_error'];
  const uas = spawn('sipp', ['-sf', 'uas.xml', '-p', String(uasSip), '-mp', String(uasMedia), '-rtp_echo', ...sippArgs], { cwd: dir, stdio: 'ignore' });
  t.teardown(() => { uas.kill(); });

  const shim = await SipShim.open(t);
  const digits: string[] = [];
  let bridge: MediaBridge | null = null;
  let echoFrames = 0;
  let callerBye = false;
  shim.handleInvite(async (offer) => {
    const farAnswer = processAnswer(await shim.invite(uasSip, createOffer(localB)), localB);
    const answer = createAnswer(offer, localA);
    if ('error' in farAnswer || 'error' in answer) throw new Error('negotiation failed');
    const wire = (s: RtpSession, n: NegotiatedAudio): void => s.setRemote(n.remote.rtp, { rtcp: n.remote.rtcp, rtcpMux: n.rtcpMux });
    wire(a, answer.negotiated);
    wire(b, farAnswer);
    bridge = new MediaBridge({
      clock: systemClock,
      a: bridgeLegOf(a, answer.negotiated),
      b: bridgeLegOf(b, farAnswer),
      delegate: { onDtmf: (leg, digit, via) => digits.push(`${leg}:${digit}:${via}`) },
    });
    bridge.setTap('b', 'received', (frame) => { if (frame.pcm.some((v) => v !== 0)) echoFrames++; });
    return answer.sdp;
  }, () => { callerBye = true; });

  const uac = spawn('sipp', ['-sf', 'uac.xml', `127.0.0.1:${shim.port}`, '-p', String(uacSip), '-mp', String(uacMedia), ...sippArgs], { cwd: dir, stdio: 'ignore' });
  t.teardown(() => { uac.kill(); });
  t.equal(await exited(uac), 0, 'sipp UAC completed its call');
  t.same(shim.errors, []);
  t.ok(callerBye, 'the caller hung up with BYE');
  await settle(300);
  await shim.bye();
  t.equal(await exited(uas), 0, 'sipp UAS completed its call');
  if (!bridge) {
    t.fail('no bridge was built');
    return;
  }
  const stats = (bridge as MediaBridge).stats();
  const sent = SPEECH_PACKETS + PLAYED_DIGITS.length * PACKETS_PER_DIGIT;
  t.equal(stats.a.packetsReceived, sent, 'every pcap packet reached leg a');
  t.equal(stats.b.packetsSent, sent, 'and was relayed to the echo far end');
  t.equal(stats.b.packetsReceived, sent, 'every packet came back from -rtp_echo');
  t.equal(stats.a.packetsSent, sent, 'and was relayed back to the caller');
  t.equal(stats.a.packetsDropped + stats.b.packetsDropped, 0);
  t.equal(echoFrames, SPEECH_PACKETS, 'the echoed speech decodes to non-silent PCM');
  const expected = PLAYED_DIGITS.map((d) => d.digit);
  t.same(digits.filter((d) => d.startsWith('a:')), expected.map((d) => `a:${d}:rfc4733`), 'caller digits, once each');
  t.same(digits.filter((d) => d.startsWith('b:')), expected.map((d) => `b:${d}:rfc4733`), 'echoed digits, once each');
  if (echoCodec === CODECS.PCMA) t.ok(a.relayedPackets > SPEECH_PACKETS / 2, `the caller's speech was mostly relayed by the media I/O (${a.relayedPackets} packets)`);
  else t.equal(a.relayedPackets + b.relayedPackets, 0, 'transcoding is never relayed by the media I/O');
  (bridge as MediaBridge).close();
}

t.test('sipp uac_pcap (PCMA + RFC 4733) through the bridge to sipp -rtp_echo (PCMU) and back', (t) => callThroughBridge(t, CODECS.PCMU));

t.test('the same with PCMA on both legs: a passthrough, relayed by the media I/O after each stream\'s first packet', (t) => callThroughBridge(t, CODECS.PCMA));
