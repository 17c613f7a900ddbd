/**
 * @module An open-loop HTTP load at an even rate, in its own process (forked by api-load.ts), so
 * the benchmark's other work never delays a request. Request i is due at `start + i / rate`, sent
 * on a keep-alive connection from a pool that grows while responses are outstanding, and timed
 * from when it was due, not from when it left: a late generator or a queue in the pool counts
 * against the server, as a real client would see it (no coordinated omission).
 */
import { Agent, request } from 'node:http';
import { percentile, type PacedLoadRequest, type PacedLoadResult } from './api-load.js';
import { applyPriority } from './priority.js';

/** Connections the pool may open: far more than a server answering in milliseconds needs at 1,000/s. */
const MAX_SOCKETS = 64;

async function run(o: PacedLoadRequest): Promise<PacedLoadResult> {
  if (o.priority !== undefined) applyPriority(process.pid, o.priority);
  const agent = new Agent({ keepAlive: true, maxSockets: MAX_SOCKETS });
  const headers = o.key ? { authorization: `Bearer ${o.key}` } : {};
  const url = new URL(o.path, o.base);
  const total = Math.round(o.rate * o.seconds);
  const latency = new Float64Array(total);
  const late = new Float64Array(total);
  let done = 0;
  let non2xx = 0;
  let errors = 0;

  /** Request `i` (untimed when negative). */
  const send = (i: number, dueAt: number): Promise<void> =>
    new Promise((resolve) => {
      if (i >= 0) late[i] = performance.now() - dueAt;
      const req = request(url, { agent, headers }, (res) => {
        if (res.statusCode === undefined || res.statusCode < 200 || res.statusCode >= 300) non2xx++;
        res.resume();
        res.on('end', () => {
          if (i >= 0) latency[i] = performance.now() - dueAt;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        if (i >= 0) latency[i] = performance.now() - dueAt;
        resolve();
      });
      req.end();
    });

  // Open the connections a burst would need before timing starts, as a long-running client has them.
  await Promise.all(Array.from({ length: 16 }, () => send(-1, performance.now())));
  non2xx = 0;
  errors = 0;

  const pending: Promise<void>[] = [];
  const intervalMs = 1000 / o.rate;
  const start = performance.now() + 50;
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = (): void => {
      const now = performance.now();
      // Everything due by now goes out, each timed from its own due time.
      while (next < total && start + next * intervalMs <= now) {
        pending.push(send(next, start + next * intervalMs).then(() => void done++));
        next++;
      }
      if (next >= total) {
        resolve();
        return;
      }
      setTimeout(tick, Math.max(0, start + next * intervalMs - performance.now()));
    };
    setTimeout(tick, 50);
  });
  const sentSeconds = (performance.now() - start) / 1000;
  await Promise.all(pending);
  agent.destroy();
  const sorted = latency.slice().sort();
  const lateSorted = late.slice().sort();
  return {
    requests: done, sentRate: total / sentSeconds, non2xx, errors,
    p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: sorted.at(-1) ?? NaN,
    generatorLateP99: percentile(lateSorted, 99),
  };
}

process.once('message', (o: PacedLoadRequest) => {
  run(o).then(
    (result) => process.send?.({ result }, () => process.exit(0)),
    (err: Error) => process.send?.({ error: err.message }, () => process.exit(1)),
  );
});
