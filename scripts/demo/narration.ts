/**
 * @module What the demo prints: numbered steps with a short explanation, the API's answers
 * trimmed to the fields worth reading, and an HTTP client for the control API that fails loudly.
 */

/** Where the demo writes; the process's stdout unless a test gives another. */
export type Write = (text: string) => void;

/** A step that did not go as the product promises; the message says what was expected. */
export class DemoFailure extends Error {
  override readonly name = 'DemoFailure';
}

/** A JSON answer of the control API. */
export type Json = Record<string, unknown>;

export class Narrator {
  readonly #write: Write;
  readonly #startedAt = Date.now();
  #step = 0;
  /** The step under way, named in a failure report. */
  current = 'setting up';

  constructor(write: Write) {
    this.#write = write;
  }

  /** A numbered step heading, with the time since the demo began, and what it shows. */
  step(title: string, explanation: string): void {
    this.#step += 1;
    this.current = `${this.#step}. ${title}`;
    const elapsed = ((Date.now() - this.#startedAt) / 1000).toFixed(1);
    this.#write(`\n==> ${this.current}   [+${elapsed} s]\n`);
    for (const line of explanation.split('\n')) this.#write(`    ${line}\n`);
  }

  /** An indented line of the narration. */
  say(text: string): void {
    this.#write(`    ${text}\n`);
  }

  /** A line from the demo agent, marked as such. */
  agent(text: string): void {
    this.#write(`    agent | ${text}\n`);
  }

  /** An API exchange: the request line, the status, and the chosen fields of the answer. */
  exchange(request: string, status: number, shown: unknown): void {
    this.#write(`    ${request} -> ${status}\n`);
    for (const line of JSON.stringify(shown, null, 2).split('\n')) this.#write(`      ${line}\n`);
  }

  /** The raw writer, for the closing summary. */
  raw(text: string): void {
    this.#write(text);
  }
}

/** `body` with only the named fields, in that order (absent ones left out). */
export function pick(body: Json, fields: readonly string[]): Json {
  const out: Json = {};
  for (const field of fields) if (field in body) out[field] = body[field];
  return out;
}

/** The fields of a Call the narration shows. */
export const CALL_FIELDS = ['id', 'call_control_id', 'state', 'on_hold', 'from', 'to', 'carrier', 'record', 'answered_at', 'end_reason', 'transfer'] as const;

/** A control API client with one tenant key; every call prints its exchange. */
export class ControlApi {
  readonly #base: string;
  readonly #key: string;
  readonly #narrator: Narrator;

  constructor(base: string, key: string, narrator: Narrator) {
    this.#base = base;
    this.#key = key;
    this.#narrator = narrator;
  }

  /** Sends a request and returns the JSON answer; anything but a 2xx is a {@link DemoFailure}. */
  async request(method: string, path: string, body?: Json): Promise<{ status: number; body: Json }> {
    const response = await fetch(`${this.#base}${path}`, {
      method,
      headers: { authorization: `Bearer ${this.#key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new DemoFailure(`${method} ${path} answered ${response.status}: ${text}`);
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as Json };
  }

  /** {@link request}, printing the chosen fields of the answer. */
  async show(method: string, path: string, fields: readonly string[], body?: Json): Promise<Json> {
    const answer = await this.request(method, path, body);
    this.#narrator.exchange(`${method} ${path}${body === undefined ? '' : ` ${JSON.stringify(body)}`}`, answer.status, pick(answer.body, fields));
    return answer.body;
  }

  /** The raw response of a GET, for binary bodies such as a recording. */
  async fetchRaw(path: string): Promise<Response> {
    const response = await fetch(`${this.#base}${path}`, { headers: { authorization: `Bearer ${this.#key}` } });
    if (!response.ok) throw new DemoFailure(`GET ${path} answered ${response.status}`);
    return response;
  }
}

/** Polls `check` every 50 ms until it returns a value, or fails with what was awaited after `ms`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new DemoFailure(`timed out after ${ms / 1000} s waiting for ${what}`);
    await sleep(50);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
