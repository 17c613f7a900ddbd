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
  'ours-dgram': 'voice-gateway relay on node:dgram',
  naive: 'naive Node forwarder (no RTP logic)',
  'c-floor': 'C forwarder (no RTP logic; the kernel\'s floor)',
  rtpengine: 'rtpengine 10.5 userspace',
  direct: 'no relay (generator to itself)',
};

function renderConfig(c: ConfigResult): string[] {
  const ours = c.summaries.find((s) => s.target === 'ours');
  const theirs = c.summaries.find((s) => s.target === 'rtpengine');
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

The tables above are the run of 2026-11-23 at 03:50 UTC (commit 04168b0), on a quiet host (load
average 0.5 to 1.7), the first with passthrough streams relayed inside the media I/O addon
(ARCHITECTURE.md, "Relay rules") and with the C forwarder as an anchor.

- **CPU per packet (target at most rtpengine's): met**, 0.71 at 100 calls and 0.85 at 400, and in
  every run (0.78, 0.65, 0.70 and 0.85, 0.91, 0.78). The two runs of 00:17 and 00:47 UTC the same
  night, with every packet still going through JavaScript, measured 0.87 and 0.93, then 1.08 and
  1.06. At 400 calls our relay went from 17.2 to 13.7 ms per 1,000 packets, while rtpengine stayed
  at 16.1 to 16.3.
- **Where the rest goes.** The C forwarder (\`bench/media/c-forwarder.c\`: the same system calls as the
  addon, no RTP logic) spends 9.6 ms per 1,000 packets at 400 calls and 10.7 at 100: that is the
  kernel's share, most of it \`sendto\`, which on loopback also carries the receiving process's
  delivery and wake-up. Our relay spends 4 to 6 ms more. Of that, the bookkeeping of relayed packets
  in JavaScript (statistics, sequencer, media timeout) is 1 to 2 ms: with it skipped, in alternating
  runs at 04:10 UTC, the relay spent 11.4 and 12.7 ms against 13.7 and 13.8. The rest, 2 to 3 ms
  by elimination, is what Node adds around each wake-up: libuv's loop and the call into JavaScript.
- **What the media I/O addon did before the relay rules** (the gateway's default on Linux since
  that night): the same relay code on Node's \`dgram\` sockets, where every packet goes through
  JavaScript, spends 34.7 and 24.6 ms per 1,000 packets in this run. Node's \`dgram\`, per datagram
  received, makes two \`recvmsg\` calls (the second returns \`EAGAIN\`), allocates an \`ArrayBuffer\` and
  an \`rinfo\` object, and calls into JavaScript with a microtask checkpoint; per datagram sent it
  builds a \`SendWrap\` and an array and parses the address. The addon reads every ready socket with
  one \`recvmmsg\` and calls JavaScript once per batch. On \`dgram\` at 400 calls the relay saturates
  its event loop (0.98 of a core) and packets queue in the sockets (p50 18 ms).
- **Latency (target p99 under 1 ms): met at 100 calls, not at 400, where no single-threaded relay
  meets it on this host.** Arrival times come from the kernel (SO_TIMESTAMPNS through the addon), so
  the generator's own delays are out and the floor ("no relay") is a p99 of 25 µs. At 100 calls our
  p99 was 1.15, 0.64 and 0.48 ms in the three runs (median 0.64; 1.1 to 10.1 ms before the relay
  rules), rtpengine's 0.28 to 1.07 and the C forwarder's 0.31 to 0.54. At 400 calls ours was 5.5
  to 14.6 ms, rtpengine's 2.4 to 6.1 and the C forwarder's 1.5 to 5.3: the C forwarder, one thread
  with nothing to do but the system calls, misses the target too, so the tail at that rate is the
  host's scheduling (the generator takes 0.6 of the 2 cores). Ours is still 2 to 3 times the
  floor: relayed packets go out as soon as the addon reads them, but it reads only when the event
  loop is free, and the loop also runs the JavaScript bookkeeping (the run with it skipped: p99 2.9
  and 8.3 ms against 6.4 and 8.9). Garbage collection is not it: with \`--trace-gc\` at 400 calls the
  relay's main thread collected every 4 to 5 s, for 2 to 5 ms. What would move it: the relay on
  a thread of its own, not waiting for JavaScript (DECISIONS.md).
- **Delivery (target 100 %): met**, every packet offered at both sizes, with every relay.
- Per-packet CPU falls as the rate rises, for every relay, because more datagrams are handled per
  wake-up; ratios mean something only between targets of one run, which is why targets are
  interleaved. The runs of 2026-11-22, before the addon, measured 1.71 and 1.46.
- **Not done.** \`sendmmsg\`: a relay's packets leave on as many sockets as there are legs, one or
  two per socket per wake-up at 50 packets/s, so there is next to nothing to batch per socket.
  rtpengine's kernel forwarding, used in production, is not what is compared here.
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
