/**
 * @module One delivery attempt of one event to one webhook endpoint (docs/EVENTS.md "Delivery"):
 * the endpoint's host resolved and checked by the outbound-address policy at each attempt and the
 * connection pinned to the address checked (a DNS answer that changes cannot redirect it; a
 * connection kept open is reused only to that same address, see endpoint-connections), a POST
 * of the signed envelope, a 10 s limit for the whole exchange, no redirect followed (a 3xx is a
 * failure), and at most {@link MAX_RESPONSE_BYTES} of the answer kept for the delivery log.
 */
import { request as httpRequest, type IncomingMessage, type RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { stripBrackets } from '../common/address-policy.js';
import { pinHost, tenantHostResolver, type HostResolver, type OutboundAddressPolicy } from '../common/outbound-policy.js';
import { EndpointConnections } from './endpoint-connections.js';
import { EVENT_ID_HEADER, EVENT_TYPE_HEADER, SIGNATURE_HEADER, signDelivery } from './signature.js';

export const DELIVERY_TIMEOUT_MS = 10_000;
/** What is kept of an endpoint's answer: enough for an error message, never a download. */
export const MAX_RESPONSE_BYTES = 4_096;

export interface DeliveryRequest {
  url: string;
  eventId: string;
  eventType: string;
  /** The envelope as sent: the signature covers these exact bytes. */
  body: string;
  /** The endpoint's secrets in force, newest first. */
  secrets: readonly string[];
}

export type DeliveryResult =
  | { ok: true; status: number; durationMs: number; responseBody: string }
  | { ok: false; status: number | null; durationMs: number; error: string; responseBody: string | null };

export interface EndpointSenderOptions {
  policy: OutboundAddressPolicy;
  /** `http://` endpoints too (config `events.allow_http`); https only otherwise. */
  allowHttp: boolean;
  timeoutMs?: number;
  /** Extra CAs to trust (config `events.ca_file`: a private PKI, the tests' throwaway CA). */
  ca?: string;
  resolve?: HostResolver;
  nowMs?: () => number;
}

export class EndpointSender {
  readonly #o: EndpointSenderOptions;
  readonly #connections = new EndpointConnections();

  constructor(o: EndpointSenderOptions) {
    this.#o = o;
  }

  async deliver(r: DeliveryRequest): Promise<DeliveryResult> {
    const started = performance.now();
    const elapsed = (): number => Math.round(performance.now() - started);
    const fail = (error: string, status: number | null = null, responseBody: string | null = null): DeliveryResult => ({ ok: false, status, durationMs: elapsed(), error, responseBody });
    let url: URL;
    try {
      url = new URL(r.url);
    } catch {
      return fail('the endpoint URL does not parse');
    }
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && this.#o.allowHttp)) return fail(`${url.protocol} endpoints are not allowed`);
    const pinned = await pinHost(stripBrackets(url.hostname), this.#o.policy, this.#o.resolve ?? tenantHostResolver);
    if (!pinned.ok) return fail(`endpoint address refused: ${pinned.detail}`);
    const nowS = Math.floor((this.#o.nowMs?.() ?? Date.now()) / 1000);
    const headers = {
      'content-type': 'application/json', 'user-agent': 'vgw-events/1.0',
      [SIGNATURE_HEADER]: signDelivery(r.secrets, nowS, r.body), [EVENT_ID_HEADER]: r.eventId, [EVENT_TYPE_HEADER]: r.eventType,
    };
    const options: RequestOptions = {
      method: 'POST', headers, lookup: pinned.lookup, agent: this.#connections.agent(url, pinned.address), ...(this.#o.ca ? { ca: this.#o.ca } : {}),
    };
    const first = await this.#post(url, options, r.body, elapsed);
    // A kept connection the endpoint closed as this delivery went out (a race node:http
    // documents): once more, on another connection. Delivery is at least once either way.
    return first.staleConnection ? (await this.#post(url, options, r.body, elapsed)).result : first.result;
  }

  /** Closes the connections kept open. */
  close(): void {
    this.#connections.close();
  }

  #post(url: URL, options: RequestOptions, body: string, elapsed: () => number): Promise<{ result: DeliveryResult; staleConnection: boolean }> {
    const fail = (error: string, status: number | null = null, responseBody: string | null = null): DeliveryResult => ({ ok: false, status, durationMs: elapsed(), error, responseBody });
    const timeoutMs = this.#o.timeoutMs ?? DELIVERY_TIMEOUT_MS;
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve) => {
      let settled = false;
      /** `keep`: the answer was read to its end, so its connection can carry the next delivery. */
      const settle = (result: DeliveryResult, keep = false, staleConnection = false): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (!keep) req.destroy();
        resolve({ result, staleConnection });
      };
      const req = send(url, options, (res) => void readLimited(res).then(({ text, whole }) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) settle({ ok: true, status, durationMs: elapsed(), responseBody: text }, whole);
        else settle(fail(status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`, status, text), whole);
      }, (err: Error) => settle(fail(`answer not read: ${err.message}`, res.statusCode ?? null))));
      const timer = setTimeout(() => settle(fail(`no answer within ${timeoutMs} ms`)), timeoutMs);
      req.on('error', (err: NodeJS.ErrnoException) => settle(
        fail(err.code ? `${err.code}: ${err.message}` : err.message), false,
        req.reusedSocket && (err.code === 'ECONNRESET' || err.code === 'EPIPE'),
      ));
      req.end(body);
    });
  }
}

/** The answer's body as text, cut at MAX_RESPONSE_BYTES (the rest is not read); `whole` when it was read to its end. */
function readLimited(res: IncomingMessage): Promise<{ text: string; whole: boolean }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const text = (): string => Buffer.concat(chunks).toString('utf8');
    res.on('data', (chunk: Buffer) => {
      if (size >= MAX_RESPONSE_BYTES) return;
      chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
      size += chunk.length;
      if (size >= MAX_RESPONSE_BYTES) resolve({ text: text(), whole: false });
    });
    res.on('end', () => resolve({ text: text(), whole: true }));
    res.on('error', reject);
  });
}
