/** @module The SIP message model: SipRequest and SipResponse with raw headers and parsed-on-demand getters. */
import { parseCSeq, parseMaxForwards, type CSeq } from '../grammar/cseq.js';
import { parseNameAddr, type NameAddr } from '../grammar/name-addr.js';
import { SipParseError } from '../grammar/parse-error.js';
import { parseVia, type Via } from '../grammar/via.js';
import { SipHeaders, splitList } from './sip-headers.js';

export { SipHeaders } from './sip-headers.js';

const EMPTY = Buffer.alloc(0);

/**
 * What both message kinds share. Getters parse their header on first use and cache the result
 * for as long as the header's text is unchanged. On a message accepted by `parseMessage` the
 * getters for Via, From, To, Call-ID and CSeq never throw; on a message built by hand they throw
 * {@link SipParseError} when the header is missing or malformed.
 */
abstract class SipMessageBase {
  headers: SipHeaders;
  body: Buffer;
  #memo = new Map<string, { raw: string; value: unknown }>();

  constructor(headers?: SipHeaders, body?: Buffer) {
    this.headers = headers ?? new SipHeaders();
    this.body = body ?? EMPTY;
  }

  #cached<T>(key: string, raw: string, parse: (s: string) => T): T {
    const hit = this.#memo.get(key);
    if (hit !== undefined && hit.raw === raw) return hit.value as T;
    const value = parse(raw);
    this.#memo.set(key, { raw, value });
    return value;
  }

  #required(name: string): string {
    const v = this.headers.get(name);
    if (v === undefined) throw new SipParseError(`missing ${name}`);
    return v;
  }

  /** Call-ID value, '' when absent. */
  get callId(): string {
    return this.headers.get('Call-ID') ?? '';
  }

  get cseq(): CSeq {
    return this.#cached('cseq', this.#required('CSeq'), parseCSeq);
  }

  get from(): NameAddr {
    return this.#cached('from', this.#required('From'), parseNameAddr);
  }

  get to(): NameAddr {
    return this.#cached('to', this.#required('To'), parseNameAddr);
  }

  /** The first Via element (the one this hop added or must answer to). */
  get topVia(): Via {
    const first = splitList(this.#required('Via'))[0] ?? '';
    return this.#cached('via', first, parseVia);
  }

  /** Every Via element, top first. */
  get vias(): Via[] {
    return this.headers.getAll('Via').map((v) => this.#cached(`via:${v}`, v, parseVia));
  }

  /** Max-Forwards, or undefined when absent (RFC 2543 peers omit it, RFC 4475 3.4.1). */
  get maxForwards(): number | undefined {
    const raw = this.headers.get('Max-Forwards');
    return raw === undefined ? undefined : this.#cached('mf', raw, parseMaxForwards);
  }

  /** Contact elements parsed as name-addr; '*' (REGISTER) is left out. */
  get contacts(): NameAddr[] {
    return this.headers
      .getAll('Contact')
      .filter((c) => c !== '*')
      .map((c) => this.#cached(`contact:${c}`, c, parseNameAddr));
  }
}

/** A SIP request (RFC 3261 7.1). `uri` is the Request-URI text; parse it with `parseUri` when needed. */
export class SipRequest extends SipMessageBase {
  readonly kind = 'request' as const;
  method: string;
  uri: string;

  constructor(method: string, uri: string, headers?: SipHeaders, body?: Buffer) {
    super(headers, body);
    this.method = method;
    this.uri = uri;
  }

  clone(): SipRequest {
    return new SipRequest(this.method, this.uri, this.headers.clone(), this.body);
  }
}

/** A SIP response (RFC 3261 7.2). */
export class SipResponse extends SipMessageBase {
  readonly kind = 'response' as const;
  status: number;
  reason: string;

  constructor(status: number, reason: string, headers?: SipHeaders, body?: Buffer) {
    super(headers, body);
    this.status = status;
    this.reason = reason;
  }

  clone(): SipResponse {
    return new SipResponse(this.status, this.reason, this.headers.clone(), this.body);
  }
}

export type SipMessage = SipRequest | SipResponse;

export type { CSeq, NameAddr, Via };
