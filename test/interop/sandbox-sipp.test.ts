/**
 * @module sipp as a real caller of the sandbox carrier's far end: the stock `uac` scenario over
 * UDP and TCP, and `uac_pcap`, which sends PCMA speech and RFC 4733 digits into the call.
 */
import t, { type Test } from 'tap';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../src/common/clock.js';
import { SandboxFarEnd } from '../../src/engine/calls/sandbox/sandbox-far-end.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { testPortPool } from '../support/rtp-peer.js';
import { freeMediaPort, freePort, startSipp } from '../support/sip-sipp.js';

/** A 1 kHz tone, 300 ms, as the announcement. */
const ANNOUNCEMENT = Int16Array.from({ length: 2400 }, (_, n) => Math.round(8000 * Math.sin((2 * Math.PI * 1000 * n) / 8000)));

async function startFarEnd(tt: Test): Promise<{ farEnd: SandboxFarEnd; portsInUse: () => number }> {
  const ports = testPortPool();
  const farEnd = await SandboxFarEnd.start({ clock: systemClock, ports, ringMs: 100, announcement: ANNOUNCEMENT });
  tt.teardown(() => farEnd.stop());
  return { farEnd, portsInUse: () => ports.inUse };
}

const hostPort = (uri: string): string => uri.replace(/^sip:/, '').replace(/;.*$/, '');

for (const [flag, name] of [['u1', 'UDP'], ['t1', 'TCP']] as const) {
  t.test(`RFC 3261 13/15: sipp uac calls the sandbox over ${name}: INVITE, 180, 200, ACK, BYE, 200`, async (t) => {
    if (!needPeer(t, 'sipp')) return;
    const { farEnd, portsInUse } = await startFarEnd(t);
    const cwd = tempWorkdir(t);
    const run = startSipp(t, cwd, [
      '-sn', 'uac', hostPort(flag === 'u1' ? farEnd.uri : farEnd.tcpUri), '-s', '+15551234567', '-t', flag, '-i', '127.0.0.1',
      '-p', String(await freePort()), '-mp', String(await freeMediaPort()), '-m', '3', '-r', '10', '-d', '500', '-timeout', '30s', '-timeout_error',
    ]);
    const r = await run.done;
    t.equal(r.code, 0, r.code === 0 ? 'every call completed' : `sipp exit code ${r.code} (stderr: ${r.stderr.slice(0, 300)})`);
    t.equal(farEnd.activeCalls, 0, 'no call left at the far end');
    t.equal(portsInUse(), 0, 'RTP ports released');
  });
}

t.test('sipp uac_pcap sends PCMA speech and RFC 4733 digits into a sandbox call, which completes', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const { farEnd, portsInUse } = await startFarEnd(t);
  const cwd = tempWorkdir(t);
  // The scenario names its captures relative to the working folder.
  symlinkSync('/usr/share/sip-tester', join(cwd, 'pcap'));
  const run = startSipp(t, cwd, [
    '-sn', 'uac_pcap', hostPort(farEnd.uri), '-s', '15551234567', '-i', '127.0.0.1',
    '-p', String(await freePort()), '-mp', String(await freeMediaPort()), '-m', '1', '-timeout', '40s', '-timeout_error',
  ]);
  const r = await run.done;
  t.equal(r.code, 0, r.code === 0 ? 'the call completed' : `sipp exit code ${r.code} (stderr: ${r.stderr.slice(0, 300)})`);
  t.equal(farEnd.activeCalls, 0);
  t.equal(portsInUse(), 0);
});
