/**
 * @module A BYE from another process's dialog snapshot, against sipp (docs/ARCHITECTURE.md "Process
 * roles"; RFC 3261 §12.2.1.1, §15.1.1; RFC 3326): user agent A places a call through the
 * Kamailio edge, which record-routes, stores the snapshot, sends a refresh re-INVITE, and goes away
 * without BYE; user agent B, on another port, ends the call from the snapshot through the edge. The sipp scenario checks the BYE and fails on any difference.
 */
import t from 'tap';
import { join } from 'node:path';
import { SipUserAgent, type DialogSnapshot, type SessionDialog } from '../../src/engine/sip/index.js';
import { TransportLayer } from '../../src/engine/sip/transport/transport-layer.js';
import { startKamailioEdge, type KamailioEdge } from '../support/kamailio-edge.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freePort, SCENARIOS, startGatewayUa, startSipp, TEST_SDP } from '../support/sip-sipp.js';

/** Short timers: a BYE sipp refuses to answer times out in 6.4 s (Timer F = 64*T1). */
const TIMERS = { T1: 100, T2: 400, T4: 500 };

/** A's call to the sipp callee, confirmed, its snapshot taken, then a refresh re-INVITE sent after it. */
async function callAndSnapshot(ua: SipUserAgent, sippPort: number, edge: KamailioEdge): Promise<{ session: SessionDialog; snapshot: DialogSnapshot }> {
  const call = ua.invite({ target: `sip:callee@127.0.0.1:${sippPort}`, from: 'sip:gw@127.0.0.1', sdp: TEST_SDP, proxy: `sip:${edge.ip}:${edge.port}` });
  const session = await new Promise<SessionDialog>((resolve, reject) => {
    call.events.on('accepted', (s) => resolve(s));
    call.events.on('failed', (status) => reject(new Error(`the call failed with ${status}`)));
  });
  // Stored as the owner stores it: JSON, read back in another process.
  const snapshot = JSON.parse(JSON.stringify(session.snapshot())) as DialogSnapshot;
  const refresh = await session.reinvite(TEST_SDP);
  if (refresh.status !== 200) throw new Error(`the refresh got ${refresh.status}`);
  return { session, snapshot };
}

/** User agent A on its own transport layer, which the test stops without any BYE (the owner dies). */
async function startOwner(): Promise<{ ua: SipUserAgent; die: () => Promise<void> }> {
  const up: { ua?: SipUserAgent } = {};
  const layer = new TransportLayer({ listen: [{ protocol: 'UDP', host: '127.0.0.1', port: 0 }], delegate: { onMessage: (m, s) => up.ua?.receive(m, s) } });
  await layer.start();
  const ua = new SipUserAgent({ transport: layer, timers: TIMERS });
  up.ua = ua;
  let dead = false;
  const die = async (): Promise<void> => {
    if (dead) return;
    dead = true;
    ua.dispose();
    await layer.stop();
  };
  return { ua, die };
}

t.test('docs/ARCHITECTURE.md "Process roles": another engine ends a dead engine\'s call with a BYE from the snapshot; sipp checks Call-ID, tags, the edge, CSeq and Reason', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const edge = await startKamailioEdge(t, { ip: '127.0.0.1', port: await freePort() });
  const cwd = tempWorkdir(t);
  const sippPort = await freePort();
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, 'uas-bye-from-snapshot.xml'), '-i', '127.0.0.1', '-p', String(sippPort), '-m', '1', '-timeout', '30s', '-timeout_error']);
  await new Promise((r) => setTimeout(r, 300));
  const owner = await startOwner();
  t.teardown(owner.die);
  const { session, snapshot } = await callAndSnapshot(owner.ua, sippPort, edge);
  t.equal(snapshot.transport, 'UDP');
  t.match(snapshot.routeSet, [new RegExp(`^<sip:${edge.ip}:${edge.port};`)], 'the route set is the edge');
  await owner.die();
  t.equal(session.dialog.localSeq, snapshot.localSeq + 1, 'the owner sent a request after the snapshot');

  const { ua: survivor } = await startGatewayUa(t, { timers: TIMERS });
  const outcome = await survivor.byeFromSnapshot(snapshot);
  t.equal(outcome.status, 200, 'the callee answered the BYE 200, through the edge');
  t.ok(outcome.request.cseq.seq > session.dialog.localSeq, 'the BYE CSeq is above the refresh');
  const r = await run.done;
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `sipp exit code (stderr: ${r.stderr.slice(0, 400)})`);
});

t.test('docs/ARCHITECTURE.md "Process roles": the sipp callee fails a BYE whose remote tag is not its dialog\'s, so the check above can fail', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const edge = await startKamailioEdge(t, { ip: '127.0.0.1', port: await freePort() });
  const cwd = tempWorkdir(t);
  const sippPort = await freePort();
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, 'uas-bye-from-snapshot.xml'), '-i', '127.0.0.1', '-p', String(sippPort), '-m', '1', '-timeout', '30s', '-timeout_error']);
  await new Promise((r) => setTimeout(r, 300));
  const owner = await startOwner();
  t.teardown(owner.die);
  const { snapshot } = await callAndSnapshot(owner.ua, sippPort, edge);
  await owner.die();
  const { ua: survivor } = await startGatewayUa(t, { timers: TIMERS });
  await survivor.byeFromSnapshot({ ...snapshot, remoteTag: 'not-the-callee' });
  const r = await run.done;
  t.not(r.code, 0, 'sipp counts the call failed');
  t.match(r.stderr, /Failed regexp match/, 'on the BYE check, not for another reason');
});
