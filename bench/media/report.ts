/** @module Writes the media relay section of docs/PERFORMANCE.md, leaving other sections alone. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

export const HEADING = '## Media relay (`npm run bench:media`)';
const DOC = fileURLToPath(new URL('../../docs/PERFORMANCE.md', import.meta.url));

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
  rtpengine: 'rtpengine 10.5 userspace',
  direct: 'no relay (generator to itself)',
};

function renderConfig(c: ConfigResult): string[] {
  const ours = c.summaries.find((s) => s.target === 'ours');
  const theirs = c.summaries.find((s) => s.target === 'rtpengine');
  const ratio = ours && theirs ? ours.cpuMsPer1000 / theirs.cpuMsPer1000 : null;
  const rows = c.summaries.map((s) =>
    `| ${NAMES[s.target] ?? s.target} | ${s.target === 'direct' ? '-' : f(s.cpuMsPer1000)} | ${s.target === 'direct' ? '-' : f(s.relayCores, 2)} | ${f(s.deliveredPct, 2)} % | ${f(s.p50)} | ${f(s.p99)} | ${f(s.max, 1)} | ${f(s.generatorCores, 2)} | ${f(s.load, 1)} |`,
  );
  const perRun = c.summaries
    .filter((s) => s.target !== 'direct')
    .map((s) => `- ${NAMES[s.target] ?? s.target}: ${s.perRun.map((p) => `${f(p.cpuMsPer1000)} ms/1000, ${f(p.deliveredPct, 2)} %, p99 ${f(p.p99)} ms`).join('; ')}`);
  const verdict = ours && ratio !== null
    ? [
        `- CPU ratio ours/rtpengine: **${f(ratio, 2)}** (target at most 1.0: ${ratio <= 1 ? 'met' : 'not met'}).`,
        `- Delivered through our relay: ${f(ours.deliveredPct, 2)} % (target 100 %: ${ours.deliveredPct >= 99.995 ? 'met' : 'not met'}).`,
        `- p99 one-way latency through our relay: ${f(ours.p99)} ms (target under 1 ms: ${ours.p99 < 1 ? 'met' : 'not met'}).`,
      ]
    : ['- rtpengine was not measured in this run, so there is no ratio.'];
  return [
    `### ${c.calls} bridged calls (${f((ours ?? c.summaries[0]!).ppsIn, 0)} packets/s offered to the relay)`,
    '',
    '| relay | CPU ms per 1,000 packets | relay cores | delivered | p50 ms | p99 ms | max ms | generator cores | load avg |',
    '|---|---|---|---|---|---|---|---|---|',
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
    'through the relay to each other (100 packets/s in and 100 out per call). Each relay runs in its own process and the load generator',
    `in another; relay CPU is utime + stime from /proc/PID/stat over a ${r.windowS} s steady window after ${r.warmupS} s warm-up, divided by the`,
    'packets offered in the window. Latency is one-way, send to receive, measured inside the generator, so it includes the generator\'s',
    'own event-loop delay and both kernel crossings; the "no relay" row is that floor. "skipped" packets (the generator more than one',
    `period late) are not offered. Medians of ${r.runs} runs per target, targets interleaved in each run.`,
    '',
    ...r.configs.flatMap(renderConfig),
  ].join('\n');
}

/** Replaces the section under {@link HEADING} (up to the next `## `), or appends it. */
export function writePerformanceSection(r: BenchReport, notes = ''): void {
  const section = renderSection(r) + (notes ? `\n${notes.trim()}\n` : '');
  if (!existsSync(DOC)) {
    writeFileSync(DOC, `# Performance\n\n${section}`);
    return;
  }
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf(HEADING);
  if (start < 0) {
    writeFileSync(DOC, `${text.trimEnd()}\n\n${section}`);
    return;
  }
  const next = text.indexOf('\n## ', start + HEADING.length);
  writeFileSync(DOC, text.slice(0, start) + section + (next < 0 ? '' : text.slice(next + 1)));
}
