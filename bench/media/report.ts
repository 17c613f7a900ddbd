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
  runs: number;
  windowS: number;
  warmupS: number;
  cpuModel: string;
  configs: ConfigResult[];
}

const f = (n: number, digits = 3): string => n.toFixed(digits);

const NAMES: Record<string, string> = {
  ours: 'voice-gateway relay (Node)',
  naive: 'naive Node forwarder (no RTP logic)',
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
    `Measured ${new Date().toISOString().slice(0, 10)} on ${cpus().length} cores (${r.cpuModel}), Node ${process.version}, Linux loopback.`,
    'Load: N bridged calls, each with two endpoints sending 172-byte PCMU packets (12-byte RTP header + 160 bytes) at 50 packets/s',
    'through the relay to each other (100 packets/s in and 100 out per call). Each relay runs in its own process (ours from the compiled',
    'build, `dist/`, as `npm start` runs it) and the load generator',
    `in another; relay CPU is utime + stime from /proc/PID/stat over a ${r.windowS} s steady window after ${r.warmupS} s warm-up, divided by the`,
    'packets offered in the window. Latency is one-way, send to receive, measured inside the generator, so it includes the generator\'s',
    'own event-loop delay and both kernel crossings; the "no relay" row is that floor. "skipped" packets (the generator more than one',
    `period late) are not offered. Medians of ${r.runs} runs per target, targets interleaved in each run.`,
    '',
    ...r.configs.flatMap(renderConfig),
  ].join('\n');
}

/** What the figures mean and why they are what they are; kept here so a re-run keeps it. */
export const NOTES = `
#### Reading the figures

The targets (CPU ratio at most 1.0, 100 % delivered at 400 calls, p99 under 1 ms) are not met on this
host. What the run recorded above shows, and why:

- 100 calls is the valid comparison: the generator offered nearly the full load to every target.
  There our relay spends about 1.3 times rtpengine's CPU per packet. The naive Node forwarder, which
  only receives and sends (no parsing, latching, statistics or sequencer), lands at about 1.1 times
  rtpengine, so Node's UDP path alone is close to rtpengine userspace and most of the gap is the
  per-packet work in our relay process.
- A V8 CPU profile of the relay (\`BENCH_PROFILE=/tmp/prof npm run bench:media\`) puts about 60 % of
  its busy time in \`doSend\` (sendmsg, which on loopback also carries the receiving socket's
  delivery), 10-15 % in native receive work and under 10 % in our JavaScript (latching, RTCP
  statistics, sequencer rewrite, the bridge's checks). Measured in-process, the bridge's forwarding
  path (everything from the session's packet callback to the socket send) costs about 1 µs of CPU
  per packet above a plain \`socket.send\` of the same packet (7.7 against 6.9 µs). Turning RTCP
  reports off (\`BENCH_RTCP_MS=0\`) did not close the gap to the naive forwarder either. Why the
  gap measured across processes (20-30 %) is larger than our code's share is not explained yet
  (TODO(issue-4)). Binding no separate RTCP socket per session (\`BENCH_MUX_ONLY=1\`) left ours at
  1.1-1.3 times the naive forwarder in two runs, so the extra sockets are not the cause either;
  run-to-run noise on this host is of the same order.
- Per-packet CPU falls as the rate rises, for every relay, because more datagrams are read per
  wake-up, and falls further for a relay starved of CPU. Ratios mean something only between targets
  of one run, which is why targets are interleaved; single runs vary by about 15 % on this shared
  host (see the per-run lines and the load average column).
- 400 calls (40,000 packets/s in and as many out) could not be offered on this host: the
  single-threaded generator skipped 30-60 % of its packets while the machine was busy with other work
  (load average 7-8 on 2 cores). Under that contention our relay and the naive forwarder, each one
  event loop on one core, got a share of the CPU smaller than the load needs, so their socket queues
  grew, latency climbed to seconds (1000.005 ms is the histogram's 1 s cap) and late packets count
  as not delivered; rtpengine runs a thread per core and got more of the machine. These rows do not
  describe a dedicated host.
- Latency: even the generator talking to itself ("no relay") had a p99 of several milliseconds here,
  so the under-1 ms p99 target cannot be judged on this host. The p50 difference from the "no relay"
  row estimates what a relay adds: at 100 calls about 0.8 ms for ours and 0.5 ms for rtpengine.
- Not done, and what would move the figures: remove the per-packet cost above the naive forwarder;
  shard calls over worker threads (an event loop per core, as rtpengine does with threads) for
  throughput and latency at 400 calls; a native addon with recvmmsg/sendmmsg (or UDP GSO) to go
  below Node's per-datagram floor. rtpengine's kernel forwarding, used in production, is not what is
  compared here.
`;

/** Replaces the section under {@link HEADING} (up to the next `## `), or appends it. */
export function writePerformanceSection(r: BenchReport, notes = NOTES): void {
  const section = renderSection(r) + (notes ? `\n${notes.trim()}\n` : '');
  writeSection(HEADING, section);
}
