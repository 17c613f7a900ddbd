/** @module One verify request to a platform's REST API: time-out, one retry, secret-safe outcomes. */
import type { Clock } from '../common/clock.js';
import type { VerifyResult } from './provider-adapter.js';

/** How adapters talk HTTP. Compiled once by the registry, fully defaulted. */
export interface HttpOptions {
  /** Time allowed for one attempt, headers and body included. */
  timeoutMs: number;
  /** Wait before the single retry after a 5xx or a network error. */
  retryBackoffMs: number;
  fetch: typeof fetch;
  clock: Clock;
}

export const DEFAULT_TIMEOUT_MS = 5_000;
export const DEFAULT_RETRY_BACKOFF_MS = 250;
/** Agent documents can be large (prompts, tools); only the name is read, so stop early. */
const MAX_BODY_BYTES = 1_048_576;

/** A GET to send: the URL and the headers carrying the tenant's key. */
export interface VerifyRequest {
  url: string;
  headers: Record<string, string>;
}

/** What one attempt produced. No variant carries a message from below: those may echo headers. */
export type Probe =
  | { kind: 'answered'; status: number; body: unknown }
  | { kind: 'timed_out' }
  | { kind: 'network_error'; code: string };

/**
 * Reads an answer into a result, or returns undefined to fall back to the common rules of
 * {@link classifyAnswer}. Lets an adapter honour a vendor's documented error body.
 */
export type AnswerInterpreter = (status: number, body: unknown) => VerifyResult | undefined;

// RFC 9110 §5.5: a field value is visible ASCII, obs-text, SP and HTAB. A key outside that could
// not be sent, and fetch would quote it back in its exception text, so it is refused up front.
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * True when `value` can go on the wire as a header value, or inside one, unchanged: non-empty,
 * no control characters, no surrounding white space (which fetch would silently strip).
 */
export function fieldValueSendable(value: string): boolean {
  return value.length > 0 && FIELD_VALUE.test(value) && value.trim() === value;
}

/** True when every header value can go on the wire as is. */
export function headersSendable(headers: Record<string, string>): boolean {
  return Object.values(headers).every(fieldValueSendable);
}

/**
 * Sends the request, retrying once after `retryBackoffMs` on a 5xx answer or a network error.
 * A time-out is not retried: the tenant is already waiting on the import, and a second wait of
 * the same length would double it for a platform that is evidently slow.
 */
export async function verifyOverHttp(
  http: HttpOptions,
  request: VerifyRequest,
  interpret: AnswerInterpreter,
  agentName: (body: unknown) => string | undefined,
): Promise<VerifyResult> {
  if (!headersSendable(request.headers)) return { outcome: 'bad_credentials' };
  let probe = await probeOnce(http, request);
  if (isRetryable(probe)) {
    await sleep(http.clock, http.retryBackoffMs);
    probe = await probeOnce(http, request);
  }
  return classify(probe, interpret, agentName, http.timeoutMs);
}

function isRetryable(probe: Probe): boolean {
  return probe.kind === 'network_error' || (probe.kind === 'answered' && probe.status >= 500);
}

function classify(
  probe: Probe,
  interpret: AnswerInterpreter,
  agentName: (body: unknown) => string | undefined,
  timeoutMs: number,
): VerifyResult {
  switch (probe.kind) {
    case 'timed_out':
      return { outcome: 'unavailable', reason: `no answer within ${timeoutMs} ms` };
    case 'network_error':
      return { outcome: 'unavailable', reason: `network error (${probe.code})` };
    case 'answered': {
      const result = interpret(probe.status, probe.body) ?? classifyAnswer(probe.status);
      if (result.outcome !== 'found') return result;
      const name = agentName(probe.body);
      return name === undefined ? { outcome: 'found' } : { outcome: 'found', name };
    }
  }
}

/** The rules every platform shares: 2xx found, 404 not found, 401/403 the key, the rest unusable. */
export function classifyAnswer(status: number): VerifyResult {
  if (status >= 200 && status < 300) return { outcome: 'found' };
  if (status === 404) return { outcome: 'not_found' };
  if (status === 401 || status === 403) return { outcome: 'bad_credentials' };
  if (status === 429) return { outcome: 'unavailable', reason: 'rate limited by the provider (429)' };
  if (status >= 500) return { outcome: 'unavailable', reason: `provider error (${status})` };
  return { outcome: 'unavailable', reason: `unexpected answer (${status})` };
}

/** One attempt, bounded by an abort signal driven by the injected clock. */
export async function probeOnce(http: HttpOptions, request: VerifyRequest): Promise<Probe> {
  const controller = new AbortController();
  const timer = http.clock.setTimeout(() => controller.abort(), http.timeoutMs);
  try {
    // redirect 'manual': a redirect would carry the key's header to wherever it points.
    const response = await http.fetch(request.url, {
      method: 'GET',
      headers: { accept: 'application/json', ...request.headers },
      redirect: 'manual',
      signal: controller.signal,
    });
    const body = await readJsonBody(response);
    if (controller.signal.aborted) return { kind: 'timed_out' };
    return { kind: 'answered', status: response.status, body };
  } catch (err) {
    if (controller.signal.aborted) return { kind: 'timed_out' };
    return { kind: 'network_error', code: errorCode(err) };
  } finally {
    timer.cancel();
  }
}

/** The body as JSON, or undefined when it is empty, too large or not JSON. */
async function readJsonBody(response: Response): Promise<unknown> {
  if (!response.body) return undefined;
  // undici's body is a byte stream; the DOM typing leaves its chunks untyped.
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** A system error code such as ECONNREFUSED; never the message text. */
function errorCode(err: unknown): string {
  for (let e: unknown = err, depth = 0; e !== undefined && depth < 4; depth++) {
    if (typeof e === 'object' && e !== null) {
      const code = (e as { code?: unknown }).code;
      if (typeof code === 'string' && /^[A-Z][A-Z0-9_]{1,40}$/.test(code)) return code;
      e = (e as { cause?: unknown }).cause;
    } else break;
  }
  return 'fetch_failed';
}

function sleep(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => { clock.setTimeout(resolve, ms); });
}

/** `obj.key` when `obj` is an object and the member is a non-empty string. */
export function stringMember(obj: unknown, key: string): string | undefined {
  if (typeof obj !== 'object' || obj === null) return undefined;
  const value = (obj as Record<string, unknown>)[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}
