/**
 * @module INVITE flood from sipp at five times the sustained call rate: calls already up keep
 * their audio, INVITEs beyond the tenant's capacity get 503 (RFC 3261 21.5.4), memory stays
 * bounded, and a new call succeeds once the flood stops. Short form under `npm test`, a minute
 * of flood with 50 calls up under `npm run test:reliability`.
 */
import t from 'tap';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { needPeer } from '../support/peers.js';
import { waitFor } from '../support/gateway-harness.js';
import { scaled } from './scale.js';
import {
  activeCalls, callAudio, DID, FLOOD_SCENARIOS, measureSustainedRate, sippCounts, startFloodGateway, startSippIn, sumCounts, udpReceiveBufferDrops, type CallAudio,
  type FloodGateway,
} from './support/sip-flood-rig.js';

const ESTABLISHED = scaled(5, 50);
const FLOOD_SECONDS = scaled(5, 60);
/** docs/PERFORMANCE.md: bench:sip held 400 calls/s on the bare SIP stack; the flood aims at five times that. */
const BENCH_SIP_RATE = 400;
/**
 * The whole gateway in this process on a shared host does not take 2,000 INVITEs a second, so the
 * sustained rate is measured in the same run (rising steps of whole calls, as bench:sip does, up
 * to the bench figure) and the flood is five times what held.
 */
const CALIBRATION_RATES = [10, 20, 40, 80, 160, BENCH_SIP_RATE];
const CALIBRATION_SECONDS = scaled(2, 5);
/** Longest stretch, on a shared 2-core host, in which an established call's counters may stand still. */
const MAX_AUDIO_GAP_MS = 5000;
const MIB = 1024 * 1024;

function forcedGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  return typeof gc === 'function' ? () => { gc(); } : () => undefined;
}

/** Samples every established call's audio counters; records, per call, the longest time any counter stood still. */
class AudioWatch {
  readonly last = new Map<string, { audio: CallAudio; changed: number }>();
  readonly maxGap = new Map<string, number>();
  readonly #gw: FloodGateway;
  readonly #ids: readonly string[];

  constructor(gw: FloodGateway, ids: readonly string[]) {
    this.#gw = gw;
    this.#ids = ids;
  }

  async sample(): Promise<void> {
    await Promise.all(this.#ids.map(async (id) => {
      const audio = await callAudio(this.#gw, id);
      const now = Date.now();
      const prev = this.last.get(id);
      if (!audio) return;
      const rising = !prev || (audio.fromCaller > prev.audio.fromCaller && audio.toCaller > prev.audio.toCaller && audio.fromAgent > prev.audio.fromAgent);
      if (!prev || rising) this.last.set(id, { audio, changed: now });
      else this.maxGap.set(id, Math.max(this.maxGap.get(id) ?? 0, now - prev.changed));
    }));
  }

  total(): CallAudio {
    const sum = { fromCaller: 0, toCaller: 0, fromAgent: 0 };
    for (const { audio } of this.last.values()) {
      sum.fromCaller += audio.fromCaller;
      sum.toCaller += audio.toCaller;
      sum.fromAgent += audio.fromAgent;
    }
    return sum;
  }

  worstGap(): number {
    return Math.max(0, ...this.maxGap.values());
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

t.test('RFC 3261 21.5.4: an INVITE flood at 5x the sustained rate gets 503 beyond capacity while established calls keep their audio; the gateway recovers', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const gc = forcedGc();
  const edge = await startSippIn(t, ['-sn', 'uas', '-rtp_echo', '-timeout', '3600s']);
  const calibration = await startFloodGateway(t, 10_000, edge.port);
  const measured = await measureSustainedRate(t, calibration, CALIBRATION_RATES, CALIBRATION_SECONDS);
  await calibration.gateway.stop('calibration over');
  t.comment(`sustained rate steps (whole calls, ${CALIBRATION_SECONDS} s each): ${measured.steps.map((s) => `${s.rate}/s ${s.passed ? 'held' : `failed (${s.answered}/${s.calls} answered, ${s.retransmissions} retransmissions)`}`).join(', ')}`);
  t.ok(measured.rate > 0, `a sustained rate was measured: ${measured.rate} calls/s`);
  const floodRate = Number(process.env.VGW_FLOOD_RATE ?? 5 * Math.max(measured.rate, CALIBRATION_RATES[0]!));
  const gw = await startFloodGateway(t, ESTABLISHED, edge.port);
  const target = `127.0.0.1:${gw.gateway.sip.udpPort}`;

  // Calls that stay up, filling the tenant's capacity.
  const carrier = await startSippIn(t, [target, '-sf', `${FLOOD_SCENARIOS}/flood-established-uac.xml`, '-s', DID, '-m', String(ESTABLISHED), '-l', String(ESTABLISHED), '-r', '10', '-timeout', '3600s']);
  const ids = await waitFor(`${ESTABLISHED} active calls`, async () => {
    const live = await activeCalls(gw);
    return live.length >= ESTABLISHED ? live : undefined;
  }, 60_000);
  t.equal(ids.length, ESTABLISHED, `${ESTABLISHED} calls up (the tenant's capacity)`);
  const watch = new AudioWatch(gw, ids);
  await waitFor('audio on every call', async () => {
    await watch.sample();
    return [...watch.last.values()].filter((c) => c.audio.fromAgent > 20 && c.audio.toCaller > 20).length === ESTABLISHED;
  }, 30_000);
  await sleep(1000);
  await watch.sample();
  const audioBefore = watch.total();
  gc();
  const rssBefore = process.memoryUsage().rss;
  const heapBefore = process.memoryUsage().heapUsed;

  // The flood.
  const total = floodRate * FLOOD_SECONDS;
  const flood = await startSippIn(t, [target, '-sf', `${FLOOD_SCENARIOS}/flood-uac.xml`, '-s', DID, '-r', String(floodRate), '-m', String(total), '-l', String(total), '-trace_counts', '-max_retrans', '3', '-timeout', `${FLOOD_SECONDS + 120}s`]);
  const dropsBefore = udpReceiveBufferDrops();
  const limitedBefore = await gw.rateLimited();
  let rssPeak = rssBefore;
  let floodOver = false;
  const sampling = (async () => {
    while (!floodOver) {
      rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
      await watch.sample();
      await sleep(500);
    }
  })();
  const floodStarted = Date.now();
  const floodResult = await flood.run.done;
  const floodMs = Date.now() - floodStarted;
  await sleep(2000);
  floodOver = true;
  await sampling;
  await watch.sample();
  const audioDuring = watch.total();
  const counts = sippCounts(flood);
  const sent = sumCounts(counts, /INVITE_Sent$/);
  const got503 = sumCounts(counts, /_503_Recv$/);
  const got200 = sumCounts(counts, /^5_200_Recv$/);
  const unexpected = sumCounts(counts, /_Unexp/);
  const timedOut = sumCounts(counts, /^0_INVITE_Timeout$/);
  const retransmitted = sumCounts(counts, /^0_INVITE_Retrans$/);
  const drops = udpReceiveBufferDrops() - dropsBefore;
  const limited = (await gw.rateLimited()) - limitedBefore;
  const refusedLogged = gw.logCounts.get('inbound call refused: over a concurrency limit') ?? 0;
  t.comment(`flood: ${total} INVITEs at ${floodRate}/s over ${FLOOD_SECONDS} s took ${(floodMs / 1000).toFixed(1)} s; sipp exit ${floodResult.code}`);
  t.comment(`flood answers: 503 ${got503}, 200 ${got200}, other ${unexpected}, none (sipp gave up after 3 retransmissions) ${timedOut}; INVITE retransmissions ${retransmitted}; gateway logged ${refusedLogged} refusals; host UDP receive-buffer drops during the flood ${drops}; dropped by the gateway's per-source rate limit ${limited}`);

  // After the flood: audio still flows, memory back, a new call gets in once capacity frees up.
  await sleep(3000);
  await watch.sample();
  const audioAfter = watch.total();
  gc();
  const rssAfter = process.memoryUsage().rss;
  const heapAfter = process.memoryUsage().heapUsed;
  t.comment(`RSS before ${(rssBefore / MIB).toFixed(0)} MiB, peak ${(rssPeak / MIB).toFixed(0)} MiB, after ${(rssAfter / MIB).toFixed(0)} MiB; heap after GC before ${(heapBefore / MIB).toFixed(1)} MiB, after ${(heapAfter / MIB).toFixed(1)} MiB`);
  t.comment(`established calls' packets (caller in / to caller / from agent): before ${JSON.stringify(audioBefore)}, end of flood ${JSON.stringify(audioDuring)}, after ${JSON.stringify(audioAfter)}; longest stall ${watch.worstGap()} ms`);

  t.equal(sent, total, 'sipp sent every flood INVITE');
  t.equal(got503 + got200 + timedOut, total, 'every flood INVITE got 503 or 200, or no answer at all');
  // An INVITE with no answer after four transmissions was lost before the gateway read it: the
  // host's UDP receive buffers overflowed while the process waited for a core (shared host), or
  // the gateway's per-source flood protection (sip.rate_limit_per_second) dropped it unread.
  if (timedOut > 0) t.ok(drops + limited >= timedOut, `${timedOut} unanswered INVITEs, ${drops} datagrams dropped by full receive buffers, ${limited} by the rate limit`);
  else t.equal(floodResult.code, 0, 'every flood call ended as the scenario allows');
  t.ok(got503 > 0, 'INVITEs beyond capacity got 503');
  t.equal(unexpected, 0, 'no answer other than 503 or 200');
  // The concurrency limit refused what was read (the rate limit drops without an answer): one log line per refusal. With unanswered
  // INVITEs some 503s may have gone out after sipp gave up on the call, so then only "at least".
  if (timedOut === 0) t.equal(refusedLogged, got503, 'the gateway logged one concurrency refusal per 503');
  else t.ok(refusedLogged >= got503, `the gateway logged a concurrency refusal for every 503 (${refusedLogged} >= ${got503})`);
  t.equal((await activeCalls(gw)).length, ESTABLISHED, 'the established calls are all still up');
  t.ok(audioDuring.fromAgent > audioBefore.fromAgent && audioDuring.toCaller > audioBefore.toCaller && audioDuring.fromCaller > audioBefore.fromCaller, 'audio flowed during the flood');
  t.ok(audioAfter.fromAgent > audioDuring.fromAgent && audioAfter.toCaller > audioDuring.toCaller, 'audio still flows after the flood');
  t.ok(watch.worstGap() < MAX_AUDIO_GAP_MS, `no established call stood still for ${MAX_AUDIO_GAP_MS} ms (longest ${watch.worstGap()} ms)`);
  t.ok(heapAfter - heapBefore < 64 * MIB, `heap after the flood within 64 MiB of before (${((heapAfter - heapBefore) / MIB).toFixed(1)} MiB)`);

  // Recovery: one established call hangs up, and a new call takes its place.
  const hung = await gw.api('POST', `/v1/calls/${ids[0]}/hangup`);
  t.ok(hung.status === 200 || hung.status === 202, `hang up one established call (${hung.status})`);
  await waitFor('capacity freed', async () => (await activeCalls(gw)).length < ESTABLISHED, 20_000);
  const fresh = await startSippIn(t, [target, '-sf', `${FLOOD_SCENARIOS}/flood-uac.xml`, '-s', DID, '-m', '1', '-trace_counts', '-timeout', '30s']);
  const freshDone = await fresh.run.done;
  const freshCounts = sippCounts(fresh);
  t.equal(freshDone.code, 0, 'the new call completed');
  t.equal(sumCounts(freshCounts, /_503_Recv$/), 0, 'the new call was not refused');
  t.ok(sumCounts(freshCounts, /^5_200_Recv$/) === 1, 'the new call was answered 200 after the flood');
  void carrier;
});
