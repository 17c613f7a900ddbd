/** @module The part of autocannon's programmatic API the calls benchmark uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  interface Options {
    url: string;
    method?: string;
    headers?: Record<string, string>;
    connections?: number;
    /** Seconds. */
    duration?: number;
    /** Requests per second over all connections. */
    overallRate?: number;
  }

  /** Percentiles in ms (latency) or per second (requests); autocannon's histograms keep whole units. */
  interface Histogram {
    average: number;
    min: number;
    max: number;
    p50: number;
    p90: number;
    p99: number;
    p99_9: number;
    total: number;
    sent: number;
  }

  interface Result {
    latency: Histogram;
    requests: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    '2xx': number;
  }

  /** Emits `response` (client, statusCode, bytes, responseTime in ms as a float) for every answer. */
  type Instance = EventEmitter;

  function autocannon(options: Options, done: (err: Error | null, result: Result) => void): Instance;
  export default autocannon;
}
