/** @module sipp's built-in uac and uas scenarios against the gateway's SIP stack over UDP and TCP, with and without packet loss. */
import t from 'tap';
import type { SessionDialog } from '../../src/engine/sip/index.js';
import { tempWorkdir } from '../support/peers.js';
import { freePort, startGatewayUa, startSipp, TEST_SDP } from '../support/sip-sipp.js';
import { needPeer } from '../support/peers.js';

for (const transport of ['u1', 't1'] as const) {
  t.test(`RFC 3261 13/15: sipp uac calls our UAS over ${transport === 'u1' ? 'UDP' : 'TCP'}: INVITE, 100, 200, ACK, BYE, 200`, async (t) => {
    if (!needPeer(t, 'sipp')) return;
    const { ua, transport: tr } = await startGatewayUa(t);
    let invites = 0;
    ua.events.on('invite', (call) => {
      invites++;
      call.progress(180);
      call.accept(TEST_SDP);
    });
    const cwd = tempWorkdir(t);
    const sippPort = await freePort();
    const port = transport === 'u1' ? tr.udpPort : tr.tcpPort;
    const run = startSipp(t, cwd, ['-sn', 'uac', `127.0.0.1:${port}`, '-t', transport, '-i', '127.0.0.1', '-p', String(sippPort), '-m', '10', '-r', '20', '-d', '50', '-timeout', '30s', '-timeout_error']);
    const r = await run.done;
    t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `sipp exit code (stderr: ${r.stderr.slice(0, 300)})`);
    t.equal(invites, 10);
    t.equal(ua.dialogCount, 0, 'every dialog ended with the BYE');
  });
}

t.test('RFC 3261 17: sipp uac with 10 % UDP loss still completes every call through retransmissions', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua, transport: tr } = await startGatewayUa(t, { timers: { T1: 100, T2: 400, T4: 500 } });
  ua.events.on('invite', (call) => call.accept(TEST_SDP));
  const cwd = tempWorkdir(t);
  const sippPort = await freePort();
  const run = startSipp(t, cwd, ['-sn', 'uac', `127.0.0.1:${tr.udpPort}`, '-i', '127.0.0.1', '-p', String(sippPort), '-m', '20', '-r', '20', '-d', '50', '-lost', '10', '-T2', '400', '-timeout', '60s', '-timeout_error', '-trace_stat', '-fd', '1']);
  const r = await run.done;
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `sipp exit code: every call completed (stderr: ${r.stderr.slice(0, 300)})`);
});

t.test('RFC 3261 13.2: our UAC calls sipp uas: INVITE, 180, 200, ACK, then our BYE', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { ua } = await startGatewayUa(t);
  const cwd = tempWorkdir(t);
  const sippPort = await freePort();
  const run = startSipp(t, cwd, ['-sn', 'uas', '-i', '127.0.0.1', '-p', String(sippPort), '-m', '1', '-timeout', '30s', '-timeout_error']);
  await new Promise((r) => setTimeout(r, 300));
  const call = ua.invite({ target: `sip:service@127.0.0.1:${sippPort}`, from: 'sip:gw@127.0.0.1', sdp: TEST_SDP });
  const progress: number[] = [];
  call.events.on('progress', (res) => progress.push(res.status));
  const session = await new Promise<SessionDialog>((resolve, reject) => {
    call.events.on('accepted', (s) => resolve(s));
    call.events.on('failed', (status) => reject(new Error(`failed ${status}`)));
  });
  t.same(progress, [180]);
  t.equal(await session.bye(), 200);
  const r = await run.done;
  t.equal(r.code, 0, r.code === 0 ? 'sipp exit code 0' : `sipp exit code (stderr: ${r.stderr.slice(0, 300)})`);
});
