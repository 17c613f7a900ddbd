/**
 * @module One delivery attempt of one event to one webhook endpoint (docs/EVENTS.md "Delivery"):
 * the endpoint's host resolved and checked by the outbound-address policy at each attempt and the
 * connection pinned to the address checked (a DNS answer that changes cannot redirect it), a POST
 * of the signed envelope, a 10 s limit for the whole exchange, no redirect followed (a 3xx is a
 * failure), and at most {@link MAX_RESPONSE_BYTES} of the answer kept for the delivery log.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { stripBrackets } from '../common/address-policy.js';
import { pinHost, systemResolver, type HostResolver, type OutboundAddressPolicy } from '../common/outbound-policy.js';
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
    const pinned = await pinHost(stripBrackets(url.hostname), this.#o.policy, this.#o.resolve ?? systemResolver);
    if (!pinned.ok) return fail(`endpoint address refused: ${pinned.detail}`);
    const nowS = Math.floor((this.#o.nowMs?.() ?? Date.now()) / 1000);
    const headers = {
      'content-type': 'application/json', 'user-agent': 'vgw-events/1.0',
      [SIGNATURE_HEADER]: signDelivery(r.secrets, nowS, r.body), [EVENT_ID_HEADER]: r.eventId, [EVENT_TYPE_HEADER]: r.eventType,
    };
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<DeliveryResult>((resolve) => {
      let settled = false;
      const settle = (result: DeliveryResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        req.destroy();
        resolve(result);
      };
      const req = send(url, {
        method: 'POST', headers, lookup: pinned.lookup, agent: false, ...(this.#o.ca ? { ca: this.#o.ca } : {}),
      }, (res) => void readLimited(res).then((body) => {
        const status = res.statusCode ?? 0;
        if (status >= 200 && status < 300) settle({ ok: true, status, durationMs: elapsed(), responseBody: body });
        else settle(fail(status >= 300 && status < 400 ? `redirect (${status}) not followed` : `answered ${status}`, status, body));
      }, (err: Error) => settle(fail(`answer not read: ${err.message}`, res.statusCode ?? null))));
      const timer = setTimeout(() => settle(fail(`no answer within ${this.#o.timeoutMs ?? DELIVERY_TIMEOUT_MS} ms`)), this.#o.timeoutMs ?? DELIVERY_TIMEOUT_MS);
      req.on('error', (err: NodeJS.ErrnoException) => settle(fail(err.code ? `${err.code}: ${err.message}` : err.message)));
      req.end(r.body);
    });
  }
}

/** The answer's body as text, cut at MAX_RESPONSE_BYTES (the rest is not read). */
function readLimited(res: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      if (size >= MAX_RESPONSE_BYTES) return;
      chunks.push(chunk.subarray(0, MAX_RESPONSE_BYTES - size));
      size += chunk.length;
      if (size >= MAX_RESPONSE_BYTES) resolve(Buffer.concat(chunks).toString('utf8'));
    });
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}
