/** @module Even RTP ports from a configured range, RTCP on the odd port above (RFC 3550 §11). */
import { InvariantError } from '../../../common/errors.js';

/** The range a {@link PortPool} hands out, both ends inclusive. */
export interface PortRange {
  min: number;
  max: number;
}

/** Returned when no port pair is free: the caller answers 503 (RFC 3261 §21.5.4). */
export interface PortsExhausted {
  error: 'ports-exhausted';
}

/**
 * Hands out even ports so that port+1 stays free for RTCP (RFC 3550 §11: RTP uses an even port
 * and RTCP the next higher odd one). Round-robin, so a port just released is reused last and late
 * packets of a finished call do not land in a new one.
 */
export class PortPool {
  readonly #free: number[] = [];
  readonly #used = new Set<number>();

  constructor(range: PortRange) {
    const first = range.min % 2 === 0 ? range.min : range.min + 1;
    if (first + 1 > range.max || range.max > 65535 || range.min < 1024) {
      throw new RangeError(`port range ${range.min}-${range.max} holds no RTP/RTCP pair`);
    }
    for (let port = first; port + 1 <= range.max; port += 2) this.#free.push(port);
  }

  get available(): number {
    return this.#free.length;
  }

  get inUse(): number {
    return this.#used.size;
  }

  /** The next free even port, or {@link PortsExhausted}. */
  allocate(): number | PortsExhausted {
    const port = this.#free.shift();
    if (port === undefined) return { error: 'ports-exhausted' };
    this.#used.add(port);
    return port;
  }

  /** Returns a port to the back of the queue; releasing a port twice is a bug. */
  release(port: number): void {
    if (!this.#used.delete(port)) throw new InvariantError(`port ${port} released but not allocated`);
    this.#free.push(port);
  }
}

export function isPortsExhausted(value: unknown): value is PortsExhausted {
  return typeof value === 'object' && value !== null && (value as { error?: unknown }).error === 'ports-exhausted';
}
