/**
 * @module One autocannon run at a fixed overall rate. Latency percentiles are computed here from
 * every response's own time (sub-millisecond, no correction), because autocannon's histogram keeps
 * whole milliseconds and its coordinated-omission correction assumes a 1 ms interval whatever
 * the rate; its own p99 is kept beside ours for reference.
 */
import autocannon from 'autocannon';

export interface ApiLoadResult {
  label: string;
  path: string;
  requests: number;
  /** Requests answered per second over the run. */
  achievedRate: number;
  non2xx: number;
  errors: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** autocannon's own p99 (whole ms, its correction applied). */
  autocannonP99: number;
}

export function percentile(sorted: readonly number[], p: number): number {
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
