/**
 * @module The control API from the browser: same-origin requests with the HttpOnly session
 * cookie (docs/API.md "Authentication"); the browser sends Origin and Sec-Fetch-Site itself, which
 * is what the API's CSRF rule reads. Failures arrive as problem+json and become {@link ApiProblem}.
 */
import type { Problem } from './types.js';

export class ApiProblem extends Error {
  readonly status: number;
  readonly code: string;
  /** Per-field validation errors (`path` is a JSON pointer into the body, or `/query/…`). */
  readonly errors: { path: string; message: string }[];

  constructor(status: number, problem: Partial<Problem>) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem.code ?? 'unknown';
    this.errors = problem.errors ?? [];
  }
}

/** Called when any request answers 401: the session is gone, the console shows the login. */
let onUnauthorized: () => void = () => undefined;
export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

async function failure(response: Response): Promise<ApiProblem> {
  let problem: Partial<Problem> = {};
  try {
    problem = (await response.json()) as Partial<Problem>;
  } catch {
    // not JSON (a proxy's page): the status alone
  }
  if (response.status === 401) onUnauthorized();
  return new ApiProblem(response.status, problem);
}

/** A JSON request; resolves with the body (undefined for 204). */
export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T> {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw await failure(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Bytes of a file endpoint (a recording, a pcap), asked for with its media type. */
export async function fetchBytes(path: string, accept: string): Promise<Blob> {
  const response = await fetch(path, { credentials: 'same-origin', headers: { accept } });
  if (!response.ok) throw await failure(response);
  return response.blob();
}

/** A query string from the set parameters only. */
export function query(params: Record<string, string | number | undefined>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

export const login = (apiKey: string): Promise<void> => api('POST', '/v1/auth/login', { api_key: apiKey });
export const logout = (): Promise<void> => api('POST', '/v1/auth/logout');
