/** @module Custom sipp scenarios (test/interop/scenarios) against the gateway's SIP stack: CANCEL, BYE in the early dialog, hold/resume, BYE from either side, REFER, digest, 491 glare. */
import t from 'tap';
import { join } from 'node:path';
import { tempWorkdir } from '../support/peers.js';
import { freePort, SCENARIOS, startGatewayUa, startSipp, TEST_SDP } from '../support/sip-sipp.js';
import { needPeer } from '../support/peers.js';
import type { SessionDialog, SipUserAgent } from '../../src/engine/sip/index.js';

/** Runs sipp as a UAC with a scenario against our UAS; returns sipp's exit code and output. */
async function sippCalls(t: Tap, ua: { udpPort: number }, scenario: string, extra: string[] = []): Promise<{ code: number | null; out: string }> {
  const cwd = tempWorkdir(t);
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, scenario), `127.0.0.1:${ua.udpPort}`, '-i', '127.0.0.1', '-p', String(await freePort()), '-m', '1', '-timeout', '30s', '-timeout_error', ...extra]);
  const r = await run.done;
  return { code: r.code, out: `${r.stderr.slice(0, 400)} ${r.stdout.slice(-1500)}` };
}

type Tap = Parameters<typeof tempWorkdir>[0] & { teardown(fn: () => void | Promise<void>): void };

/** Accepts every call and hands out the session. */
function acceptAll(ua: SipUserAgent, onSession: (s: SessionDialog) => void = () => undefined): void {
  ua.events.on('invite', (call) => {
    call.progress(180);
    const s = call.accept(TEST_SDP);
    if (s) onSession(s);
  });
}

t.test('RFC 3261 9.2: sipp cancels while ringing: 200 to CANCEL, 487 to INVITE', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua, transport } = await startGatewayUa(t);
  let cancelled = false;
  ua.events.on('invite', (call) => {
    call.progress(180);
    call.events.on('cancel', () => { cancelled = true; });
  });
  const r = await sippCalls(t, transport, 'uac-cancel.xml');
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : r.out);
  t.ok(cancelled, 'the UAS handle saw the CANCEL');
});

t.test('RFC 3261 15 / 12.1.1: sipp sends BYE in the early dialog: 200 to BYE, 487 to INVITE, reported as cancel', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua, transport } = await startGatewayUa(t);
  const ended: string[] = [];
  ua.events.on('invite', (call) => {
    call.progress(180);
    call.events.on('cancel', (req) => ended.push(req.method));
  });
  const r = await sippCalls(t, transport, 'uac-early-bye.xml');
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : r.out);
  t.same(ended, ['BYE'], 'the UAS handle saw the call end before answer');
  t.equal(ua.dialogCount, 0, 'the early dialog is gone');
});

t.test('RFC 3264 / RFC 6337: sipp puts the call on hold (sendonly, answered recvonly) and resumes it', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua, transport } = await startGatewayUa(t);
  const offers: string[] = [];
  acceptAll(ua, (s) => {
    // The media layer owns SDP; here a stand-in answers a=sendonly with a=recvonly.
    s.onOffer = (offer) => {
      const dir = /a=(sendonly|recvonly|inactive|sendrecv)/.exec(offer.toString())?.[1] ?? 'sendrecv';
      offers.push(dir);
      const answer = { sendonly: 'recvonly', recvonly: 'sendonly', inactive: 'inactive', sendrecv: 'sendrecv' }[dir] ?? 'sendrecv';
      return Buffer.from(TEST_SDP.toString().replace('a=sendrecv', `a=${answer}`));
    };
  });
  const r = await sippCalls(t, transport, 'uac-hold-resume.xml');
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : r.out);
  t.same(offers, ['sendonly', 'sendrecv']);
});

t.test('RFC 3261 15.1.1: the gateway ends the call with BYE after the ACK', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua, transport } = await startGatewayUa(t);
  const statuses: number[] = [];
  acceptAll(ua, (s) => s.events.on('ack', () => void s.bye().then((st) => statuses.push(st))));
  const r = await sippCalls(t, transport, 'uac-bye-from-gateway.xml');
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : r.out);
  t.same(statuses, [200]);
  t.equal(ua.dialogCount, 0);
});

t.test('RFC 3515: REFER received gets 202 and NOTIFY sipfrag 100 then 200 with the subscription terminated', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua, transport } = await startGatewayUa(t);
  const targets: string[] = [];
  acceptAll(ua, (s) => s.events.on('refer', (to, notifier) => {
    targets.push(to);
    setTimeout(() => void notifier.notify(200, 'OK'), 50);
  }));
  const r = await sippCalls(t, transport, 'uac-refer.xml');
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : r.out);
  t.match(targets, [/^sip:transfer-target@127\.0\.0\.1:\d+$/]);
});

for (const code of [401, 407] as const) {
  t.test(`RFC 3261 22.2 / RFC 2617: our UAC answers sipp's ${code} challenge with digest credentials and a new CSeq`, async (t) => {
    if (!needPeer(t, 'sipp')) return;
    const { ua } = await startGatewayUa(t);
    const cwd = tempWorkdir(t);
    const port = await freePort();
    const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, `uas-auth-${code}.xml`), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '30s', '-timeout_error']);
    await new Promise((r) => setTimeout(r, 300));
    const call = ua.invite({ target: `sip:service@127.0.0.1:${port}`, from: 'sip:alice@127.0.0.1', sdp: TEST_SDP, credentials: { username: 'alice', password: 's3cret' } });
    const session = await new Promise<SessionDialog>((resolve, reject) => {
      call.events.on('accepted', (s) => resolve(s));
      call.events.on('failed', (status) => reject(new Error(`call failed with ${status}`)));
    });
    t.equal(await session.bye(), 200);
    const r = await run.done;
    t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `${r.stderr.slice(0, 400)} ${r.stdout.slice(-1000)}`);
  });
}

t.test('RFC 3261 14.1 / 14.2: re-INVITE glare with sipp: we answer its re-INVITE 491, get 491 for ours, and retry after the back-off', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua } = await startGatewayUa(t);
  const cwd = tempWorkdir(t);
  const port = await freePort();
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, 'uas-glare.xml'), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '30s', '-timeout_error']);
  await new Promise((r) => setTimeout(r, 300));
  const call = ua.invite({ target: `sip:service@127.0.0.1:${port}`, from: 'sip:gw@127.0.0.1', sdp: TEST_SDP });
  const session = await new Promise<SessionDialog>((resolve, reject) => {
    call.events.on('accepted', (s) => resolve(s));
    call.events.on('failed', (status) => reject(new Error(`call failed with ${status}`)));
  });
  session.onOffer = (offer) => offer;
  const outcome = await session.reinvite(TEST_SDP);
  t.equal(outcome.status, 200, 'the retried re-INVITE succeeded');
  t.equal(await session.bye(), 200);
  const r = await run.done;
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `${r.stderr.slice(0, 400)} ${r.stdout.slice(-1200)}`);
});

t.test('RFC 3262: a reliable 183 from sipp is acknowledged with PRACK (RAck) before the 200', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua } = await startGatewayUa(t);
  const cwd = tempWorkdir(t);
  const port = await freePort();
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, 'uas-100rel.xml'), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '30s', '-timeout_error']);
  await new Promise((r) => setTimeout(r, 300));
  const call = ua.invite({ target: `sip:service@127.0.0.1:${port}`, from: 'sip:gw@127.0.0.1', sdp: TEST_SDP });
  const early: string[] = [];
  call.events.on('progress', (res) => early.push(`${res.status} ${res.body.length > 0 ? 'sdp' : ''}`.trim()));
  const session = await new Promise<SessionDialog>((resolve, reject) => {
    call.events.on('accepted', (s) => resolve(s));
    call.events.on('failed', (status) => reject(new Error(`call failed with ${status}`)));
  });
  t.same(early, ['183 sdp'], 'early media SDP reached the caller');
  t.equal(await session.bye(), 200);
  const r = await run.done;
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `${r.stderr.slice(0, 400)} ${r.stdout.slice(-1200)}`);
});

t.test('RFC 3261 10.2: outbound REGISTER answers the 401, and refreshes before the granted 4 s expire', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua } = await startGatewayUa(t);
  const cwd = tempWorkdir(t);
  const port = await freePort();
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, 'uas-register.xml'), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '30s', '-timeout_error']);
  await new Promise((r) => setTimeout(r, 300));
  const reg = ua.register({ registrar: `sip:127.0.0.1:${port}`, aor: 'sip:alice@sipp.test', credentials: { username: 'alice', password: 's3cret' }, expires: 60 });
  const granted: number[] = [];
  await new Promise<void>((resolve, reject) => {
    reg.events.on('registered', (expires) => {
      granted.push(expires);
      if (granted.length === 2) resolve();
    });
    reg.events.on('failed', (status) => reject(new Error(`REGISTER failed with ${status}`)));
  });
  t.same(granted, [4, 4], 'registered, then refreshed');
  const r = await run.done;
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `${r.stderr.slice(0, 400)} ${r.stdout.slice(-1200)}`);
  reg.stop();
});
