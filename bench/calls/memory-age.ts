/**
 * @module Memory per call as calls age: a fixed set of media calls with agents held for longer
 * than a minute, the gateway's RSS (and, from its /metrics, V8 heap and external memory)
 * sampled at several ages. Buffers that are allocated whole but written a little at a time
 * become resident only as they fill, so a figure taken at one age can mislead.
 */
import type { BenchContext } from './phases.js';
import { placeMedia } from './phases.js';
import { gatewayMetrics, rssMedian, sleep } from './measure.js';

export interface AgeSample {
  /** Seconds since the last call of the set turned active. */
  ageS: number;
  rssKiB: number;
  perCallKiB: number;
  heapUsedKiB: number;
  externalKiB: number;
}

export interface MemoryByAge {
  calls: number;
  failed: number;
  idle: { rssKiB: number; heapUsedKiB: number; externalKiB: number };
  samples: AgeSample[];
}

export async function memoryByAge(ctx: BenchContext, calls: number, ages: readonly number[]): Promise<MemoryByAge> {
  const before = await gatewayMetrics(ctx.gw.base);
  const idle = { rssKiB: await rssMedian(ctx.gw.pid, 4, 500), heapUsedKiB: before.heapUsedKiB, externalKiB: before.externalKiB };
  const placed = await placeMedia(ctx, calls, 25);
  await ctx.driver.settle(placed, 20_000);
  const up = placed.filter((c) => !c.failure);
  const t0 = Math.max(...up.map((c) => c.activeAt ?? 0));
  const samples: AgeSample[] = [];
  for (const age of ages) {
    const wait = t0 + age * 1000 - Date.now();
    if (wait > 0) await sleep(wait);
    const rssKiB = await rssMedian(ctx.gw.pid, 3, 300);
    const heap = await gatewayMetrics(ctx.gw.base);
    const sample = { ageS: age, rssKiB, perCallKiB: (rssKiB - idle.rssKiB) / Math.max(1, up.length), heapUsedKiB: heap.heapUsedKiB, externalKiB: heap.externalKiB };
    samples.push(sample);
    console.log(`memory at ${age} s: rss ${(rssKiB / 1024).toFixed(0)} MiB, ${sample.perCallKiB.toFixed(0)} KiB/call, heap used ${(heap.heapUsedKiB / 1024).toFixed(1)} MiB, external ${(heap.externalKiB / 1024).toFixed(1)} MiB`);
  }
  await ctx.driver.hangupAll();
  ctx.agent.forgetClosed();
  return { calls: up.length, failed: placed.length - up.length, idle, samples };
}
