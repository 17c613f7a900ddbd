/**
 * @module API load at a fixed rate, two ways: evenly spaced from a client process of our own
 * ({@link runPacedLoad}, the figure judged), and one autocannon run ({@link runApiLoad}, for
 * reference). autocannon's percentiles are computed here from every response's own time
 * (sub-millisecond, no correction), because its histogram keeps whole milliseconds and its
 * coordinated-omission correction assumes a 1 ms interval whatever the rate; its own p99 is kept
 * beside ours.
 */
import { fork } from 'node:child_process';
import autocannon from 'autocannon';
import type { SchedulingPriority } from './priority.js';

/** Answers and their latency, in milliseconds. */
export interface ResponseTimes {
  requests: number;
  non2xx: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface ApiLoadResult extends ResponseTimes {
  label: string;
  path: string;
  /** Requests answered per second over the run. */
  achievedRate: number;
  /** autocannon's own p99 (whole ms, its correction applied). */
  autocannonP99: number;
}

/** Nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface ApiLoadOptions {
  label: string;
  base: string;
  path: string;
  key?: string;
  rate: number;
  seconds: number;
  connections: number;
}

export function runApiLoad(o: ApiLoadOptions): Promise<ApiLoadResult> {
  const times: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon({
      url: `${o.base}${o.path}`,
      headers: o.key ? { authorization: `Bearer ${o.key}` } : {},
      connections: o.connections,
      duration: o.seconds,
      overallRate: o.rate,
    }, (err, result) => {
      if (err) {
        reject(err);
        return;
      }
      times.sort((a, b) => a - b);
      resolve({
        label: o.label, path: o.path,
        requests: times.length,
        achievedRate: times.length / o.seconds,
        non2xx: result.non2xx, errors: result.errors + result.timeouts,
        p50: percentile(times, 50), p90: percentile(times, 90), p99: percentile(times, 99), max: times.at(-1) ?? NaN,
        autocannonP99: result.latency.p99,
      });
    });
    instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
      times.push(responseTime);
    });
  });
}

/** What {@link runPacedLoad} asks of the paced client process. */
export interface PacedLoadRequest {
  base: string;
  path: string;
  key?: string;
  rate: number;
  seconds: number;
  /** The client's scheduling priority (see priority.ts); unset: inherited. */
  priority?: SchedulingPriority;
}

/** An even-rate run: times from each request's due time (see paced-client.ts). */
export interface PacedLoadResult extends ResponseTimes {
  /** The rate the requests actually left at. */
  sentRate: number;
  /** How late the client sent, p99: near zero, or the client is what was measured. */
  generatorLateP99: number;
}

/**
 * `rate` requests a second, evenly spaced, from a process of their own. autocannon's
 * `overallRate` is not that: each connection sends back to back until it has used its quota for
 * the second, then waits for the next second (lib/httpClient.js `reqsMadeThisSecond`), so the
 * whole second's requests arrive at once, as many at a time as there are connections.
 */
export function runPacedLoad(o: PacedLoadRequest): Promise<PacedLoadResult> {
  const child = fork(new URL('./paced-client.ts', import.meta.url), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  return new Promise((resolve, reject) => {
    child.once('message', (msg: { result?: PacedLoadResult; error?: string }) => (msg.result ? resolve(msg.result) : reject(new Error(msg.error))));
    child.once('exit', (code) => reject(new Error(`paced client exited with ${code}`)));
    child.send(o);
  });
}
