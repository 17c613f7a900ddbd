/**
 * @module Local stand-ins for the voice-agent platforms' get-agent endpoints (node:http on
 * 127.0.0.1, port 0), with switches for the failures the adapters must survive.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PLATFORM_ANSWERS, type FakeProviderKind } from './platform-answers.js';

export type { FakeProviderKind } from './platform-answers.js';
export { PLATFORM_ANSWERS } from './platform-answers.js';

/** A scripted failure answered instead of the normal one. */
export interface FakeFailure {
  status: number;
  /** How many requests get it before normal answers resume; 'always' for all of them. */
  times: number | 'always';
  body?: unknown;
  headers?: Record<string, string>;
}

export interface FakeProviderOptions {
  /** Agents on the account: ids, or id → display name (undefined for none). */
  agents: readonly string[] | Record<string, string | undefined>;
  /** The account's only valid key. */
  apiKey: string;
  /** Delay every answer by this long (to run past the client's time-out). */
  slowMs?: number;
  fail?: FakeFailure;
}

/** One request as the fake saw it. */
export interface RecordedRequest {
  method: string;
  /** Path and query exactly as sent (still percent-encoded). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
}

export interface FakeProvider {
  kind: FakeProviderKind;
  /** Base URL to put in `providers.<name>.api_base_url`. */
  url: string;
  requests: RecordedRequest[];
  /** Changes behaviour from the next request on (a new `fail` restarts its count). */
  update(changes: Partial<FakeProviderOptions>): void;
  close(): Promise<void>;
}

/** The `providers` config object that points each given provider at its fake. */
export function overridesFor(...fakes: FakeProvider[]): Record<string, { api_base_url: string }> {
  return Object.fromEntries(fakes.map((fake) => [fake.kind, { api_base_url: fake.url }]));
}

/** Starts a fake of `kind`. Call `close()` (tests: in `t.teardown`). */
export async function startFakeProvider(kind: FakeProviderKind, initial: FakeProviderOptions): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let options: FakeProviderOptions = { ...initial };
  let failuresLeft = options.fail?.times ?? 0;
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    if (options.fail && (failuresLeft === 'always' || failuresLeft > 0)) {
      if (failuresLeft !== 'always') failuresLeft -= 1;
      send(res, options.fail.status, options.fail.body ?? { error: 'scripted failure' }, options.fail.headers);
      return;
    }
    answerNormally(kind, options, req, res);
  };
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', path: req.url ?? '', headers: { ...req.headers } });
    req.resume();
    if (options.slowMs === undefined) return answer(req, res);
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!res.destroyed) answer(req, res);
    }, options.slowMs);
    timers.add(timer);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    kind,
    url: `http://127.0.0.1:${port}`,
    requests,
    update(changes) {
      options = { ...options, ...changes };
      if ('fail' in changes) failuresLeft = changes.fail?.times ?? 0;
    },
    close: () => new Promise<void>((resolve) => {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function answerNormally(kind: FakeProviderKind, options: FakeProviderOptions, req: IncomingMessage, res: ServerResponse): void {
  const platform = PLATFORM_ANSWERS[kind];
  const match = platform.path.exec((req.url ?? '').split('?')[0] ?? '');
  if (!match) return send(res, 404, { detail: 'Not Found' });
  if (req.method !== 'GET') return send(res, 405, { detail: 'Method Not Allowed' });
  // Platforms check the key before they look the agent up.
  if (platform.keyOf(req.headers) !== options.apiKey) return send(res, 401, platform.badKey);
  const agentId = decodeURIComponent(match[1] ?? '');
  const agents: Record<string, string | undefined> = isIdList(options.agents)
    ? Object.fromEntries(options.agents.map((id) => [id, undefined]))
    : options.agents;
  if (!Object.hasOwn(agents, agentId)) return send(res, 404, platform.notFound(agentId));
  send(res, 200, platform.found(agentId, agents[agentId]));
}

function isIdList(agents: FakeProviderOptions['agents']): agents is readonly string[] {
  return Array.isArray(agents);
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
