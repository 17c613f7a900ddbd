/**
 * @module The Idempotency-Key header (docs/API.md "Errors" and docs/API.md "Calls"): the same key and body within
 * 24 h replays the first response and runs nothing again; the same key with another body, or
 * while the first request is still running, is a 409 `idempotency_conflict`.
 */
import { createHash } from 'node:crypto';
import { ApiError } from '../common/errors.js';
import type { TenantId } from '../common/ids.js';
import type { IdempotencyRepository } from '../storage/index.js';
import { problems } from './problem.js';
import type { RouteResult } from './route.js';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';
export const IDEMPOTENT_REPLAYED_HEADER = 'Idempotent-Replayed';

/** 1 to 255 visible ASCII characters (no spaces, no controls). */
const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** What is stored for a replay: a success, or a problem rebuilt with the replaying request's id. */
type StoredResponse =
  | { kind: 'result'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'problem'; status: number; code: string; detail: string; errors?: { path: string; message: string }[]; headers: Record<string, string>; extra: Record<string, unknown> };

/**
 * The key of a request, or undefined when it sent none. A malformed key is a 400 rather than
 * ignored: a client that meant to be safe must not silently place a call twice.
 */
export function idempotencyKeyOf(header: string | string[] | undefined): string | undefined {
  if (header === undefined) return undefined;
  if (Array.isArray(header) || !KEY_PATTERN.test(header)) {
    throw problems.validation(
      [{ path: '/headers/idempotency-key', message: 'must be 1 to 255 visible ASCII characters, sent once' }],
      'The Idempotency-Key header is not valid.',
    );
  }
  return header;
}

/** JSON with object keys sorted, so `{a, b}` and `{b, a}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** SHA-256 of the endpoint and the canonical body: a key reused on another endpoint is another request. */
export function requestHash(scope: string, body: unknown): string {
  return createHash('sha256').update(scope).update('\n').update(canonicalJson(body)).digest('hex');
}

function conflict(detail: string): ApiError {
  return new ApiError(409, 'idempotency_conflict', detail);
}

function replay(responseJson: string): RouteResult {
  const stored = JSON.parse(responseJson) as StoredResponse;
  const headers = { ...stored.headers, [IDEMPOTENT_REPLAYED_HEADER]: 'true' };
  if (stored.kind === 'result') return { status: stored.status, body: stored.body, headers };
  throw new ApiError(stored.status, stored.code, stored.detail, { errors: stored.errors, headers, extra: stored.extra });
}

/**
 * Whether an outcome is replayed later. 2xx and 4xx are: they are the answer to that request.
 * 5xx are not, and neither is a 429 (its Retry-After invites the very retry a replay would
 * refuse): the reservation is released and a retry runs the command again.
 */
const isReplayable = (status: number): boolean => status < 500 && status !== 429;

function storedError(err: ApiError): StoredResponse {
  return {
    // An unexposed message stays unexposed on replay (toProblem would hide it the first time).
    kind: 'problem', status: err.status, code: err.code, detail: err.expose ? err.message : 'The request failed.',
    ...(err.errors ? { errors: err.errors } : {}), headers: err.headers, extra: err.extra,
  };
}

export interface IdempotentRequest {
  tenantId: TenantId;
  /** The request's key; without one the command simply runs. */
  key: string | undefined;
  /** `METHOD path` of the endpoint. */
  scope: string;
  /** The validated body, defaults applied, so an omitted default equals the default sent. */
  body: unknown;
}

/** Runs `command` at most once per (tenant, key) within 24 h, replaying its first answer after. */
export async function runIdempotent(
  repo: Pick<IdempotencyRepository, 'reserve' | 'complete' | 'release'>,
  request: IdempotentRequest,
  command: () => Promise<RouteResult>,
): Promise<RouteResult> {
  const { tenantId, key } = request;
  if (key === undefined) return command();
  const hash = requestHash(request.scope, request.body);
  const found = await repo.reserve(tenantId, key, hash);
  if (found.outcome !== 'reserved' && found.requestHash !== hash) {
    throw conflict('This Idempotency-Key was used with another request body; use a new key for a new request.');
  }
  if (found.outcome === 'in_flight') throw conflict('A request with this Idempotency-Key is still in progress; retry once it has answered.');
  if (found.outcome === 'completed') return replay(found.responseJson);
  let result: RouteResult;
  try {
    result = await command();
  } catch (err) {
    if (err instanceof ApiError && isReplayable(err.status)) await repo.complete(tenantId, key, err.status, JSON.stringify(storedError(err)));
    else await repo.release(tenantId, key);
    throw err;
  }
  if (isReplayable(result.status)) {
    const stored: StoredResponse = { kind: 'result', status: result.status, body: result.body, headers: result.headers ?? {} };
    await repo.complete(tenantId, key, result.status, JSON.stringify(stored));
  } else {
    await repo.release(tenantId, key);
  }
  return result;
}
