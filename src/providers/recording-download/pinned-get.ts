/**
 * @module One HTTPS GET whose connection goes to an address checked beforehand: the socket's
 * name lookup is the outbound-address policy's pinned one (common/outbound-policy), while TLS still verifies the
 * certificate against the URL's host name (SNI and RFC 6125 name checks). The body is read
 * under a byte cap.
 */
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { stripBrackets } from '../../common/address-policy.js';
import { pinnedLookup } from '../../common/outbound-policy.js';

/** What one request produced. Redirects are returned to the caller, who checks the next hop. */
export type HopResult =
  | { kind: 'body'; bytes: Buffer; mediaType: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'fail'; reason: 'http_status' | 'too_large' | 'timeout' | 'network_error' | 'tls_error' | 'address_refused'; detail: string };

export interface PinnedGetOptions {
  /** The checked address the connection must go to. */
  address: string;
  family: 4 | 6;
  maxBytes: number;
  /** Aborted when the overall time cap is reached. */
  signal: AbortSignal;
  /** Trust anchors (PEM) replacing the system store; unset in production. */
  ca?: string | Buffer | readonly (string | Buffer)[];
}

// RFC 9110 §15.4: these redirect statuses carry a Location to follow; 300 and 304 do not.
const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const TOKEN = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/;

/** The type/subtype of a Content-Type, or octet-stream when absent or malformed. */
function mediaTypeOf(contentType: string | undefined): string {
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase();
  return TOKEN.test(type) && type.length <= 127 ? type : 'application/octet-stream';
}

const TLS_CODES = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|ALTNAME/;

function failureOf(err: NodeJS.ErrnoException, signal: AbortSignal): HopResult {
  if (signal.aborted) return { kind: 'fail', reason: 'timeout', detail: 'time limit reached' };
  const code = err.code ?? 'ERROR';
  return { kind: 'fail', reason: TLS_CODES.test(code) ? 'tls_error' : 'network_error', detail: code };
}

/** Sockets may be reported as `::ffff:a.b.c.d` for an IPv4 connection. */
const sameAddress = (a: string | undefined, b: string): boolean =>
  a !== undefined && a.replace(/^::ffff:(?=\d+\.)/i, '').toLowerCase() === b.replace(/^::ffff:(?=\d+\.)/i, '').toLowerCase();

/** Reads the body up to the cap; more bytes, declared or sent, end the request. */
function readBody(res: IncomingMessage, maxBytes: number, finish: (r: HopResult) => void): void {
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes) {
    finish({ kind: 'fail', reason: 'too_large', detail: `declared ${declared} bytes` });
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  res.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > maxBytes) finish({ kind: 'fail', reason: 'too_large', detail: `more than ${maxBytes} bytes` });
    else chunks.push(chunk);
  });
  res.on('end', () => finish({ kind: 'body', bytes: Buffer.concat(chunks, received), mediaType: mediaTypeOf(res.headers['content-type']) }));
}

function handleResponse(res: IncomingMessage, options: PinnedGetOptions, finish: (r: HopResult) => void): void {
  if (!sameAddress(res.socket.remoteAddress, options.address)) {
    // Cannot happen while the lookup below is in place; refuse loudly rather than trust it.
    finish({ kind: 'fail', reason: 'address_refused', detail: 'connected to an unchecked address' });
    return;
  }
  const status = res.statusCode ?? 0;
  if (REDIRECTS.has(status)) {
    const location = res.headers.location;
    if (location) finish({ kind: 'redirect', location });
    else finish({ kind: 'fail', reason: 'http_status', detail: `${status} without Location` });
    return;
  }
  if (status !== 200) {
    finish({ kind: 'fail', reason: 'http_status', detail: String(status) });
    return;
  }
  readBody(res, options.maxBytes, finish);
}

/** GET `url` over a connection to `options.address`. Never rejects. */
export function pinnedGet(url: URL, options: PinnedGetOptions): Promise<HopResult> {
  const host = stripBrackets(url.hostname);
  return new Promise<HopResult>((resolve) => {
    let done = false;
    const req = request({
      host,
      port: url.port === '' ? 443 : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      // TLS SNI carries names only (RFC 6066 §3); for an IP literal the certificate is checked against the IP.
      servername: isIP(host) === 0 ? host : '',
      lookup: pinnedLookup(options.address, options.family),
      // A fresh connection per request: a pooled socket could have been opened to another address.
      agent: false,
      ca: options.ca as string | Buffer | (string | Buffer)[] | undefined,
      signal: options.signal,
      headers: { accept: 'audio/*, application/octet-stream;q=0.9, */*;q=0.1', 'user-agent': 'voice-gateway-recording-archiver' },
    });
    const finish = (result: HopResult): void => {
      if (done) return;
      done = true;
      resolve(result);
      req.destroy();
    };
    req.on('response', (res) => {
      res.on('error', (err: NodeJS.ErrnoException) => finish(failureOf(err, options.signal)));
      // A body cut short ends in 'close' without 'end'; 'end' always comes first when complete.
      res.on('close', () => finish(failureOf(Object.assign(new Error('closed'), { code: 'ECONNRESET' }), options.signal)));
      handleResponse(res, options, finish);
    });
    req.on('error', (err: NodeJS.ErrnoException) => finish(failureOf(err, options.signal)));
    req.end();
  });
}
