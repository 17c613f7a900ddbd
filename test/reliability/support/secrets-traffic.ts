/**
 * @module Every HTTP exchange of the secrets scan, kept whole: status, response headers and body,
 * labelled, so a leak can be named by the request that returned it.
 */
import type { ScanSource } from './secrets-scan.js';

export interface Exchange {
  label: string;
  status: number;
  headers: [string, string][];
  body: Buffer;
}

export interface SendOptions {
  key?: string;
  cookie?: string;
  json?: unknown;
  /** A body sent as is (signed webhooks). */
  raw?: string;
  headers?: Record<string, string>;
}

/** A JSON object body, or {} for anything else (a recording, an empty body). */
function jsonOf(body: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(body.toString('utf8'));
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export class Traffic {
  readonly exchanges: Exchange[] = [];
  readonly #base: string;

  constructor(base: string) {
    this.#base = base;
  }

  /** One request; the answer is recorded and returned. */
  async send(label: string, method: string, path: string, o: SendOptions = {}): Promise<Exchange & { json: Record<string, unknown> }> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.key !== undefined) headers.authorization = `Bearer ${o.key}`;
    if (o.cookie !== undefined) headers.cookie = o.cookie;
    let body: string | undefined = o.raw;
    if (o.json !== undefined) body = JSON.stringify(o.json);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const res = await fetch(`${this.#base}${path}`, { method, headers, body });
    const exchange: Exchange = { label: `${this.exchanges.length} ${method} ${path} (${label})`, status: res.status, headers: [...res.headers], body: Buffer.from(await res.arrayBuffer()) };
    this.exchanges.push(exchange);
    return { ...exchange, json: jsonOf(exchange.body) };
  }

  /** Headers and body of every exchange, minus the header values `exempt` says carry a secret by design. */
  sources(exempt: (e: Exchange, name: string) => boolean): ScanSource[] {
    return this.exchanges.flatMap((e) => [
      { where: `response ${e.label} headers`, data: Buffer.from(e.headers.filter(([n]) => !exempt(e, n)).map(([n, v]) => `${n}: ${v}`).join('\n')) },
      { where: `response ${e.label} body`, data: e.body },
    ]);
  }
}
