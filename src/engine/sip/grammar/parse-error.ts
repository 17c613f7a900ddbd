/** @module The one error type of the SIP grammar: malformed input, with the status a UAS should answer. */

/**
 * Thrown by the grammar parsers (and carried as a value by `parseMessage`) when input does not
 * match the RFC 3261 section 25 ABNF. `status` is the response a UAS sends for a malformed
 * request: 400 for syntax, 505 for an unsupported SIP version (RFC 3261 8.2.2).
 */
export class SipParseError extends Error {
  override readonly name = 'SipParseError';
  /** Short human-readable cause, also used as the reason phrase detail. */
  readonly reason: string;
  /** Response status for a malformed request: 400, 505 or 513. */
  readonly status: number;

  constructor(reason: string, status = 400, options?: { cause?: unknown }) {
    super(reason, options);
    this.reason = reason;
    this.status = status;
  }
}
