/**
 * @module SIP parser fuzzing with fast-check: mutated RFC 4475 / RFC 5118 / sipp-scenario seeds and
 * grammar-generated messages through parseMessage (UDP path) and SipStreamFramer (TCP path), with
 * per-input time and heap checkpoints; then a few thousand mutated inputs over real UDP and TCP
 * sockets to a running user agent, which must answer the malformed ones and keep answering OPTIONS.
 * Short form under `npm test`, a million inputs under `npm run test:reliability`.
 */
import t from 'tap';
import fc from 'fast-check';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { performance } from 'node:perf_hooks';
import { availableParallelism, loadavg } from 'node:os';
import { startGatewayUa } from '../support/sip-sipp.js';
import { waitFor } from '../support/gateway-harness.js';
import { LONG_RUN, scaled } from './scale.js';
import { allSeeds } from './support/sip-fuzz-seeds.js';
import { chunkSizes, grammarMessage, mutatedSeed } from './support/sip-fuzz-arbitraries.js';
import { checkDatagram, checkStream, emptyTally, type FuzzTally } from './support/sip-fuzz-check.js';
import {
  expectedOverTcp, expectedOverUdp, missingAnswers, optionsRequest, statusLines, tcpExchange, UdpProbe,
} from './support/sip-fuzz-wire.js';

const TOTAL = scaled(20_000, 1_000_000);
const BATCH = scaled(5_000, 50_000);
const BASE_SEED = Number(process.env.VGW_FUZZ_SEED ?? 4475);
/** A single input costing more CPU than this (re-timed three times, fastest kept) fails the long form. */
const SLOW_MS = 100;
/** Heap growth allowed between the 10 % and the 100 % checkpoint. */
const HEAP_GROWTH_LIMIT = 64 * 1024 * 1024;

const SEEDS = allSeeds();
const ALL_SEEDS = [...SEEDS.rfc4475, ...SEEDS.rfc5118, ...SEEDS.sipp];

/** A forced GC without --expose-gc: the flag can be set at run time and `gc` read from a fresh context. */
function forcedGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  return typeof gc === 'function' ? () => { gc(); } : () => undefined;
}

const input = fc.tuple(fc.oneof({ weight: 3, arbitrary: mutatedSeed(ALL_SEEDS) }, { weight: 1, arbitrary: grammarMessage }), chunkSizes);

/**
 * Wall time and CPU time of one input, in ms. On a shared host the wall time includes waiting for
 * a core; the CPU time (this process, user + system) is what the input itself costs.
 */
function exercise(buf: Buffer, chunks: readonly number[], tally: FuzzTally): { wall: number; cpu: number } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  checkDatagram(buf, tally);
  checkStream(buf, chunks, tally);
  const used = process.cpuUsage(cpu);
  return { wall: performance.now() - started, cpu: (used.user + used.system) / 1000 };
}

t.test('RFC 3261 7 and 18.3, RFC 4475: fuzzed messages parse to an outcome, never an exception, in bounded time and memory', (t) => {
  t.comment(`seeds: ${SEEDS.rfc4475.length} RFC 4475, ${SEEDS.rfc5118.length} RFC 5118, ${SEEDS.sipp.length} sipp scenario requests`);
  t.ok(SEEDS.sipp.length >= 10, 'the sipp scenarios rendered into seeds');
  const gc = forcedGc();
  const times = new Float64Array(TOTAL);
  const cpuTimes = new Float64Array(TOTAL);
  const tally = emptyTally();
  const slow: { ms: number; input: string }[] = [];
  let n = 0;
  let heapAt10 = 0;
  let heapPeak = 0;
  for (let batch = 0; n < TOTAL; batch++) {
    const seed = BASE_SEED + batch;
    const runs = Math.min(BATCH, TOTAL - n);
    try {
      fc.assert(fc.property(input, ([buf, chunks]) => {
        const { wall, cpu } = exercise(buf, chunks, tally);
        if (n < TOTAL) {
          times[n] = wall;
          cpuTimes[n++] = cpu;
        }
        if (cpu > SLOW_MS) {
          // Re-time: CPU time also counts GC and other threads of this process, so one slow run may not be the input's.
          const again = Math.min(...[0, 1, 2].map(() => exercise(buf, chunks, emptyTally()).cpu));
          if (again > SLOW_MS) slow.push({ ms: again, input: buf.toString('latin1').slice(0, 160) });
        }
      }), { seed, numRuns: runs, endOnFailure: true });
    } catch (err) {
      const text = String(err);
      // fast-check's message: the seed and path, the counterexample, then the error it raised.
      t.fail(`batch seed ${seed} (replay with VGW_FUZZ_SEED=${seed}): ${text.slice(0, 200)} ... ${text.slice(text.indexOf('Got error') >= 0 ? text.indexOf('Got error') : -1500).slice(0, 1500)}`);
      break;
    }
    gc();
    const heap = process.memoryUsage().heapUsed;
    heapPeak = Math.max(heapPeak, heap);
    if (heapAt10 === 0 && (n >= TOTAL / 10 || n === TOTAL)) heapAt10 = heap;
    t.comment(`batch seed ${seed}: ${n} inputs, heap ${(heap / 1048576).toFixed(1)} MiB`);
  }
  const heapEnd = process.memoryUsage().heapUsed;
  const pct = (a: Float64Array, q: number): string => (a[Math.min(n - 1, Math.floor(n * q))] ?? 0).toFixed(3);
  const wallSorted = times.slice(0, n).sort();
  const cpuSorted = cpuTimes.slice(0, n).sort();
  t.comment(`inputs ${n}: datagrams accepted ${tally.accepted}, answered as malformed ${tally.answered}, dropped ${tally.dropped}; stream messages ${tally.streamMessages}, stream failures ${tally.streamFailures}`);
  t.comment(`per input (datagram + stream), CPU: p50 ${pct(cpuSorted, 0.5)} ms, p99 ${pct(cpuSorted, 0.99)} ms, max ${pct(cpuSorted, 1)} ms; wall: p50 ${pct(wallSorted, 0.5)} ms, p99 ${pct(wallSorted, 0.99)} ms, max ${pct(wallSorted, 1)} ms`);
  t.comment(`inputs over ${SLOW_MS} ms of CPU after re-timing (fastest of three): ${slow.length}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')} on ${availableParallelism()} cores`);
  t.comment(`heap after GC: at 10 % ${(heapAt10 / 1048576).toFixed(1)} MiB, peak ${(heapPeak / 1048576).toFixed(1)} MiB, end ${(heapEnd / 1048576).toFixed(1)} MiB`);
  t.equal(n, TOTAL, `${TOTAL} inputs ran`);
  t.ok(tally.accepted > 0 && tally.answered > 0 && tally.dropped > 0, 'inputs reached acceptance, answerable failure and drop');
  t.ok(heapEnd - heapAt10 < HEAP_GROWTH_LIMIT, `heap growth ${((heapEnd - heapAt10) / 1048576).toFixed(1)} MiB between the 10 % and 100 % checkpoints stays under 64 MiB`);
  if (LONG_RUN) t.same(slow, [], `no input takes over ${SLOW_MS} ms`);
  else if (slow.length > 0) t.comment(`slow inputs (reported, fatal only in the long form): ${JSON.stringify(slow.slice(0, 3))}`);
  t.end();
});

const WIRE_UDP = scaled(1_000, 5_000);
const WIRE_TCP = scaled(150, 3_000);
const WIRE_BATCH = 50;
const wireInputs = (count: number, seed: number): Buffer[] =>
  fc.sample(fc.oneof({ weight: 3, arbitrary: mutatedSeed(ALL_SEEDS) }, { weight: 1, arbitrary: grammarMessage }), { seed, numRuns: count }).filter((b) => b.length > 0 && b.length < 30_000);

t.test('RFC 3261 21.4.1 over UDP: malformed answerable requests get 400 (or 505) and the agent still answers OPTIONS', async (t) => {
  const { transport } = await startGatewayUa(t, { timers: { T1: 50, T2: 400, T4: 500 } });
  const probe = new UdpProbe();
  const port = await probe.open();
  t.teardown(() => probe.close());
  const inputs = wireInputs(WIRE_UDP, BASE_SEED + 1000);
  let expectedTotal = 0;
  let failures = 0;
  for (let b = 0; b < inputs.length;) {
    // A batch stays well under the socket's receive buffer, and the OPTIONS after it is a barrier:
    // the agent reads datagrams in order, so its 200 comes after every answer the batch is due.
    const batch: Buffer[] = [];
    for (let bytes = 0; b < inputs.length && batch.length < WIRE_BATCH && bytes < 48_000; b++) {
      batch.push(inputs[b]!);
      bytes += inputs[b]!.length;
    }
    const expected = batch.flatMap(expectedOverUdp);
    expectedTotal += expected.length;
    const before = probe.received.length;
    for (const data of batch) await probe.send(data, transport.udpPort);
    const callId = `probe-udp-${b}`;
    await probe.send(optionsRequest('UDP', port, callId), transport.udpPort);
    const got = (): string[] => probe.received.slice(before).flatMap(statusLines);
    const answered = (): boolean => probe.received.slice(before).some((m) => m.startsWith('SIP/2.0 200') && m.includes(`Call-ID: ${callId}`));
    const ok = await waitFor(`inputs before ${b}: answers and the OPTIONS 200`, () => answered() && missingAnswers(expected, got()).length === 0, 10_000).catch(() => false);
    if (!ok) {
      failures++;
      t.fail(`inputs before ${b}: missing ${JSON.stringify(missingAnswers(expected, got()).slice(0, 3)).slice(0, 600)}, OPTIONS answered: ${answered()}`);
      if (failures > 3) break;
    }
  }
  t.comment(`UDP: ${inputs.length} inputs, ${expectedTotal} malformed requests due an answer`);
  t.ok(expectedTotal > 0, 'some inputs were answerable malformed requests');
  t.equal(failures, 0, 'every batch got its answers and the OPTIONS 200');
});

t.test('RFC 3261 18.3 and 21.4.1 over TCP: each input on its own connection gets its answers; OPTIONS still answered', async (t) => {
  const { transport } = await startGatewayUa(t, { timers: { T1: 50, T2: 400, T4: 500 } });
  const inputs = wireInputs(WIRE_TCP, BASE_SEED + 2000);
  let expectedTotal = 0;
  const missed: string[] = [];
  const PARALLEL = 8;
  for (let b = 0; b < inputs.length; b += PARALLEL) {
    await Promise.all(inputs.slice(b, b + PARALLEL).map(async (data) => {
      const expected = expectedOverTcp(data);
      expectedTotal += expected.length;
      const received = await tcpExchange(transport.tcpPort, data, (r) => missingAnswers(expected, statusLines(r)).length === 0);
      missed.push(...missingAnswers(expected, statusLines(received)));
    }));
    if (b % 100 < PARALLEL) {
      const callId = `probe-tcp-${b}`;
      const answer = await tcpExchange(transport.tcpPort, optionsRequest('TCP', 0, callId), (r) => r.includes(`Call-ID: ${callId}`));
      t.ok(answer.startsWith('SIP/2.0 200'), `after ${b} connections: OPTIONS answered 200`);
    }
  }
  t.comment(`TCP: ${inputs.length} connections, ${expectedTotal} answers due`);
  t.ok(expectedTotal > 0, 'some inputs were answerable malformed requests');
  if (missed.length > 0) t.comment(`missing: ${JSON.stringify(missed.slice(0, 3).map((m) => m.slice(0, 200)))}`);
  t.equal(missed.length, 0, 'every answer due came back');
});
