/** @module Error kinds shared by every layer: API errors (exposed to tenants) and invariant breaks. */

/** Optional fields of an {@link ApiError}. */
export interface ApiErrorOptions {
  /** Whether `message` may be shown to the client. Defaults to true below 500, always false at 500+. */
  expose?: boolean;
  cause?: unknown;
  /** Validation failures, as JSON Pointer paths into the request. */
  errors?: { path: string; message: string }[];
  /** Extra response headers (Retry-After, WWW-Authenticate). */
  headers?: Record<string, string>;
  /** Extra members merged into the problem body (for example `existing_id` on a 409). */
  extra?: Record<string, unknown>;
}

/**
 * A domain or API error: thrown by handlers and commands, turned into an RFC 9457 problem by the
 * control API's error middleware. `code` is stable and documented in docs/API.md.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly expose: boolean;
  readonly errors: { path: string; message: string }[] | undefined;
  readonly headers: Record<string, string>;
  readonly extra: Record<string, unknown>;

  constructor(status: number, code: string, message: string, options: ApiErrorOptions = {}) {
    super(message, { cause: options.cause });
    this.status = status;
    this.code = code;
    // 5xx bodies never carry internals, whatever the thrower asked for.
    this.expose = status < 500 && (options.expose ?? true);
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    this.extra = options.extra ?? {};
  }
}

/** Thrown when code reaches a state its author ruled out: a bug, never a client's fault. */
export class InvariantError extends Error {
  override readonly name: string = 'InvariantError';
}

/** Where an illegal transition was asked for: the machine, its state, and the event or target refused. */
export interface IllegalTransitionInit {
  /** The machine's name, e.g. `InviteClientTransaction`, `Call`, `Transfer`. */
  machine: string;
  /** The state the machine was in. */
  state: string;
  /** The event the state does not accept (machines driven by events). */
  event?: string;
  /** The target state that is no edge from `state` (machines driven by `transition(to)`). */
  to?: string;
}

/**
 * Thrown by every state machine of the gateway, SIP stack and call layer alike, when asked for an
 * event or an edge its diagram does not have: a bug in the caller, never a remote party's doing
 * (docs/ARCHITECTURE.md, "State machines").
 */
export class IllegalTransitionError extends InvariantError {
  override readonly name: string = 'IllegalTransitionError';
  readonly machine: string;
  readonly state: string;
  readonly event: string | undefined;
  readonly to: string | undefined;

  constructor(init: IllegalTransitionInit) {
    const what = init.to !== undefined ? `${init.state} -> ${init.to}` : `on "${init.event ?? '?'}" in ${init.state}`;
    super(`${init.machine}: illegal transition ${what}`);
    this.machine = init.machine;
    this.state = init.state;
    this.event = init.event;
    this.to = init.to;
  }
}

/** Compile-time exhaustiveness check for `switch` defaults. */
export function assertNever(value: never, what = 'value'): never {
  throw new InvariantError(`unexpected ${what}: ${String(value)}`);
}
