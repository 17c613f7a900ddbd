/** @module SipStreamFramer: cuts a TCP or TLS byte stream into SIP messages by Content-Length (RFC 3261 18.3). */
import { parseContentLength } from '../grammar/cseq.js';
import { trimWs } from '../grammar/lexical.js';
import { SipParseError } from '../grammar/parse-error.js';
import { headerKey } from './header-names.js';
import { parseMessage, type ParseOutcome } from './message-parser.js';
import type { SipRequest } from './sip-message.js';

export interface SipStreamFramerOptions {
  /** Largest message (headers and body) accepted; larger ones end the stream with 513. */
  maxMessageSize: number;
  /** A complete message arrived: parsed, or not (then answer 400 and keep the stream). */
  onMessage(outcome: ParseOutcome, raw: Buffer): void;
  /** RFC 5626 4.4.1: a double-CRLF ping arrived; the transport answers with a single CRLF pong. */
  onKeepAlive?(): void;
  /**
   * The stream cannot be framed any more (oversized message, unreadable Content-Length). The
   * framer ignores all further input; the transport sends `error.status` when `request` is
   * present, then closes the connection.
   */
  onError(error: SipParseError, request?: SipRequest): void;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');
const EMPTY = Buffer.alloc(0);
/** Smallest buffer allocated for a partial message; chunks at least this large are kept without a copy. */
const MIN_CAPACITY = 4096;

/**
 * Push chunks as they arrive; complete messages come out through the callbacks in order.
 * Split and joined messages are both handled: the header end is searched from where the previous
 * search stopped, and chunks are appended into spare capacity of a buffer that grows by doubling,
 * so a sender dribbling a message octet by octet costs linear time, not one copy of everything
 * buffered per chunk. Octets already handed out in a message are never written over: the
 * messages' bodies are views into that buffer.
 */
export class SipStreamFramer {
  readonly #options: SipStreamFramerOptions;
  /** Octets `#start` to `#end` of `#store` are received and not yet consumed; `#end` onward is spare. */
  #store: Buffer = EMPTY;
  #start = 0;
  #end = 0;
  #scanFrom = 0;
  #needed = -1;
  #failed = false;

  constructor(options: SipStreamFramerOptions) {
    this.#options = options;
  }

  /** Octets received but not yet part of a complete message. */
  get buffered(): number {
    return this.#end - this.#start;
  }

  get failed(): boolean {
    return this.#failed;
  }

  push(chunk: Buffer): void {
    if (this.#failed || chunk.length === 0) return;
    this.#append(chunk);
    while (!this.#failed && this.#end > this.#start && this.#step()) {
      // each step consumes a keep-alive or a message
    }
  }

  #append(chunk: Buffer): void {
    const live = this.#end - this.#start;
    if (live === 0 && chunk.length >= MIN_CAPACITY) {
      // Nothing pending: take a large chunk as it is, without copying.
      [this.#store, this.#start, this.#end] = [chunk, 0, chunk.length];
      return;
    }
    if (this.#end + chunk.length > this.#store.length) {
      // A new buffer rather than compacting in place: earlier messages' bodies still view the old one.
      const next = Buffer.allocUnsafe(Math.max(MIN_CAPACITY, 2 * (live + chunk.length)));
      this.#store.copy(next, 0, this.#start, this.#end);
      [this.#store, this.#start, this.#end] = [next, 0, live];
    }
    chunk.copy(this.#store, this.#end);
    this.#end += chunk.length;
  }

  #consume(n: number): void {
    this.#start += n;
    if (this.#start === this.#end) [this.#store, this.#start, this.#end] = [EMPTY, 0, 0];
  }

  /** Consumes one unit from the buffer; false when more input is needed. */
  #step(): boolean {
    const buf = this.#store.subarray(this.#start, this.#end);
    if (buf[0] === 0x0d || buf[0] === 0x0a) return this.#skipCrlf(buf);
    if (this.#needed < 0) {
      const headEnd = buf.indexOf(CRLFCRLF, Math.max(0, this.#scanFrom - 3));
      if (headEnd < 0) {
        this.#scanFrom = buf.length;
        if (buf.length > this.#options.maxMessageSize) this.#fail(new SipParseError('header section too large', 513));
        return false;
      }
      const length = contentLengthOf(buf.toString('latin1', 0, headEnd));
      if (length instanceof SipParseError) return this.#fail(length, requestHead(buf, headEnd));
      this.#needed = headEnd + 4 + length;
      if (this.#needed > this.#options.maxMessageSize) {
        return this.#fail(new SipParseError('message too large', 513), requestHead(buf, headEnd));
      }
    }
    if (buf.length < this.#needed) return false;
    const raw = buf.subarray(0, this.#needed);
    this.#consume(this.#needed);
    this.#needed = -1;
    this.#scanFrom = 0;
    this.#options.onMessage(parseMessage(raw, { stream: true }), raw);
    return true;
  }

  /** CRLFs between messages: a CRLFCRLF is a keep-alive ping, a lone CRLF a pong (RFC 5626 3.5.1). */
  #skipCrlf(buf: Buffer): boolean {
    if (buf.length >= 4 && buf.indexOf(CRLFCRLF) === 0) {
      this.#consume(4);
      this.#options.onKeepAlive?.();
      return true;
    }
    if (buf.length >= 3 && buf[0] === 0x0d && buf[1] === 0x0a && buf[2] !== 0x0d) {
      this.#consume(2);
      return true;
    }
    if (buf.length < 4) return false;
    // A stray CR or LF not forming CRLF: drop it rather than stall.
    this.#consume(1);
    return true;
  }

  #fail(error: SipParseError, request?: SipRequest): false {
    this.#failed = true;
    [this.#store, this.#start, this.#end] = [EMPTY, 0, 0];
    this.#options.onError(error, request);
    return false;
  }
}

/** Content-Length from raw header text; RFC 3261 18.3 requires it on streams, so absence reads as 0. */
function contentLengthOf(head: string): number | SipParseError {
  let found: number | undefined;
  for (const line of head.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0 || line.charCodeAt(0) === 0x20 || line.charCodeAt(0) === 0x09) continue;
    if (headerKey(trimWs(line.slice(0, colon))) !== 'content-length') continue;
    if (found !== undefined) return new SipParseError('more than one Content-Length');
    try {
      found = parseContentLength(line.slice(colon + 1));
    } catch (err) {
      return err as SipParseError;
    }
  }
  return found ?? 0;
}

/** The request whose header section ends at `headEnd`, for answering before the stream closes. */
function requestHead(buf: Buffer, headEnd: number): SipRequest | undefined {
  const outcome = parseMessage(buf.subarray(0, headEnd + 4), { stream: true });
  if (outcome.ok) return outcome.message.kind === 'request' ? outcome.message : undefined;
  return outcome.request;
}
