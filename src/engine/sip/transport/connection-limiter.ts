/**
 * @module ConnectionLimiter: caps on inbound SIP TCP/TLS connections, per source address and
 * overall, counted from the moment a socket is accepted (before any TLS handshake), so a peer
 * cannot hold more descriptors than its share (docs/RELIABILITY.md, "Descriptor budget").
 */

/** Options of a {@link ConnectionLimiter}. */
export interface ConnectionLimits {
  /** Inbound connections from ordinary sources, every stream listener together. */
  maxConnections: number;
  /** Inbound connections from one ordinary source address. */
  maxPerSource: number;
  /**
   * Sources with a cap of their own (`maxPerTrustedSource`) that are left out of `maxConnections`,
   * so that a flood from elsewhere cannot lock them out (the gateway's carriers).
   */
  isTrustedSource?: (address: string) => boolean;
  maxPerTrustedSource?: number;
}

/** Why a connection was refused (the label of the refusal metric). */
export type ConnectionRefusal = 'max-connections' | 'max-connections-per-source';

/** A slot for one connection, or the reason there is none. */
export type ConnectionAdmission = { ok: true; release(): void } | { ok: false; reason: ConnectionRefusal };

/** Counts open inbound connections by source address; O(1) per accept and close. */
export class ConnectionLimiter {
  readonly #limits: ConnectionLimits;
  readonly #bySource = new Map<string, number>();
  #ordinary = 0;
  #trusted = 0;

  constructor(limits: ConnectionLimits) {
    this.#limits = limits;
  }

  /** Inbound connections open now, trusted sources included. */
  get open(): number {
    return this.#ordinary + this.#trusted;
  }

  /**
   * Takes a slot for a new connection from `address`, or says why there is none. The slot is
   * given back by `release` (idempotent) when the connection closes.
   */
  admit(address: string): ConnectionAdmission {
    const trusted = this.#limits.isTrustedSource?.(address) ?? false;
    const perSource = trusted ? (this.#limits.maxPerTrustedSource ?? this.#limits.maxPerSource) : this.#limits.maxPerSource;
    const count = this.#bySource.get(address) ?? 0;
    if (count >= perSource) return { ok: false, reason: 'max-connections-per-source' };
    if (!trusted && this.#ordinary >= this.#limits.maxConnections) return { ok: false, reason: 'max-connections' };
    this.#bySource.set(address, count + 1);
    if (trusted) this.#trusted += 1;
    else this.#ordinary += 1;
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        const left = (this.#bySource.get(address) ?? 1) - 1;
        if (left <= 0) this.#bySource.delete(address);
        else this.#bySource.set(address, left);
        if (trusted) this.#trusted -= 1;
        else this.#ordinary -= 1;
      },
    };
  }
}
