/**
 * @module Load against the listening API with autocannon: per-status counts, the measured span
 * from the first to the last answer, and every 429 checked for problem+json `rate_limited` with
 * Retry-After, so rate-limit tests assert on counts and never on latency.
 */
import type { EventEmitter } from 'node:events';
import autocannon from 'autocannon';

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  setupRequest?: (request: AutocannonRequest) => AutocannonRequest;
  onResponse?: (status: number, body: string, context: unknown, headers: Record<string, string | string[]>) => void;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  duration?: number;
  amount?: number;
  overallRate?: number;
  headers?: Record<string, string>;
  requests?: AutocannonRequest[];
}

interface AutocannonResult { errors: number; timeouts: number }

// The package ships no types; bench/calls/autocannon.d.ts declares the part the benchmark uses.
const run = autocannon as unknown as (options: AutocannonOptions, done: (err: Error | null, result: AutocannonResult) => void) => EventEmitter;

export interface LoadOptions {
  base: string;
  path: string;
  connections: number;
  /** Seconds of load, or a number of requests (`amount`). */
  seconds?: number;
  amount?: number;
  /** Requests per second over all connections; as fast as possible when absent. */
  rate?: number;
  /** Headers per request (called for each one, so every request may differ). */
  headers: () => Record<string, string>;
}

export interface LoadResult {
  byStatus: Map<number, number>;
  /** Milliseconds from the first answer to the last. */
  spanMs: number;
  errors: number;
  /** 429s whose body or headers broke the contract (problem+json, `rate_limited`, Retry-After). */
  bad429: string[];
}

export const count = (r: LoadResult, status: number): number => r.byStatus.get(status) ?? 0;
export const total = (r: LoadResult): number => [...r.byStatus.values()].reduce((a, b) => a + b, 0);

function check429(body: string, headers: Record<string, string | string[]>): string | undefined {
  const header = (name: string): string => {
    const v = Object.entries(headers).find(([k]) => k.toLowerCase() === name)?.[1];
    return Array.isArray(v) ? v.join(',') : v ?? '';
  };
  if (!/^[1-9]\d*$/.test(header('retry-after'))) return `Retry-After ${header('retry-after') || '(none)'}`;
  if (!header('content-type').startsWith('application/problem+json')) return `content-type ${header('content-type')}`;
  try {
    const problem = JSON.parse(body) as { status?: unknown; code?: unknown };
    return problem.status === 429 && problem.code === 'rate_limited' ? undefined : `body ${body.slice(0, 100)}`;
  } catch {
    return `body ${body.slice(0, 100)}`;
  }
}

export function load(o: LoadOptions): Promise<LoadResult> {
  const result: LoadResult = { byStatus: new Map(), spanMs: 0, errors: 0, bad429: [] };
  let first = 0;
  let last = 0;
  const onResponse = (status: number, body: string, _context: unknown, headers: Record<string, string | string[]>): void => {
    last = performance.now();
    if (first === 0) first = last;
    result.byStatus.set(status, (result.byStatus.get(status) ?? 0) + 1);
    if (status === 429 && result.bad429.length < 5) {
      const fault = check429(body, headers);
      if (fault) result.bad429.push(fault);
    }
  };
  return new Promise((resolve, reject) => {
    run({
      url: `${o.base}${o.path}`, connections: o.connections,
      ...(o.amount !== undefined ? { amount: o.amount } : { duration: o.seconds ?? 1 }),
      ...(o.rate !== undefined ? { overallRate: o.rate } : {}),
      requests: [{ method: 'GET', path: o.path, setupRequest: (request) => ({ ...request, headers: { ...request.headers, ...o.headers() } }), onResponse }],
    }, (err, done) => {
      if (err) {
        reject(err);
        return;
      }
      result.spanMs = last - first;
      result.errors = done.errors + done.timeouts;
      resolve(result);
    });
  });
}
