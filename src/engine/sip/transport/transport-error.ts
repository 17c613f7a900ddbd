/** @module TransportError: every socket failure of the SIP transports, converted at the boundary. */

/** Same union as `TransportProtocol` in transport.ts (kept here so the two files do not import each other). */
type TransportProtocol = 'UDP' | 'TCP' | 'TLS';

/**
 * Thrown (as a rejected send) or reported (through the delegate's `onError`) when a socket fails:
 * bind, connect, write, TLS handshake or an unexpected close. `code` is the system error code
 * (ECONNREFUSED, EADDRINUSE...) when there is one. The transaction layer treats a send failure
 * as RFC 3261 17.1.4 transport error (503 to the TU for client transactions).
 */
export class TransportError extends Error {
  override readonly name = 'TransportError';
  readonly protocol: TransportProtocol;
  readonly code: string | undefined;
  readonly address: string | undefined;
  readonly port: number | undefined;

  constructor(message: string, options: { protocol: TransportProtocol; address?: string; port?: number; cause?: unknown }) {
    super(message, { cause: options.cause });
    this.protocol = options.protocol;
    this.address = options.address;
    this.port = options.port;
    const cause = options.cause as { code?: unknown } | undefined;
    this.code = typeof cause?.code === 'string' ? cause.code : undefined;
  }

  /** Wraps any thrown value from a socket API. */
  static from(err: unknown, what: string, options: { protocol: TransportProtocol; address?: string; port?: number }): TransportError {
    if (err instanceof TransportError) return err;
    const detail = err instanceof Error ? err.message : String(err);
    return new TransportError(`${what}: ${detail}`, { ...options, cause: err });
  }
}
