/**
 * @module Admission of request bodies before a byte of them is read (docs/SECURITY.md, Request
 * bodies): a declared length over the route's limit is a 413 at once, and a body that may be
 * large (over `largeBodyBytes`, of unknown length, or compressed) needs one of a bounded number of
 * slots, per client address and overall. The router closes the connection of a request refused
 * before its body is read whole ({@link closeAfterAnswer}), so the rest is neither buffered nor read.
 */
import type { Context } from 'koa';
import { ApiError } from '../../common/errors.js';

export interface BodyAdmissionOptions {
  /** A body that may be larger than this needs a slot. */
  largeBodyBytes: number;
  /** Large bodies in flight from one client address at most. */
  maxLargeBodiesPerClient: number;
  /** Large bodies in flight in the whole process at most. */
  maxLargeBodies: number;
}

/** Seconds a client refused a slot is told to wait: about the time a large body takes to arrive. */
export const LARGE_BODY_RETRY_AFTER_SECONDS = 5;

/** Gives back a slot once the request is over; a no-op for a body that needed none. */
export type ReleaseSlot = () => void;

const NO_SLOT: ReleaseSlot = () => undefined;

/** The declared length, or undefined when the request does not declare one (chunked). */
function declaredLength(ctx: Context): number | undefined {
  const header = ctx.get('Content-Length');
  return /^[0-9]+$/.test(header) ? Number(header) : undefined;
}

/** A compressed body's size is known only once decoded, so it may be as large as the limit. */
function isEncoded(ctx: Context): boolean {
  const encoding = ctx.get('Content-Encoding').trim().toLowerCase();
  return encoding !== '' && encoding !== 'identity';
}

/** A connection closed after a refusal is destroyed once the client has sent nothing for this long… */
export const LINGER_IDLE_MS = 5_000;
/** …or this long after the answer, whatever it still sends (nginx's lingering_timeout and lingering_time). */
export const LINGER_MAX_MS = 30_000;

/**
 * Closes the connection once the answer is out: a lingering close, as HTTP servers do after an
 * early answer (RFC 9112 9.6). The answer is sent, then our side of the connection is shut; what
 * the client still sends is discarded, unbuffered, while it keeps sending (at most LINGER_MAX_MS),
 * and the socket is destroyed once it has been quiet for LINGER_IDLE_MS. Destroying it while data
 * still arrives resets the connection, and a reset can discard the answer before a busy client
 * reads it. Activity is read from `bytesRead`: the HTTP parser consumes the socket natively, so
 * no 'data' events are seen here.
 */
export function closeAfterAnswer(ctx: Context): void {
  const socket = ctx.req.socket;
  // Node's server ends a `Connection: close` answer with destroySoon(), which destroys the socket
  // as soon as the answer is flushed; the half-close is kept and the destroy left to the linger.
  socket.destroySoon = () => { socket.end(); };
  ctx.res.once('finish', () => {
    socket.end();
    let seen = socket.bytesRead;
    let waited = 0;
    const timer = setInterval(() => {
      waited += LINGER_IDLE_MS;
      if (socket.bytesRead === seen || waited >= LINGER_MAX_MS) socket.destroy();
      seen = socket.bytesRead;
    }, LINGER_IDLE_MS);
    timer.unref();
    socket.once('close', () => clearInterval(timer));
  });
}

export class BodyAdmission {
  readonly #options: BodyAdmissionOptions;
  readonly #perClient = new Map<string, number>();
  #inFlight = 0;

  constructor(options: BodyAdmissionOptions) {
    this.#options = options;
  }

  /** Large bodies being received or handled now (for tests and metrics). */
  get inFlight(): number {
    return this.#inFlight;
  }

  /**
   * Checks a request whose body is about to be read under `limit` bytes. Throws 413 when its
   * declared length is over the limit, 429 `rate_limited` when its client holds all its slots,
   * 503 `unavailable` when every slot is taken; otherwise returns the release of its slot.
   */
  admit(ctx: Context, limit: number): ReleaseSlot {
    const length = declaredLength(ctx);
    if (length !== undefined && length > limit) {
      throw new ApiError(413, 'payload_too_large', `The request body is over ${limit} bytes.`);
    }
    const mayReach = length === undefined || isEncoded(ctx) ? limit : length;
    if (mayReach <= this.#options.largeBodyBytes) return NO_SLOT;
    const client = ctx.ip;
    const held = this.#perClient.get(client) ?? 0;
    const retry = { headers: { 'Retry-After': String(LARGE_BODY_RETRY_AFTER_SECONDS) } };
    if (held >= this.#options.maxLargeBodiesPerClient) {
      throw new ApiError(429, 'rate_limited', 'Too many large request bodies from this address at once; retry later.', retry);
    }
    if (this.#inFlight >= this.#options.maxLargeBodies) {
      throw new ApiError(503, 'unavailable', 'Too many large request bodies at once; retry later.', retry);
    }
    this.#perClient.set(client, held + 1);
    this.#inFlight += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#inFlight -= 1;
      const left = (this.#perClient.get(client) ?? 1) - 1;
      if (left > 0) this.#perClient.set(client, left);
      else this.#perClient.delete(client);
    };
  }
}
