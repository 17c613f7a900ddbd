/**
 * @module The verify contract every platform adapter passes (contract section 6), run by each
 * adapter's own test against a local fake of that platform. Kept beside the code it specifies;
 * the fake servers are passed in so that src/ does not depend on test/.
 */
import type { Test } from 'tap';
import type { ProviderName, VerifyResult } from './provider-adapter.js';
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
  provider: ProviderName;
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

/** Runs every verify outcome of the contract against `subject`. */
export async function providerContract(t: Test, subject: ContractSubject): Promise<void> {
  const start = async (tt: Test, options: Partial<ContractFakeOptions> = {}): Promise<ContractFake> => {
    const fake = await subject.startFake({ agents: { [subject.agentId]: NAME }, apiKey: KEY, ...options });
    tt.teardown(() => fake.close());
    return fake;
  };
  const adapterFor = (url: string, timeoutMs = TIMEOUT_MS) => {
    const registry = createProviderRegistry({ [subject.provider]: { api_base_url: url } }, { timeoutMs, retryBackoffMs: 5 });
    const adapter = registry.get(subject.provider);
    if (!adapter) throw new Error(`no adapter for ${subject.provider}`);
    return adapter;
  };
  const verify = (url: string, input: { externalAgentId?: string; apiKey?: string; region?: string } = {}, timeoutMs?: number) => {
    const adapter = adapterFor(url, timeoutMs);
    return adapter.verify({
      externalAgentId: input.externalAgentId ?? subject.agentId,
      apiKey: input.apiKey ?? KEY,
      region: input.region ?? adapter.defaultRegion,
    });
  };
  const keyless = (tt: Test, result: VerifyResult, key = KEY): void => {
    tt.notOk(JSON.stringify(result).includes(key), 'the outcome does not contain the key');
  };

  await t.test(`contract 6 (${subject.provider}): a known agent with the right key is found, in every region`, async (tt) => {
    const fake = await start(tt);
    const adapter = adapterFor(fake.url);
    for (const region of adapter.regions) {
      const result = await adapter.verify({ externalAgentId: subject.agentId, apiKey: KEY, region });
      tt.equal(result.outcome, 'found', `region ${region}`);
      keyless(tt, result);
    }
    tt.equal(fake.requests.length, adapter.regions.length, 'the override applies to every region');
    for (const request of fake.requests) {
      tt.equal(request.method, 'GET');
      tt.equal(request.headers[subject.authHeader], subject.authValue(KEY), 'the tenant key, unchanged, in the documented header');
    }
  });

  await t.test(`contract 6 (${subject.provider}): the found agent carries the platform's name when it has one`, async (tt) => {
    const fake = await start(tt);
    const result = await verify(fake.url);
    tt.equal(result.outcome, 'found');
    if (result.outcome === 'found' && result.name !== undefined) tt.equal(result.name, NAME);
  });

  await t.test(`contract 6 (${subject.provider}): an agent missing on the account is not_found`, async (tt) => {
    const fake = await start(tt);
    const result = await verify(fake.url, { externalAgentId: `${subject.agentId}0` });
    tt.same(result, { outcome: 'not_found' });
    tt.equal(fake.requests.length, 1, 'a 404 is not retried');
  });

  await t.test(`contract 6 (${subject.provider}): a key the platform rejects (401) is bad_credentials`, async (tt) => {
    const fake = await start(tt);
    const wrong = 'sk_wrong_Vb8Nq1Lx5Zc2Rt9Wm4Hy7Kd';
    const result = await verify(fake.url, { apiKey: wrong });
    tt.same(result, { outcome: 'bad_credentials' });
    tt.equal(fake.requests[0]?.headers[subject.authHeader], subject.authValue(wrong));
    keyless(tt, result, wrong);
  });

  await t.test(`contract 6 (${subject.provider}): a forbidden key (403) is bad_credentials`, async (tt) => {
    const fake = await start(tt, { fail: { status: 403, times: 'always' } });
    tt.same(await verify(fake.url), { outcome: 'bad_credentials' });
  });

  await t.test(`contract 6 (${subject.provider}): no answer within the time-out is unavailable, not retried`, async (tt) => {
    const fake = await start(tt, { slowMs: 60_000 });
    const result = await verify(fake.url, {}, 200);
    tt.equal(result.outcome, 'unavailable');
    if (result.outcome === 'unavailable') tt.match(result.reason, /no answer within 200 ms/);
    keyless(tt, result);
    tt.ok(fake.requests.length <= 1, 'a time-out is not retried');
  });

  await t.test(`contract 6 (${subject.provider}): one 500 is retried once and the agent is found`, async (tt) => {
    const fake = await start(tt, { fail: { status: 500, times: 1 } });
    tt.equal((await verify(fake.url)).outcome, 'found');
    tt.equal(fake.requests.length, 2);
    tt.equal(fake.requests[1]?.headers[subject.authHeader], subject.authValue(KEY), 'the retry sends the key again');
  });

  await t.test(`contract 6 (${subject.provider}): a platform failing with 5xx every time is unavailable after one retry`, async (tt) => {
    const fake = await start(tt, { fail: { status: 503, times: 'always' } });
    const result = await verify(fake.url);
    tt.same(result, { outcome: 'unavailable', reason: 'provider error (503)' });
    tt.equal(fake.requests.length, 2, 'exactly one retry');
  });

  await t.test(`contract 6 (${subject.provider}): a platform that cannot be reached is unavailable`, async (tt) => {
    const fake = await subject.startFake({ agents: {}, apiKey: KEY });
    await fake.close();
    const result = await verify(fake.url);
    tt.equal(result.outcome, 'unavailable');
    if (result.outcome === 'unavailable') tt.match(result.reason, /^network error \([A-Z_]+\)$/);
    keyless(tt, result);
  });

  await t.test(`contract 6 (${subject.provider}): a redirect is not followed, so the key goes nowhere else`, async (tt) => {
    const fake = await start(tt, { fail: { status: 302, times: 'always', headers: { location: '/elsewhere' } } });
    const result = await verify(fake.url);
    tt.same(result, { outcome: 'unavailable', reason: 'unexpected answer (302)' });
    tt.equal(fake.requests.length, 1);
  });

  await t.test(`contract 6 (${subject.provider}): a key that cannot be a header value is refused without a request`, async (tt) => {
    const fake = await start(tt);
    for (const bad of [`${KEY}\r\nx-injected: 1`, '', ` ${KEY}`, `${KEY}\u2028`]) {
      const result = await verify(fake.url, { apiKey: bad });
      tt.same(result, { outcome: 'bad_credentials' });
      if (bad) keyless(tt, result, bad);
    }
    tt.equal(fake.requests.length, 0);
  });

  await t.test(`contract 6 (${subject.provider}): the agent id stays one path segment`, async (tt) => {
    const fake = await start(tt);
    tt.same(await verify(fake.url, { externalAgentId: 'a/../b?c=d#e' }), { outcome: 'not_found' });
    tt.match(fake.requests[0]?.path ?? '', /a%2F\.\.%2Fb%3Fc%3Dd%23e$/);
    for (const dots of ['..', '.', '%2e%2E', '']) {
      tt.same(await verify(fake.url, { externalAgentId: dots }), { outcome: 'not_found' }, `id ${JSON.stringify(dots)}`);
    }
    tt.equal(fake.requests.length, 1, 'dot segments and empty ids are never sent');
  });
}
