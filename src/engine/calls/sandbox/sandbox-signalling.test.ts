/**
 * Sandbox far end signalling over loopback: reserved numbers, CANCEL, bad offers, the call
 * limit, late offers, TCP and shutdown. Waits are hang guards only, never timing assertions.
 */
import t, { type Test } from 'tap';
import { systemClock } from '../../../common/clock.js';
import type { PortPool } from '../../media/index.js';
import type { SessionDialog, SipUserAgent } from '../../sip/index.js';
import { startGatewayUa, TEST_SDP } from '../../../../test/support/sip-sipp.js';
import { testPortPool } from '../../../../test/support/rtp-peer.js';
import { SandboxFarEnd, type SandboxFarEndOptions } from './sandbox-far-end.js';

async function until(check: () => boolean, what: string, ms = 5000): Promise<void> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

interface Outcome {
  status: number;
  provisional: number[];
  body: string;
  session?: SessionDialog;
}

interface DialOptions {
  sdp?: Buffer | null;
  /** Cancel once the first provisional response arrives. */
  cancelOnRinging?: boolean;
  uri?: string;
}

function dial(ua: SipUserAgent, farEnd: SandboxFarEnd, number: string, o: DialOptions = {}): Promise<Outcome> {
  const provisional: number[] = [];
  const sdp = o.sdp === undefined ? TEST_SDP : o.sdp;
  const target = (o.uri ?? farEnd.uri).replace('sip:', `sip:${number}@`);
  const call = ua.invite({ target, from: 'sip:+15550001111@127.0.0.1', ...(sdp ? { sdp } : {}) });
  return new Promise((resolve) => {
    call.events.on('progress', (r) => {
      provisional.push(r.status);
      if (o.cancelOnRinging) call.cancel();
    });
    call.events.on('accepted', (session, r) => resolve({ status: r.status, provisional, body: r.body.toString(), session }));
    call.events.on('failed', (status) => resolve({ status, provisional, body: '' }));
  });
}

async function setup(tt: Test, options: Partial<SandboxFarEndOptions> = {}): Promise<{ farEnd: SandboxFarEnd; ports: PortPool; ua: SipUserAgent }> {
  const ports = testPortPool();
  const farEnd = await SandboxFarEnd.start({ clock: systemClock, ports, ringMs: 50, announcement: new Int16Array(800), ...options });
  tt.teardown(() => farEnd.stop());
  const { ua } = await startGatewayUa(tt);
  return { farEnd, ports, ua };
}

t.test('reserved numbers fail on purpose, with or without the +', async (t) => {
  const { farEnd, ports, ua } = await setup(t);
  const cases: [string, number, number[]][] = [
    ['+15005550486', 486, []],
    ['15005550404', 404, []],
    ['+15005550503', 503, []],
    ['15005550603', 603, []],
    ['+15005550480', 480, [180]],
  ];
  for (const [number, status, provisional] of cases) {
    const outcome = await dial(ua, farEnd, number);
    t.equal(outcome.status, status, `RFC 3261 21: ${number} gets ${status}`);
    t.same(outcome.provisional, provisional, provisional.length ? 'after ringing' : 'without ringing');
  }
  await until(() => farEnd.activeCalls === 0, 'no call left');
  t.equal(ports.inUse, 0, 'no RTP port was taken');
});

t.test('RFC 3261 9.2: CANCEL while ringing gets 487 and leaves nothing behind', async (t) => {
  const { farEnd, ua } = await setup(t);
  const outcome = await dial(ua, farEnd, '+15005550408', { cancelOnRinging: true });
  t.same(outcome.provisional, [180]);
  t.equal(outcome.status, 487);
  await until(() => farEnd.activeCalls === 0, 'the call to be forgotten');
  t.pass('activeCalls back to 0');
});

t.test('RFC 3261 21.4.26: a malformed or unusable SDP offer gets 488 without ringing', async (t) => {
  const { farEnd, ua } = await setup(t);
  const garbage = await dial(ua, farEnd, '15551234567', { sdp: Buffer.from('this is not sdp') });
  t.equal(garbage.status, 488);
  t.same(garbage.provisional, []);
  const g722Only = Buffer.from(TEST_SDP.toString().replace('RTP/AVP 0', 'RTP/AVP 9').replace('a=rtpmap:0 PCMU/8000', 'a=rtpmap:9 G722/8000'));
  t.equal((await dial(ua, farEnd, '15551234567', { sdp: g722Only })).status, 488, 'no codec in common');
  t.equal(farEnd.activeCalls, 0);
});

t.test('after maxCallMs the far end hangs up with BYE and releases its ports', async (t) => {
  const { farEnd, ports, ua } = await setup(t, { maxCallMs: 300 });
  const outcome = await dial(ua, farEnd, '15551234567');
  t.equal(outcome.status, 200);
  const bye = new Promise<string>((resolve) => outcome.session!.events.on('terminated', resolve));
  t.equal(await bye, 'remote-bye', 'RFC 3261 15.1.2: the far end sent BYE');
  await until(() => farEnd.activeCalls === 0, 'the call to end');
  t.equal(ports.inUse, 0);
});

t.test('RFC 3261 13.2.1: an INVITE without SDP gets our offer in the 200; an ACK without answer ends it', async (t) => {
  const { farEnd, ua } = await setup(t);
  const outcome = await dial(ua, farEnd, '15551234567', { sdp: null });
  t.equal(outcome.status, 200);
  t.match(outcome.body, /m=audio \d+ RTP\/AVP 0 8 101/, 'the offer lists PCMU, PCMA and telephone-event');
  const ended = new Promise<string>((resolve) => outcome.session!.events.on('terminated', resolve));
  t.equal(await ended, 'remote-bye', 'RFC 3264 4: no answer in the ACK, so the far end says BYE');
  await until(() => farEnd.activeCalls === 0, 'the call to end');
});

t.test('the same port takes INVITEs over TCP', async (t) => {
  const { farEnd, ua } = await setup(t);
  t.equal(farEnd.tcpUri.replace(';transport=tcp', ''), farEnd.uri.replace(';transport=udp', ''), 'one host:port for UDP and TCP');
  const outcome = await dial(ua, farEnd, '15551234567', { uri: farEnd.tcpUri });
  t.equal(outcome.status, 200);
  await outcome.session!.bye();
  await until(() => farEnd.activeCalls === 0, 'the call to end');
});

t.test('stop() sends BYE on answered calls and 503 to ringing ones', async (t) => {
  const { farEnd, ports, ua } = await setup(t, { ringMs: 200 });
  const answered = await dial(ua, farEnd, '15551234567');
  const ended = new Promise<string>((resolve) => answered.session!.events.on('terminated', resolve));
  const ringing = dial(ua, farEnd, '+15005550408');
  await until(() => farEnd.activeCalls === 2, 'both calls');
  await farEnd.stop();
  t.equal(await ended, 'remote-bye', 'the answered call got BYE');
  t.equal((await ringing).status, 503, 'the ringing call got 503');
  t.equal(farEnd.activeCalls, 0);
  t.equal(ports.inUse, 0);
});
