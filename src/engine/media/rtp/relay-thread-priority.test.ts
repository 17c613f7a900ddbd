/**
 * `rtp.relay_thread_priority`: the relay thread in SCHED_RR (sched(7)) when the kernel allows it,
 * time-sharing when it refuses, and relaying either way; the event loop is never real-time.
 */
import { readFileSync } from 'node:fs';
import t from 'tap';
import { mediaIoAddonPath, runChild } from '../../../../test/support/child-node.js';
import { NativeMediaIo, nativeMediaIo } from './native-udp.js';
import { needAvailable } from '../../../../test/support/peers.js';

const built = nativeMediaIo() !== null;
const SCHED_OTHER = 0;
const SCHED_RR = 2;
const EPERM = 1;

interface Seen {
  probe: number;
  relayed: number;
  relay: { policy: number; priority: number } | null;
  loop: { policy: number; priority: number };
}

/**
 * In a child: probes SCHED_RR `priority`, starts the addon with it whatever the probe said, relays
 * two packets (the second by the relay thread), then reads both threads' policy from /proc.
 */
function script(priority: number): string {
  return `
    const io = require(${JSON.stringify(mediaIoAddonPath)});
    const dgram = require('node:dgram');
    const { readFileSync, readdirSync } = require('node:fs');
    const probe = io.probeRelayPriority(${priority});
    const arena = Buffer.alloc(io.MAX_BATCH * io.SLOT_BYTES), meta = new Uint32Array(io.MAX_BATCH * io.META_STRIDE);
    io.init(() => {}, arena, meta, false, new Uint32Array(1 + io.MAX_RECORDS * io.RECORD_STRIDE), true, ${priority});
    const a = io.open(0x7f000001, 0, 1), b = io.open(0x7f000001, 0, 2);
    const caller = dgram.createSocket('udp4'), far = dgram.createSocket('udp4');
    // sched(7) fields of /proc/<pid>/task/<tid>/stat: rt_priority is the 40th, policy the 41st.
    const sched = (tid) => {
      const fields = readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ');
      return { priority: Number(fields[37]), policy: Number(fields[38]) };
    };
    const thread = (name) => readdirSync('/proc/self/task').find((tid) => readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim() === name);
    const rtp = (seq) => { const p = Buffer.alloc(172); p[0] = 0x80; p.writeUInt16BE(seq, 2); p.writeUInt32BE(0xabc, 8); return p; };
    let relayed = 0;
    far.on('message', () => {
      if (++relayed === 1) return setTimeout(() => caller.send(rtp(2), io.localPort(a), '127.0.0.1'), 50);
      const tid = thread('media-relay');
      console.log(JSON.stringify({ probe, relayed, relay: tid === undefined ? null : sched(tid), loop: sched(process.pid) }));
      process.exit(0);
    });
    caller.bind(0, '127.0.0.1', () => far.bind(0, '127.0.0.1', () => {
      const rule = Uint32Array.of(0x7f000001, caller.address().port, 0xabc, 0, b, 0x7f000001, far.address().port, 0x123, 0, 0, 0);
      if (io.relay(a, rule) !== 0) throw new Error('rule refused');
      caller.send(rtp(1), io.localPort(a), '127.0.0.1');
    }));
  `;
}

/** Whether this process may use SCHED_RR 10 (sched(7)): CAP_SYS_NICE, or an RLIMIT_RTPRIO of 10 or more. */
function mayRunRealtime(): boolean {
  const capEff = BigInt('0x' + /^CapEff:\s*([0-9a-f]+)/m.exec(readFileSync('/proc/self/status', 'utf8'))![1]!);
  const rtprio = /^Max realtime priority\s+(\S+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))![1]!;
  return (capEff & (1n << 23n)) !== 0n || rtprio === 'unlimited' || Number(rtprio) >= 10;
}

t.test('priority 10 where the kernel allows it: the relay thread is SCHED_RR 10, the loop time-sharing (sched(7))', async (t) => {
  if (!needAvailable(t, built, 'needs the media I/O addon (npm run build:native)')) return;
  const seen = JSON.parse(await runChild(script(10))) as Seen;
  const allowed = mayRunRealtime();
  t.equal(seen.probe, allowed ? 0 : EPERM, 'the probe answers as sched(7) says for this process');
  t.equal(seen.relayed, 2, 'both packets relayed');
  t.same(seen.relay, allowed ? { policy: SCHED_RR, priority: 10 } : { policy: SCHED_OTHER, priority: 0 }, 'the media-relay thread');
  t.same(seen.loop, { policy: SCHED_OTHER, priority: 0 }, 'the event loop is never real-time');
});

t.test('refused (no CAP_SYS_NICE, RLIMIT_RTPRIO 0): EPERM, and the relay thread relays time-sharing', async (t) => {
  if (!needAvailable(t, built, 'needs the media I/O addon (npm run build:native)')) return;
  // prlimit(1) and setpriv(1) (util-linux) take the privilege away; root keeps CAP_SYS_NICE otherwise.
  const drop = process.getuid?.() === 0 ? ['setpriv', '--inh-caps=-sys_nice', '--bounding-set=-sys_nice'] : [];
  const seen = JSON.parse(await runChild(script(10), 5000, ['prlimit', '--rtprio=0', ...drop])) as Seen;
  t.equal(seen.probe, EPERM, 'the probe says EPERM');
  t.equal(seen.relayed, 2, 'both packets relayed all the same');
  t.same(seen.relay, { policy: SCHED_OTHER, priority: 0 }, 'the media-relay thread runs time-sharing');
});

/** The addon's surface as NativeMediaIo calls it, with the kernel's answer to the probe chosen. */
function fakeAddon(probeAnswer: number): { addon: ConstructorParameters<typeof NativeMediaIo>[0]; initPriority: () => number | undefined; probes: number[] } {
  let initPriority: number | undefined;
  const probes: number[] = [];
  const addon = {
    MAX_BATCH: 1, SLOT_BYTES: 1, META_STRIDE: 5, MAX_RECORDS: 1, RECORD_STRIDE: 6,
    init: (...args: unknown[]) => void (initPriority = args[6] as number),
    probeRelayPriority: (priority: number) => (probes.push(priority), probeAnswer),
    open: () => -1, localPort: () => 0, send: () => 0, close: () => undefined, relay: () => 0, takeRelayed: () => 0,
  };
  return { addon, initPriority: () => initPriority, probes };
}

t.test('NativeMediaIo passes a granted priority on, and a refused one as 0 with the errno name', (t) => {
  const granted = fakeAddon(0);
  const io = new NativeMediaIo(granted.addon, { relayThreadPriority: 10 });
  t.same(granted.probes, [10], 'asked the kernel once, up front');
  t.equal(granted.initPriority(), 10);
  t.equal(io.relayPriorityRefused, null);

  const refused = fakeAddon(EPERM);
  const fallback = new NativeMediaIo(refused.addon, { relayThreadPriority: 10 });
  t.equal(refused.initPriority(), 0, 'time-sharing, rather than failing at the first relayed call');
  t.equal(fallback.relayPriorityRefused, 'EPERM');

  const none = fakeAddon(EPERM);
  new NativeMediaIo(none.addon, {});
  t.same(none.probes, [], 'priority 0 asks nothing');
  const off = fakeAddon(EPERM);
  new NativeMediaIo(off.addon, { relayThread: false, relayThreadPriority: 10 });
  t.same(off.probes, [], 'without the relay thread there is nothing to prioritise');

  t.throws(() => new NativeMediaIo(fakeAddon(0).addon, { relayThreadPriority: 100 }), RangeError, 'SCHED_RR priorities are 1 to 99');
  t.end();
});
