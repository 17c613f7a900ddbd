/** @module Writes the media relay section of docs/PERFORMANCE.md, leaving other sections alone. */
import { writeSection } from '../performance-doc.js';
import { cpus } from 'node:os';

export const HEADING = '## Media relay (`npm run bench:media`)';

/** Medians over the runs of one target. */
export interface Summary {
  target: string;
  runs: number;
  cpuMsPer1000: number;
  relayCores: number;
  generatorCores: number;
  deliveredPct: number;
  p50: number;
  p99: number;
  max: number;
  ppsIn: number;
  /** Share of due packets the generator could not send on time: above 10 % the load was not offered. */
  skippedPct: number;
  load: number;
  perRun: { cpuMsPer1000: number; deliveredPct: number; p99: number }[];
}

/** All targets measured at one call count. */
export interface ConfigResult {
  calls: number;
  summaries: Summary[];
}

export interface BenchReport {
  /** When the run started (ISO 8601); the section is dated by it. */
  measuredAt: string;
  runs: number;
  windowS: number;
  warmupS: number;
  cpuModel: string;
  configs: ConfigResult[];
}

const f = (n: number, digits = 3): string => n.toFixed(digits);

const NAMES: Record<string, string> = {
  ours: 'voice-gateway relay (Node, media I/O addon)',
  'ours-rt': 'voice-gateway relay, relay thread in SCHED_RR 10',
  'ours-loop': 'voice-gateway relay, addon without its relay thread',
  'ours-dgram': 'voice-gateway relay on node:dgram',
  naive: 'naive Node forwarder (no RTP logic)',
  'c-floor': 'C forwarder (no RTP logic; the kernel\'s floor)',
  rtpengine: 'rtpengine 10.5 userspace',
  'rtpengine-rt': 'rtpengine 10.5 userspace, threads in SCHED_RR 10',
  direct: 'no relay (generator to itself)',
};

function renderConfig(c: ConfigResult): string[] {
  const ours = c.summaries.find((s) => s.target === 'ours');
  const theirs = c.summaries.find((s) => s.target === 'rtpengine');
  const realtime = c.summaries.find((s) => s.target === 'ours-rt');
  const ratio = ours && theirs ? ours.cpuMsPer1000 / theirs.cpuMsPer1000 : null;
  const rows = c.summaries.map((s) =>
    `| ${NAMES[s.target] ?? s.target} | ${s.target === 'direct' ? '-' : f(s.cpuMsPer1000)} | ${s.target === 'direct' ? '-' : f(s.relayCores, 2)} | ${f(s.deliveredPct, 2)} % | ${f(s.skippedPct, 1)} % | ${f(s.p50)} | ${f(s.p99)} | ${f(s.max, 1)} | ${f(s.generatorCores, 2)} | ${f(s.load, 1)} |`,
  );
  const perRun = c.summaries
    .filter((s) => s.target !== 'direct')
    .map((s) => `- ${NAMES[s.target] ?? s.target}: ${s.perRun.map((p) => `${f(p.cpuMsPer1000)} ms/1000, ${f(p.deliveredPct, 2)} %, p99 ${f(p.p99)} ms`).join('; ')}`);
  const offered = ours !== undefined && theirs !== undefined && ours.skippedPct <= 10 && theirs.skippedPct <= 10;
  const verdict = ours && theirs && ratio !== null
    ? [
        offered
          ? `- CPU ratio ours/rtpengine: **${f(ratio, 2)}** (target at most 1.0: ${ratio <= 1 ? 'met' : 'not met'}).`
          : `- CPU ratio ours/rtpengine: ${f(ratio, 2)}, **not a valid comparison**: the generator could not offer the load ` +
            `(${f(ours.skippedPct, 0)} % and ${f(theirs.skippedPct, 0)} % of packets skipped), so the relays saw different rates, and a saturated relay batches more reads per wake-up and spends less CPU per packet.`,
        `- Delivered through our relay: ${f(ours.deliveredPct, 2)} % (target 100 %: ${ours.deliveredPct >= 99.995 ? 'met' : 'not met'}).`,
        `- p99 one-way latency through our relay: ${f(ours.p99)} ms (target under 1 ms: ${ours.p99 < 1 ? 'met' : 'not met'}).`,
        ...(realtime
          ? [`- The same with its relay thread in SCHED_RR 10 (\`rtp.relay_thread_priority: 10\`): p99 ${f(realtime.p99)} ms (${realtime.p99 < 1 ? 'met' : 'not met'}), ` +
              `${f(realtime.deliveredPct, 2)} % delivered, CPU ratio to rtpengine ${f(realtime.cpuMsPer1000 / theirs.cpuMsPer1000, 2)}.`]
          : []),
      ]
    : ['- rtpengine was not measured in this run, so there is no ratio.'];
  return [
    `### ${c.calls} bridged calls (${c.calls * 100} packets/s due; offered: ${c.summaries.map((s) => `${s.target} ${f(s.ppsIn, 0)}`).join(', ')})`,
    '',
    '| relay | CPU ms per 1,000 packets | relay cores | delivered | skipped by generator | p50 ms | p99 ms | max ms | generator cores | load avg |',
    '|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    ...verdict,
    '',
    'Per run:',
    ...perRun,
    '',
  ];
}

export function renderSection(r: BenchReport): string {
  return [
    HEADING,
    '',
    `Measured ${r.measuredAt.slice(0, 10)} on ${cpus().length} cores (${r.cpuModel}), Node ${process.version}, Linux loopback.`,
    'Load: N bridged calls, each with two endpoints sending 172-byte PCMU packets (12-byte RTP header + 160 bytes) at 50 packets/s',
    'through the relay to each other (100 packets/s in and 100 out per call). Each relay runs in its own process (ours from the compiled',
    'build, `dist/`, as `npm start` runs it) and the load generator',
    `in another; relay CPU is utime + stime from /proc/PID/stat over a ${r.windowS} s steady window after ${r.warmupS} s warm-up, divided by the`,
    'packets offered in the window. Latency is one-way: from just before the generator hands a packet to the kernel to the moment the',
    'receiving endpoint\'s kernel stamps its arrival (SO_TIMESTAMPNS, read through the media I/O addon), so how late the generator reads',
    'is left out; the "no relay" row (the generator to itself) is the floor of the two kernel crossings. "skipped" packets (the generator more than one',
    `period late) are not offered. Medians of ${r.runs} runs per target, targets interleaved in each run.`,
    '',
    ...r.configs.flatMap(renderConfig),
  ].join('\n');
}

/** What the figures mean and why they are what they are; kept here so a re-run keeps it. */
export const NOTES = `
#### Reading the figures

The tables above are the run of 2026-11-23 at 12:07 UTC (build at acd558e). "ours" is the
gateway's default: passthrough streams relayed by the addon's relay thread (ARCHITECTURE.md, "The
relay thread") in the ordinary time-sharing class. "ours-rt" is the same with
\`rtp.relay_thread_priority: 10\`: the relay thread (and only it) in \`SCHED_RR\` at priority 10.
"ours-loop" is \`rtp.relay_thread: false\`: the event loop relays. "rtpengine-rt" is rtpengine
with its own equivalent, \`--scheduling=rr --priority=10\`.

- **CPU per packet (target at most rtpengine's): met**, 0.62 at 100 calls and 0.76 at 400 (11.9
  ms per 1,000 packets at 400, rtpengine 15.6); with the real-time relay thread 0.67 and 0.71.
  Only ratios between targets of one run mean anything: the host's load moves every figure
  (rtpengine measured 13.0 to 18.1 ms at 400 calls over a night), which is why the targets are
  interleaved.
- **Where the rest goes.** The C forwarder (\`bench/media/c-forwarder.c\`: the same system calls as the
  addon, no RTP logic) spends 8.8 ms per 1,000 packets at 400 calls: that is the kernel's share,
  most of it \`sendto\`, which on loopback also carries the receiving process's delivery and
  wake-up. \`perf\` puts 93 % of the relay thread's own time in the kernel. Ours spends about 3 ms
  more: the JavaScript bookkeeping of the records (statistics, sequencer, media timeout; about
  0.7 µs a packet), RTCP, and Node's own loop.
- **Latency (target p99 under 1 ms): met at 100 calls by default (0.26 to 0.29 ms), and at 400
  with the real-time relay thread (0.31 to 0.40 ms, p50 0.06), not at 400 by default (1.4 to
  2.3 ms).** Arrival times come from the kernel (SO_TIMESTAMPNS through the addon), so the
  generator's own delays are out and the floor ("no relay") is a p99 of 25 µs. At 400 calls
  rtpengine measured 1.4 to 1.7 ms and the C forwarder 0.55 to 0.73.
- **Why time-sharing misses it at 400: the wait for a core.** \`perf sched\` during a 400-call run
  (11:40 UTC) showed the relay thread runnable but not running for over 0.3 ms (up to 2.4 ms)
  36 times in 4 s: woken by a datagram onto the core where the load generator or the gateway's
  own event loop (the records' bookkeeping, about 1 ms every 20 ms) was running, it waited for
  that thread's time slice, about half of that time behind each, at times with the other core
  idle; the packets arriving meanwhile waited with it. On this kernel (6.18, EEVDF, 250 Hz) a
  woken thread pre-empts the running one only while it has not had more than its share. What did not fix it: a shorter
  slice requested with \`sched_setattr\` (1.20 to 1.31 ms against 1.26 to 1.47 in the same
  hour), the loop doing no bookkeeping at all (0.89 to 1.38), nice -10 (median 1.1, earlier). In
  \`SCHED_RR\` the thread runs as soon as it is woken: 0.31 to 0.40 ms in every run here, and
  0.36 to 0.51 in five earlier runs (11:50 to 12:05 UTC).
- **rtpengine in \`SCHED_RR\` lost packets at 400 calls**: 40 to 54 % delivered, with the
  generator skipping 13 to 23 % of its sends for want of CPU, and more than 1 % of those
  delivered took over a second. At 100 calls it was the fastest relay measured (p99 0.065 to 0.075 ms against ours-rt
  0.095 to 0.115). Ours in \`SCHED_RR\` delivered every packet at both sizes and left the generator
  its share: only the relay thread is real-time, and it waits on the loop when the records pile up.
- **Why the relay thread is on by default anyway: the gateway's loop is never idle.** With the
  relay worker's loop also running 5 ms of JavaScript every 20 ms (\`BENCH_LOOP_BUSY_MS=5\`, 09:32
  UTC, three pairs, standing in for the API, SIP, agent audio and garbage collection), ours
  measured p50 0.12 to 0.20 ms and p99 3.2 to 3.8 ms; the loop variant p50 1.2 to 1.5 ms and p99 7
  to 10 ms, and it spent about 9 % more CPU. A blocked loop no longer holds relayed audio at all (the
  test \`relay-thread.test.ts\`: 600 ms of a blocked loop, relayed packets still through in 10 ms).
- **What the media I/O addon did before the relay rules** (the gateway's default on Linux): the
  same relay code on Node's \`dgram\` sockets, where every packet goes through JavaScript, spends
  30.6 and 23.6 ms per 1,000 packets (the run of 08:44 UTC, the last to measure it). Node's \`dgram\`, per datagram received, makes two
  \`recvmsg\` calls (the second returns \`EAGAIN\`), allocates an \`ArrayBuffer\` and an \`rinfo\`
  object, and calls into JavaScript with a microtask checkpoint; per datagram sent it builds a
  \`SendWrap\` and an array and parses the address. The addon reads every ready socket with one
  \`recvmmsg\` and calls JavaScript once per batch. On \`dgram\` at 400 calls the relay saturates its
  event loop (0.94 of a core) and packets queue in the sockets (p50 8.8 ms, p99 213 ms).
- **Delivery (target 100 %): met**, every packet offered at both sizes, by ours in all three
  forms; of the others only rtpengine in \`SCHED_RR\` lost any (above).
- **The relay thread's records go every 20 ms, not 64 at a time:** their hand-over no longer holds
  the relay, and each wake-up of the loop competes with the thread for a core. Two pairs of quick
  runs at 400 calls (08:38 to 08:42 UTC, time-sharing) measured a p99 of 1.06 and 1.17 ms with hand-overs of
  256 and 0.91 and 0.95 with 1,024 (which at 40,000 records a second the 20 ms flush precedes).
- Per-packet CPU falls as the rate rises, for every relay, because more datagrams are handled per
  wake-up.
- **Not done.** \`sendmmsg\`: a relay's packets leave on as many sockets as there are legs, one or
  two per socket per wake-up at 50 packets/s, so there is next to nothing to batch per socket.
  rtpengine's kernel forwarding, used in production, is not what is compared here.
- **Tried and not adopted: V8's single-threaded garbage collector** (\`--single-threaded-gc\`, so
  that its helper threads do not take the relay thread's core): p99 1.3 to 1.8 ms in four runs
  at 400 calls (09:18 UTC), no better.
- **Tried and not adopted: connected UDP sockets.** A variant of the naive forwarder whose sockets
  were \`connect()\`ed to their peer (so the kernel skips the per-packet route lookup of \`sendto\`)
  spent 5 to 15 % less (2026-11-22). But a connected UDP socket receives only from its peer, and a
  relay must hear other sources on the same port to latch (symmetric RTP) and to re-latch after a
  transfer or a NAT rebinding; a second, connected socket on the same port would need
  SO_REUSEADDR, which lets any local process bind the media port too.
`;

/** Replaces the section under {@link HEADING} (up to the next `## `), or appends it. */
export function writePerformanceSection(r: BenchReport, notes = NOTES): void {
  const section = renderSection(r) + (notes ? `\n${notes.trim()}\n` : '');
  writeSection(HEADING, section);
}
