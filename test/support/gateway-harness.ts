/**
 * @module startTestGateway(t): the whole product in this process (SIP and RTP on loopback, the
 * sandbox far end, the control API on a free port) over a temporary data folder, with a tenant
 * holding a live and a sandbox key. Requests go over real HTTP.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { createLogger, type Logger } from '../../src/common/logger.js';
import { loadConfig } from '../../src/config/load-config.js';
import { startGateway, type Gateway } from '../../src/gateway.js';
import type { TenantId } from '../../src/common/ids.js';
import type { Test } from 'tap';
import { FakeCustomAgent } from './fake-agent-servers/custom-agent-server.js';
import { switchedDatabase } from './postgres.js';

interface TestContext {
  testdir(fixture?: Record<string, string>): string;
  teardown(fn: () => void | Promise<void>): void;
}

/** The fields end-to-end tests read from call answers (a Call, its detail, a page, or a problem). */
export interface ApiBody {
  [field: string]: unknown;
  id: string;
  call_control_id: string;
  state: string;
  on_hold: boolean;
  answered_at: string | null;
  end_reason: string | null;
  sip_status: number | null;
  transfer: { to: string; state: string; started_at: string } | null;
  cdr: { end_reason: string; hangup_by: string | null; billable_s: number; duration_s: number } | null;
  session: { recording: { paused: boolean } | null; [field: string]: unknown } | null;
  recording: { available: boolean };
  data: ApiBody[];
  code: string;
}

export interface TestGateway {
  gateway: Gateway;
  dataDir: string;
  base: string;
  tenantId: TenantId;
  liveKey: string;
  sandboxKey: string;
  /** JSON over HTTP with a key (the sandbox key by default). */
  api(method: string, path: string, body?: unknown, options?: { key?: string; headers?: Record<string, string> }): Promise<{ status: number; body: ApiBody; headers: Headers }>;
  /** Every log line, as parsed JSON. */
  logs: Record<string, unknown>[];
}

export interface TestGatewayOptions {
  /** YAML settings merged into the test defaults key by key (e.g. `calls:\n  ring_timeout_seconds: 2`). */
  yaml?: string;
  /** Carriers file contents (YAML). */
  carriers?: string;
  /** A data folder to reuse (restart tests): under VGW_TEST_BACKEND=postgres, its database is reused too. */
  dataDir?: string;
  /** The RTP port range (a random 400-port one by default). */
  rtp?: { min: number; max: number };
  /** How long the sandbox far end rings (200 ms by default). */
  sandboxRingMs?: number;
  /** Log level kept in `logs` (debug by default); long runs keep at most 10,000 lines. */
  logLevel?: 'debug' | 'info';
}

/** A random even RTP range of 400 ports in 30000-39999, so parallel test files rarely collide. */
function rtpRange(): { min: number; max: number } {
  const min = 30000 + 2 * Math.floor(Math.random() * 4800);
  return { min, max: min + 399 };
}

/** `extra` over `base`: objects merge key by key, anything else replaces. */
function mergeDeep(base: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(extra)) {
    const under = out[key];
    const bothObjects = [under, value].every((v) => typeof v === 'object' && v !== null && !Array.isArray(v));
    out[key] = bothObjects ? mergeDeep(under as Record<string, unknown>, value as Record<string, unknown>) : value;
  }
  return out;
}

/**
 * Under VGW_TEST_BACKEND=postgres, the database of each data folder: a gateway restarted on the
 * same folder finds the same store, as it would in production.
 */
const databaseOfDataDir = new Map<string, Promise<string | undefined>>();

export async function startTestGateway(t: TestContext, options: TestGatewayOptions = {}): Promise<TestGateway> {
  const dir = t.testdir({});
  const dataDir = options.dataDir ?? join(dir, 'data');
  let database = databaseOfDataDir.get(dataDir);
  if (!database) databaseOfDataDir.set(dataDir, (database = switchedDatabase(t)));
  const databaseUrl = await database;
  const { min, max } = options.rtp ?? rtpRange();
  const carriersFile = join(dir, 'carriers.yaml');
  writeFileSync(carriersFile, options.carriers ?? 'carriers: []\n');
  const configFile = join(dir, 'config.yaml');
  const defaults = {
    data_dir: dataDir, carriers_file: carriersFile, log_level: options.logLevel ?? 'debug',
    http: { host: '127.0.0.1', port: 0, rate_limit_per_second: 10000, rate_limit_burst: 10000 },
    sip: { host: '127.0.0.1', port: 0, t1_ms: 100 },
    rtp: { port_min: min, port_max: max },
    sandbox: { ring_ms: options.sandboxRingMs ?? 200, announcement: '' },
    ...(databaseUrl === undefined ? {} : { storage: { url: databaseUrl } }),
  };
  // `yaml` is merged into the defaults key by key, so a test may set any of them (sip, rtp...).
  writeFileSync(configFile, stringifyYaml(mergeDeep(defaults, (parseYaml(options.yaml ?? '') ?? {}) as Record<string, unknown>)));
  const config = loadConfig({ env: { VGW_CONFIG: configFile } });
  const logs: Record<string, unknown>[] = [];
  const keep = options.logLevel === 'info' ? 10_000 : Infinity;
  const logger: Logger = createLogger({ level: options.logLevel ?? 'debug', destination: { write: (line: string) => { if (logs.length < keep) logs.push(JSON.parse(line) as Record<string, unknown>); } } });
  const gateway = await startGateway({ config, logger, announce: () => undefined });
  t.teardown(() => gateway.stop('test over'));
  const tenant = await gateway.store.tenants.create('acme');
  const liveKey = (await gateway.store.apiKeys.create(tenant.id, 'live')).apiKey;
  const sandboxKey = (await gateway.store.apiKeys.create(tenant.id, 'sandbox')).apiKey;
  const base = `http://127.0.0.1:${gateway.httpPort}`;
  const api: TestGateway['api'] = async (method, path, body, o = {}) => {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${o.key ?? sandboxKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...o.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : {}) as ApiBody, headers: response.headers };
  };
  return { gateway, dataDir, base, tenantId: tenant.id, liveKey, sandboxKey, api, logs };
}

/**
 * The usual inbound setup: a fake agent (closed at teardown), and the tenant's `did` on `carrier`
 * routed to it by importing a `custom` media_bridge agent with that DID.
 */
export async function routeDidToFakeAgent(
  t: Test,
  gw: TestGateway,
  route: { did: string; carrier: string; externalAgentId: string },
): Promise<{ bot: FakeCustomAgent; agentId: string | undefined }> {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  await gw.gateway.store.numbers.add(gw.tenantId, route.did, route.carrier);
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: route.externalAgentId, connection_mode: 'media_bridge', websocket_url: bot.url, did_number: route.did,
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, `the agent is imported with its DID: ${JSON.stringify(imported.body)}`);
  return { bot, agentId: imported.body.id };
}

/** Polls `check` until it returns a value that is not undefined/false, or fails after `ms`. */
export async function waitFor<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
