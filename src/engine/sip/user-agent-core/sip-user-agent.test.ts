/** @module Two user agents over real UDP and TCP sockets on 127.0.0.1: calls, in-dialog requests, CANCEL, auth. */
import t from 'tap';
import { FakeClock } from '../../../common/clock.js';
import type { TestTransport } from '../../../../test/support/sip-test-transport.js';
import { startGatewayUaOnTestTransport } from '../../../../test/support/sip-sipp.js';
import { DigestServer } from '../auth/digest-server.js';
import type { SipUserAgent} from './sip-user-agent.js';
import { type SipUserAgentOptions } from './sip-user-agent.js';
import type { SessionDialog } from '../dialogs/session-dialog.js';
import { sendInDialog } from '../dialogs/in-dialog-request.js';

interface TapTest { teardown(fn: () => void | Promise<void>): void }

const SDP_A = Buffer.from('v=0\r\no=a 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 0\r\na=sendrecv\r\n');
const SDP_B = Buffer.from('v=0\r\no=b 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 5000 RTP/AVP 0\r\na=sendrecv\r\n');

/** Two-or-more-UA tests over the minimal test transport; `tr` is the UA's transport. */
async function makeUa(t: TapTest, extra: Partial<SipUserAgentOptions> = {}): Promise<{ ua: SipUserAgent; tr: TestTransport }> {
  const { ua, transport } = await startGatewayUaOnTestTransport(t, extra);
  return { ua, tr: transport };
}


async function establish(t: TapTest, protocol: 'udp' | 'tcp' = 'udp'): Promise<{ a: SipUserAgent; b: SipUserAgent; sa: SessionDialog; sb: SessionDialog }> {
  const { ua: a } = await makeUa(t);
  const { ua: b, tr: tb } = await makeUa(t);
  const sessB = new Promise<SessionDialog>((resolve) => b.events.on('invite', (call) => {
    call.progress(180);
    const s = call.accept(SDP_B);
    if (s) resolve(s);
  }));
  const port = protocol === 'udp' ? tb.udpPort : tb.tcpPort;
  const call = a.invite({ target: `sip:bob@127.0.0.1:${port}${protocol === 'tcp' ? ';transport=tcp' : ''}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A });
  const sa = await new Promise<SessionDialog>((resolve) => call.events.on('accepted', (s) => resolve(s)));
  return { a, b, sa, sb: await sessB };
}

t.test('RFC 3261 13: INVITE, 180, 200, ACK and BYE between two UAs over UDP', async (t) => {
  const { ua: a } = await makeUa(t);
  const { ua: b, tr: tb } = await makeUa(t);
  let offer = '';
  const acked = new Promise<void>((resolve) => b.events.on('invite', (call) => {
    offer = call.offer.toString();
    call.progress(180);
    const s = call.accept(SDP_B);
    s?.events.on('ack', () => resolve());
  }));
  const call = a.invite({ target: `sip:bob@127.0.0.1:${tb.udpPort}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A });
  const progress: number[] = [];
  call.events.on('progress', (r) => progress.push(r.status));
  const accepted = new Promise<[SessionDialog, Buffer]>((resolve) => call.events.on('accepted', (s, r) => resolve([s, r.body])));
  const [sa, answer] = await accepted;
  await acked;
  t.equal(offer, SDP_A.toString());
  t.equal(answer.toString(), SDP_B.toString());
  t.same(progress, [180]);
  t.equal(b.dialogCount, 1);
  const byeSeen = new Promise<void>((resolve) => {
    const check = setInterval(() => { if (b.dialogCount === 0) { clearInterval(check); resolve(); } }, 5);
  });
  t.equal(await sa.bye(), 200);
  await byeSeen;
  t.equal(a.dialogCount, 0);
});

t.test('RFC 3261 14 / RFC 3264: far-end re-INVITE to hold answered through onOffer; INFO; REFER with NOTIFY sipfrag; BYE from the callee', async (t) => {
  const { a, sa, sb } = await establish(t);
  void a;
  sa.onOffer = (offer) => Buffer.from(offer.toString().replace('a=sendonly', 'a=recvonly'));
  const hold = await sb.reinvite(Buffer.from(SDP_B.toString().replace('a=sendrecv', 'a=sendonly')));
  t.equal(hold.status, 200);
  t.match('headers' in hold ? hold.body.toString() : '', /a=recvonly/);
  const infoSeen = new Promise((r) => sb.events.on('info', r));
  t.equal(await sa.info(Buffer.from('Signal=5\r\nDuration=160\r\n'), 'application/dtmf-relay'), 200);
  await infoSeen;
  const notifies: string[] = [];
  const gotFinal = new Promise<void>((resolve) => sa.events.on('notify', (req) => {
    notifies.push(req.body.toString().trim());
    if (/200/.test(req.body.toString())) resolve();
  }));
  sb.events.on('refer', (to, notifier) => {
    t.equal(to, 'sip:carol@127.0.0.1');
    void notifier.notify(200, 'OK');
  });
  t.equal(await sa.refer('sip:carol@127.0.0.1'), 202);
  await gotFinal;
  t.same(notifies, ['SIP/2.0 100 Trying', 'SIP/2.0 200 OK']);
  const ended = new Promise((r) => sa.events.on('terminated', r));
  t.equal(await sb.bye(), 200);
  t.equal(await ended, 'remote-bye');
});

t.test('RFC 3261 14.2: a re-INVITE while ours is pending gets 491 and ours retries after the back-off', async (t) => {
  const { sa, sb } = await establish(t, 'tcp');
  sa.onOffer = async (offer) => {
    await new Promise((r) => setTimeout(r, 50));
    return offer;
  };
  sb.onOffer = (offer) => offer;
  const first = sb.reinvite(SDP_B);
  await new Promise((r) => setTimeout(r, 10));
  const second = await sa.reinvite(SDP_A);
  t.equal(second.status, 200, 'the glare loser retried after 491 and succeeded');
  t.equal((await first).status, 200);
  await sa.bye();
});

t.test('RFC 3261 9: CANCEL while ringing gives 200 to CANCEL and 487 to the INVITE', async (t) => {
  const { ua: a } = await makeUa(t);
  const { ua: b, tr: tb } = await makeUa(t);
  const cancelled = new Promise<void>((resolve) => b.events.on('invite', (call) => {
    call.progress(180);
    call.events.on('cancel', () => resolve());
  }));
  const call = a.invite({ target: `sip:bob@127.0.0.1:${tb.udpPort}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A });
  call.events.on('progress', () => call.cancel());
  const failed = new Promise<number>((resolve) => call.events.on('failed', (s) => resolve(s)));
  t.equal(await failed, 487);
  await cancelled;
});

t.test('RFC 3261 22 / RFC 8760: inbound digest challenge, the UAC retries with credentials and a new CSeq', async (t) => {
  const server = new DigestServer({ realm: 'gw.test', clock: new FakeClock(Date.now()) });
  const { ua: a } = await makeUa(t);
  const { ua: b, tr: tb } = await makeUa(t, { inboundAuth: () => ({ server, passwordOf: (u) => (u === 'alice' ? 's3cret' : undefined) }) });
  const cseqs: number[] = [];
  b.events.on('invite', (call) => {
    cseqs.push(call.request.cseq.seq);
    call.accept(SDP_B);
  });
  const good = a.invite({ target: `sip:bob@127.0.0.1:${tb.udpPort}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A, credentials: { username: 'alice', password: 's3cret' } });
  const s = await new Promise<SessionDialog>((resolve) => good.events.on('accepted', (x) => resolve(x)));
  t.same(cseqs, [2]);
  await s.bye();
  const bad = a.invite({ target: `sip:bob@127.0.0.1:${tb.udpPort}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A, credentials: { username: 'alice', password: 'wrong' } });
  t.equal(await new Promise<number>((resolve) => bad.events.on('failed', (st) => resolve(st))), 401);
});

t.test('Protection: authorizeSource rejects with 403; OPTIONS outside a dialog gets 200 with Allow; pings report up and down', async (t) => {
  const { ua: a } = await makeUa(t);
  const { tr: tb } = await makeUa(t, { authorizeSource: () => 'reject' });
  const call = a.invite({ target: `sip:bob@127.0.0.1:${tb.udpPort}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A });
  t.equal(await new Promise<number>((resolve) => call.events.on('failed', (st) => resolve(st))), 403);
  const states: string[] = [];
  const up = new Promise<void>((resolve) => a.pingTargets({
    targets: [{ id: 'b', uri: `sip:127.0.0.1:${tb.tcpPort};transport=tcp` }, { id: 'nobody', uri: 'sip:127.0.0.1:1;transport=tcp' }],
    onTargetState: (id, state) => { states.push(`${id}:${state}`); if (states.length === 2) resolve(); },
  }));
  await up;
  t.same(states.sort(), ['b:up', 'nobody:down']);
});

t.test('RFC 3261 8.2.2.2: a second copy of an INVITE on another branch (merged request) gets 482', async (t) => {
  const { createSocket } = await import('node:dgram');
  const { ua: b, tr: tb } = await makeUa(t);
  const calls: string[] = [];
  b.events.on('invite', (call) => {
    calls.push(call.callId);
    call.progress(180);
  });
  const sock = createSocket('udp4');
  await new Promise<void>((r) => sock.bind(0, '127.0.0.1', () => r()));
  t.teardown(() => sock.close());
  const statuses: string[] = [];
  sock.on('message', (m) => statuses.push(`${/branch=(\w+)/.exec(m.toString())?.[1] ?? ''}:${m.toString().split(' ')[1] ?? ''}`));
  const port = sock.address().port;
  const invite = (branch: string): string => [
    'INVITE sip:bob@127.0.0.1 SIP/2.0', `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=${branch}`, 'Max-Forwards: 70',
    'From: <sip:alice@127.0.0.1>;tag=merge1', 'To: <sip:bob@127.0.0.1>', 'Call-ID: merged@test', 'CSeq: 7 INVITE',
    `Contact: <sip:alice@127.0.0.1:${port}>`, 'Content-Length: 0', '', '',
  ].join('\r\n');
  sock.send(invite('z9hG4bKpathA'), tb.udpPort, '127.0.0.1');
  await new Promise((r) => setTimeout(r, 100));
  sock.send(invite('z9hG4bKpathB'), tb.udpPort, '127.0.0.1');
  await new Promise((r) => setTimeout(r, 200));
  t.same(calls, ['merged@test'], 'only the first copy reached the application');
  t.ok(statuses.includes('z9hG4bKpathB:482'), `482 on the second branch (got ${statuses.join(', ')})`);
});

t.test('RFC 4028 7.4 / 9 / 10: 422 raises Session-Expires to Min-SE; the refresher re-INVITEs at half the interval with its SDP', async (t) => {
  const clock = new FakeClock(Date.now());
  const { ua: a } = await makeUa(t, { clock });
  const { ua: b, tr: tb } = await makeUa(t, { minSessionExpires: 120 });
  const seen: string[] = [];
  const refreshed = new Promise<string>((resolve) => b.events.on('invite', (call) => {
    seen.push(call.request.headers.get('Session-Expires') ?? '');
    const s = call.accept(SDP_B);
    if (s) s.onOffer = (offer) => { resolve(offer.toString()); return SDP_B; };
  }));
  const call = a.invite({ target: `sip:bob@127.0.0.1:${tb.tcpPort};transport=tcp`, from: 'sip:alice@127.0.0.1', sdp: SDP_A, sessionExpires: 90 });
  const failed = new Promise<number>((resolve) => call.events.on('failed', (st) => resolve(st)));
  const accepted = await Promise.race([new Promise<SessionDialog>((resolve) => call.events.on('accepted', (s, res) => {
    t.equal(res.headers.get('Session-Expires'), '120;refresher=uac');
    resolve(s);
  })), failed.then((st) => { throw new Error(`failed ${st}`); })]);
  t.same(seen, ['120'], 'the INVITE that reached the application carried the raised interval');
  clock.advance(60_000);
  t.equal(await refreshed, SDP_A.toString(), 'the refresh re-INVITE carried our SDP');
  await accepted.bye();
});

t.test('RFC 3261 17.1.2: an in-dialog request cut short by the user agent shutting down still settles (local 503)', async (t) => {
  const { a, b, sa } = await establish(t);
  b.dispose(); // the far end goes silent: our BYE gets no answer
  const pending = sa.bye();
  a.dispose();
  t.equal(await pending, 503, 'the BYE resolves as Service Unavailable instead of hanging');
});

t.test('RFC 3262 3: a PRACK matching no reliable provisional response gets 481', async (t) => {
  const { a, sa } = await establish(t);
  const { outcome } = await sendInDialog(sa.dialog, a, 'PRACK', { headers: [['RAck', '1 1 INVITE']] }, undefined);
  t.equal(outcome.status, 481, 'the INVITE did not require 100rel: no provisional went reliably, so nothing can be acknowledged');
});

t.test('RFC 3262 3: an INVITE requiring 100rel gets reliable provisionals in order, PRACKed, without early SDP; then the 200', async (t) => {
  const { ua: a } = await makeUa(t);
  const { ua: b, tr: tb } = await makeUa(t);
  const call = a.invite({ target: `sip:bob@127.0.0.1:${tb.udpPort}`, from: 'sip:alice@127.0.0.1', sdp: SDP_A, headers: [['Require', '100rel']] });
  const progress: { status: number; rseq: number; require: string | undefined; body: number }[] = [];
  const sawProgress = new Promise<void>((resolve) => call.events.on('progress', (r) => {
    progress.push({ status: r.status, rseq: Number(r.headers.get('RSeq')), require: r.headers.get('Require'), body: r.body.length });
    if (r.status === 183) resolve();
  }));
  b.events.on('invite', (invite) => {
    invite.progress(180);
    // Held back until the 180 is PRACKed (one outstanding at a time), and sent without its SDP.
    invite.progress(183, SDP_B);
    void sawProgress.then(() => invite.accept(SDP_B));
  });
  const accepted = new Promise<Buffer>((resolve) => call.events.on('accepted', (_s, r) => resolve(r.body)));
  t.equal((await accepted).toString(), SDP_B.toString(), 'the answer comes in the 200');
  t.same(progress.map((p) => [p.status, p.require, p.body]), [[180, '100rel', 0], [183, '100rel', 0]], 'both reliable, neither with SDP');
  t.equal(progress[1]!.rseq, progress[0]!.rseq + 1, 'RSeq counts up by one');
});

t.test('RFC 3262 3: a caller that never PRACKs gets 500 for its INVITE at 64*T1, and the UAS is told', async (t) => {
  const clock = new FakeClock();
  const { ua: b, tr: tb } = await makeUa(t, { clock });
  const failed = new Promise<number>((resolve) => b.events.on('invite', (invite) => {
    invite.events.on('failed', (status) => resolve(status));
    invite.progress(180);
    clock.advance(64 * 500);
  }));
  const statuses = await inviteFromRawSocket(t, tb.udpPort, 'z9hG4bKnoprack1', 500, [['Require', '100rel']]);
  t.equal(await failed, 500);
  t.same(statuses.filter((s) => s !== 100), [180, 180, 180, 180, 180, 180, 180, 500], 'the 180 resent at 0.5, 1.5, 3.5, 7.5, 15.5 and 31.5 s, then the 500');
});

/** Sends one INVITE from a raw UDP socket and collects the status codes that come back. */
async function inviteFromRawSocket(t: TapTest, uaPort: number, branch: string, until: number, extra: [string, string][] = []): Promise<number[]> {
  const { createSocket } = await import('node:dgram');
  const socket = createSocket('udp4');
  t.teardown(() => { socket.close(); });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const port = socket.address().port;
  const invite = [
    `INVITE sip:bob@127.0.0.1:${uaPort} SIP/2.0`, `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=${branch}`, 'Max-Forwards: 70',
    'From: <sip:alice@127.0.0.1>;tag=raw1', `To: <sip:bob@127.0.0.1:${uaPort}>`, `Call-ID: ${branch}@127.0.0.1`, 'CSeq: 1 INVITE',
    `Contact: <sip:alice@127.0.0.1:${port}>`, ...extra.map(([name, value]) => `${name}: ${value}`), 'Content-Type: application/sdp', `Content-Length: ${SDP_A.length}`, '', '',
  ].join('\r\n');
  const statuses: number[] = [];
  const done = new Promise<void>((resolve) => socket.on('message', (m) => {
    const status = Number(/^SIP\/2\.0 (\d{3})/.exec(m.toString('latin1'))?.[1]);
    statuses.push(status);
    if (status === until) resolve();
  }));
  socket.send(Buffer.concat([Buffer.from(invite, 'latin1'), SDP_A]), uaPort, '127.0.0.1');
  await done;
  return statuses;
}

t.test('RFC 3261 17.2.1: no 100 Trying when the TU answers at once; a 100 first when it answers later', async (t) => {
  const { ua, tr } = await makeUa(t);
  let later = false;
  ua.events.on('invite', (call) => {
    if (!later) call.reject(486);
    else setTimeout(() => call.reject(486), 20);
  });
  t.same(await inviteFromRawSocket(t, tr.udpPort, 'z9hG4bKsync1', 486), [486], 'answered in the listener: the 486 is the only response');
  later = true;
  t.same(await inviteFromRawSocket(t, tr.udpPort, 'z9hG4bKasync1', 486), [100, 486], 'answered after I/O: 100 Trying, then the 486');
});

t.test('RFC 3261 15.1.2: a BYE ends the dialog before its listeners run, so a B2BUA ending the call sends no BYE back on it', async (t) => {
  const { sa, sb } = await establish(t);
  const seen = new Promise<{ ended: boolean; bye: number }>((resolve) => sa.events.on('bye', () => {
    // What a B2BUA does on the far end's BYE: end every leg that is not ended yet.
    const ended = sa.isEnded;
    void sa.bye().then((bye) => resolve({ ended, bye }));
  }));
  t.equal(await sb.bye(), 200, 'the BYE was answered 200');
  t.same(await seen, { ended: true, bye: 0 }, 'the session was ended when `bye` was emitted; bye() sent nothing (0)');
});
