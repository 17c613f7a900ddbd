/**
 * @module The gateway's UAC early dialogs against sipp as the called side (RFC 3261 §12.1.2,
 * §13.2.2.4; RFC 3262): a reliable 180 behind a record-routing proxy, and two forks of which the
 * second answers. sipp checks the Request-URI, Route, RAck and To tag of every request it gets.
 */
import t from 'tap';
import { join } from 'node:path';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freePort, SCENARIOS, startGatewayUa, startSipp, TEST_SDP, type SippResult } from '../support/sip-sipp.js';
import type { OutboundCall, SessionDialog, SessionEndReason } from '../../src/engine/sip/index.js';

type Tap = Parameters<typeof tempWorkdir>[0] & { teardown(fn: () => void | Promise<void>): void };

interface Run {
  call: OutboundCall;
  early: SessionDialog[];
  ended: Map<SessionDialog, SessionEndReason>;
  session: SessionDialog;
  sipp: Promise<SippResult>;
}

/** Starts sipp as the UAS with `scenario`, calls it, and waits for the call to be accepted. */
async function callSipp(t: Tap, scenario: string): Promise<Run> {
  const { ua } = await startGatewayUa(t);
  const port = await freePort();
  const run = startSipp(t, tempWorkdir(t), ['-sf', join(SCENARIOS, scenario), '-i', '127.0.0.1', '-p', String(port), '-m', '1', '-timeout', '30s', '-timeout_error']);
  // sipp needs a moment to bind before the INVITE arrives (it would otherwise be lost to UDP).
  await new Promise((r) => setTimeout(r, 300));
  const call = ua.invite({ target: `sip:service@127.0.0.1:${port}`, from: 'sip:gw@127.0.0.1', sdp: TEST_SDP });
  const early: SessionDialog[] = [];
  const ended = new Map<SessionDialog, SessionEndReason>();
  call.events.on('early', (s) => {
    early.push(s);
    s.events.on('terminated', (why) => ended.set(s, why));
  });
  const session = await new Promise<SessionDialog>((resolve, reject) => {
    call.events.on('accepted', (s) => resolve(s));
    call.events.on('failed', (status) => reject(new Error(`call failed with ${status}`)));
    void run.done.then((r) => reject(new Error(`sipp ended first (${r.code}): ${r.stderr.slice(0, 1500)}`)));
  });
  return { call, early, ended, session, sipp: run.done };
}

function sippOk(r: SippResult): [boolean, string] {
  return [r.code === 0, r.code === 0 ? 'sipp exit code 0 (every check in the scenario held)' : `${r.stderr.slice(0, 400)} ${r.stdout.slice(-1500)}`];
}

t.test('RFC 3261 12.1.2 / RFC 3262 4: a reliable 180 with Record-Route is PRACKed to the remote target via the route set; ACK and BYE follow the same route', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await callSipp(t, 'uas-early-dialog-100rel.xml');
  t.equal(r.early.length, 1, 'the 180 created one early dialog');
  t.equal(r.session, r.early[0], '13.2.2.4: the 200 confirmed that early dialog');
  t.match(r.session.dialog.routeSet, [/^<sip:proxy-rr@127\.0\.0\.1:\d+;lr>$/], '12.1.2: the route set is the Record-Route');
  t.equal(await r.session.bye(), 200, 'BYE through the route set answered 200');
  t.ok(...sippOk(await r.sipp));
});

t.test('RFC 3261 13.2.2.4: two forks each get their early dialog and PRACK; the 200 from the second confirms it and ends the first', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await callSipp(t, 'uas-early-dialog-forks.xml');
  t.equal(r.early.length, 2, 'two To tags, two early dialogs');
  t.equal(r.session, r.early[1], 'the accepted session is fork B\'s early dialog');
  t.equal(r.ended.get(r.early[0] as SessionDialog), 'other-fork-answered', 'fork A\'s early dialog ended without a request');
  t.same(r.call.earlySessions, [], 'no early dialog is left');
  t.equal(await r.session.bye(), 200, 'BYE to fork B answered 200');
  t.ok(...sippOk(await r.sipp));
});
