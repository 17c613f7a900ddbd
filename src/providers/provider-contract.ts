/**
 * @module The verify contract every platform adapter passes (docs/API.md "Agents, routes, numbers and SIP credentials"), run by each
 * adapter's own test against a local fake of that platform. Kept beside the code it specifies;
 * the fake servers are passed in so that src/ does not depend on test/.
 */
import type { Test } from 'tap';
import type { ProviderAdapter, VerifyResult } from './provider-adapter.js';
import { createProviderRegistry } from './registry.js';

/** The subset of a fake platform server the contract drives (see test/support/fake-providers). */
export interface ContractFake {
  url: string;
  requests: readonly { method: string; path: string; headers: Record<string, string | string[] | undefined> }[];
  close(): Promise<void>;
}

/** Options a fake platform server accepts. */
export interface ContractFakeOptions {
  agents: Record<string, string | undefined>;
  apiKey: string;
  slowMs?: number;
  fail?: { status: number; times: number | 'always'; body?: unknown; headers?: Record<string, string> };
}

/** One adapter under contract. */
export interface ContractSubject {
  provider: string;
  startFake(options: ContractFakeOptions): Promise<ContractFake>;
  /** Lower-case name of the header that carries the key, and its value for a given key. */
  authHeader: string;
  authValue(apiKey: string): string;
  /** An agent id in the platform's own format. */
  agentId: string;
}

const KEY = 'sk_contract_7Q2fX9LmA4pZ0wR8tY6uK3nB';
const NAME = 'Front desk';
const TIMEOUT_MS = 5_000;

/** What every case gets: the subject and helpers bound to it. */
interface Harness {
  subject: ContractSubject;
  /** A fake holding the subject's agent under {@link KEY}, closed at the end of `tt`. */
  start(tt: Test, options?: Partial<ContractFakeOptions>): Promise<ContractFake>;
  adapterFor(url: string, timeoutMs?: number): ProviderAdapter;
  verify(url: string, input?: { externalAgentId?: string; apiKey?: string }, timeoutMs?: number): Promise<VerifyResult>;
  /** Asserts that the outcome does not carry `key`. */
  keyless(tt: Test, result: VerifyResult, key?: string): void;
}

type ContractCase = (tt: Test, h: Harness) => Promise<void>;

function harness(subject: ContractSubject): Harness {
  const adapterFor = (url: string, timeoutMs = TIMEOUT_MS): ProviderAdapter => {
    const registry = createProviderRegistry({ [subject.provider]: { api_base_url: url } }, { timeoutMs, retryBackoffMs: 5 });
    const adapter = registry.get(subject.provider);
    if (!adapter) throw new Error(`no adapter for ${subject.provider}`);
    return adapter;
  };
  return {
    subject,
    adapterFor,
    async start(tt, options = {}) {
      const fake = await subject.startFake({ agents: { [subject.agentId]: NAME }, apiKey: KEY, ...options });
      tt.teardown(() => fake.close());
      return fake;
    },
    verify(url, input = {}, timeoutMs) {
      const adapter = adapterFor(url, timeoutMs);
      const { externalAgentId = subject.agentId, apiKey = KEY } = input;
      return adapter.verify({ externalAgentId, apiKey, region: adapter.defaultRegion });
    },
    keyless(tt, result, key = KEY) {
      tt.notOk(JSON.stringify(result).includes(key), 'the outcome does not contain the key');
    },
  };
}

const foundInEveryRegion: ContractCase = async (tt, h) => {
  const fake = await h.start(tt);
  const adapter = h.adapterFor(fake.url);
  for (const region of adapter.regions) {
    const result = await adapter.verify({ externalAgentId: h.subject.agentId, apiKey: KEY, region });
    tt.equal(result.outcome, 'found', `region ${region}`);
    h.keyless(tt, result);
  }
  tt.equal(fake.requests.length, adapter.regions.length, 'the override applies to every region');
  for (const request of fake.requests) {
    tt.equal(request.method, 'GET');
    tt.equal(request.headers[h.subject.authHeader], h.subject.authValue(KEY), 'the tenant key, unchanged, in the documented header');
  }
};

const foundWithName: ContractCase = async (tt, h) => {
  const fake = await h.start(tt);
  const result = await h.verify(fake.url);
  tt.equal(result.outcome, 'found');
  if (result.outcome === 'found' && result.name !== undefined) tt.equal(result.name, NAME);
};

const notFound: ContractCase = async (tt, h) => {
  const fake = await h.start(tt);
  tt.same(await h.verify(fake.url, { externalAgentId: `${h.subject.agentId}0` }), { outcome: 'not_found' });
  tt.equal(fake.requests.length, 1, 'a 404 is not retried');
};

const rejectedKey: ContractCase = async (tt, h) => {
  const fake = await h.start(tt);
  const wrong = 'sk_wrong_Vb8Nq1Lx5Zc2Rt9Wm4Hy7Kd';
  const result = await h.verify(fake.url, { apiKey: wrong });
  tt.same(result, { outcome: 'bad_credentials' });
  tt.equal(fake.requests[0]?.headers[h.subject.authHeader], h.subject.authValue(wrong));
  h.keyless(tt, result, wrong);
};

const forbiddenKey: ContractCase = async (tt, h) => {
  const fake = await h.start(tt, { fail: { status: 403, times: 'always' } });
  tt.same(await h.verify(fake.url), { outcome: 'bad_credentials' });
};

const timedOut: ContractCase = async (tt, h) => {
  const fake = await h.start(tt, { slowMs: 60_000 });
  const result = await h.verify(fake.url, {}, 200);
  tt.equal(result.outcome, 'unavailable');
  if (result.outcome === 'unavailable') tt.match(result.reason, /no answer within 200 ms/);
  h.keyless(tt, result);
  tt.ok(fake.requests.length <= 1, 'a time-out is not retried');
};

const retriedOnce: ContractCase = async (tt, h) => {
  const fake = await h.start(tt, { fail: { status: 500, times: 1 } });
  tt.equal((await h.verify(fake.url)).outcome, 'found');
  tt.equal(fake.requests.length, 2);
  tt.equal(fake.requests[1]?.headers[h.subject.authHeader], h.subject.authValue(KEY), 'the retry sends the key again');
};

const failingAlways: ContractCase = async (tt, h) => {
  const fake = await h.start(tt, { fail: { status: 503, times: 'always' } });
  tt.same(await h.verify(fake.url), { outcome: 'unavailable', reason: 'provider error (503)' });
  tt.equal(fake.requests.length, 2, 'exactly one retry');
};

const unreachable: ContractCase = async (tt, h) => {
  const fake = await h.subject.startFake({ agents: {}, apiKey: KEY });
  await fake.close();
  const result = await h.verify(fake.url);
  tt.equal(result.outcome, 'unavailable');
  if (result.outcome === 'unavailable') tt.match(result.reason, /^network error \([A-Z_]+\)$/);
  h.keyless(tt, result);
};

const redirectNotFollowed: ContractCase = async (tt, h) => {
  const fake = await h.start(tt, { fail: { status: 302, times: 'always', headers: { location: '/elsewhere' } } });
  tt.same(await h.verify(fake.url), { outcome: 'unavailable', reason: 'unexpected answer (302)' });
  tt.equal(fake.requests.length, 1);
};

const unsendableKey: ContractCase = async (tt, h) => {
  const fake = await h.start(tt);
  const unsendable = { 'CR LF': `${KEY}\r\nx-injected: 1`, empty: '', 'leading space': ` ${KEY}`, 'beyond Latin-1': `${KEY}\u2028` };
  for (const [what, bad] of Object.entries(unsendable)) {
    const result = await h.verify(fake.url, { apiKey: bad });
    tt.same(result, { outcome: 'bad_credentials' }, what);
    if (bad) h.keyless(tt, result, bad);
  }
  tt.equal(fake.requests.length, 0);
};

const idIsOneSegment: ContractCase = async (tt, h) => {
  const fake = await h.start(tt);
  tt.same(await h.verify(fake.url, { externalAgentId: 'a/../b?c=d#e' }), { outcome: 'not_found' });
  tt.match(fake.requests[0]?.path ?? '', /a%2F\.\.%2Fb%3Fc%3Dd%23e$/);
  for (const dots of ['..', '.', '%2e%2E', '']) {
    tt.same(await h.verify(fake.url, { externalAgentId: dots }), { outcome: 'not_found' }, `id ${JSON.stringify(dots)}`);
  }
  tt.equal(fake.requests.length, 1, 'dot segments and empty ids are never sent');
};

const CASES: readonly (readonly [string, ContractCase])[] = [
  ['a known agent with the right key is found, in every region', foundInEveryRegion],
  ["the found agent carries the platform's name when it has one", foundWithName],
  ['an agent missing on the account is not_found', notFound],
  ['a key the platform rejects (401) is bad_credentials', rejectedKey],
  ['a forbidden key (403) is bad_credentials', forbiddenKey],
  ['no answer within the time-out is unavailable, not retried', timedOut],
  ['one 500 is retried once and the agent is found', retriedOnce],
  ['a platform failing with 5xx every time is unavailable after one retry', failingAlways],
  ['a platform that cannot be reached is unavailable', unreachable],
  ['a redirect is not followed, so the key goes nowhere else', redirectNotFollowed],
  ['a key that cannot be a header value is refused without a request', unsendableKey],
  ['the agent id stays one path segment', idIsOneSegment],
];

/** Runs every verify outcome of the contract against `subject`, one subtest per rule. */
export async function providerContract(t: Test, subject: ContractSubject): Promise<void> {
  const h = harness(subject);
  for (const [title, run] of CASES) {
    await t.test(`docs/API.md "Agents, routes, numbers and SIP credentials" (${subject.provider}): ${title}`, (tt) => run(tt, h));
  }
}
