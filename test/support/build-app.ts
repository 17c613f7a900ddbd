/**
 * @module await buildApp(t): the control API over an in-memory store and a fake clock, torn down with
 * the test. Requests are injected into app.callback() (light-my-request); no port is opened.
 */
import type { EventBus } from '../../src/events/event-bus.js';
import { FolderRecordingFiles } from '../../src/common/recording-files.js';
import { inject, type InjectOptions, type Response } from 'light-my-request';
import { Registry } from 'prom-client';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../src/common/clock.js';
import { SecretBox } from '../../src/common/secret-box.js';
import { createLogger } from '../../src/common/logger.js';
import { createApp, type ApiOptions, type ControlApi } from '../../src/control-api/app.js';
import type { AnyRoute } from '../../src/control-api/route.js';
import type { HostResolver } from '../../src/control-api/ports.js';
import type { CallControl } from '../../src/engine/calls/call-control.js';
import { locateAddresses, ServerLocator, type DnsLookup } from '../../src/engine/sip/index.js';
import type { WebhookOptions, WebhookPorts } from '../../src/post-call/index.js';
import {
  createProviderRegistry, downloadRecording, postCallWebhooks, type DownloadOptions, type ProviderOverrides,
} from '../../src/providers/index.js';
import { openStore, type Store, type TenantRecord } from '../../src/storage/index.js';
import { switchedDatabase } from './postgres.js';

export interface TestTenant {
  tenant: TenantRecord;
  apiKey: string;
  sandboxKey: string;
  /** Authorization header for the live key. */
  auth: { authorization: string };
}

export interface AppHarness {
  api: ControlApi;
  store: Store;
  clock: FakeClock;
  /** Every log line the app wrote, as raw JSON text. */
  logLines: string[];
  request(options: InjectOptions): Promise<Response>;
  createTenant(name?: string): Promise<TestTenant>;
  /** The data folder (a temporary directory removed at teardown): archived recordings land here. */
  dataDir: string;
}

export const testApiOptions: ApiOptions = {
  cookieSecure: true, allowedOrigins: ['https://console.example.com'], bodyLimitBytes: 64 * 1024,
  largeBodies: { largeBodyBytes: 64 * 1024, maxLargeBodiesPerClient: 2, maxLargeBodies: 8 },
  rateLimitPerSecond: 1000, rateLimitBurst: 1000, sessionMaxAgeSeconds: 8 * 3600, trustProxy: false, allowPrivateAgentUrls: false, callLiveWindowMs: 15 * 60_000,
};

export interface BuildAppOverrides {
  options?: Partial<ApiOptions>;
  routes?: (h: { store: Store; clock: FakeClock }) => AnyRoute[];
  draining?: () => boolean;
  /** Provider endpoint overrides (point them at fake providers); the public endpoints otherwise. */
  providers?: ProviderOverrides;
  /**
   * A database file instead of :memory: (to inspect the raw file), or a PostgreSQL URL. Absent:
   * :memory:, or a fresh PostgreSQL database under VGW_TEST_BACKEND=postgres (support/postgres.ts).
   */
  dbFile?: string;
  /** Post-call webhook settings over the test defaults (no secrets, no recording hosts). */
  webhooks?: Partial<WebhookOptions>;
  /** Test-only downloader options (trust anchors, resolver, the address seam) passed through the port. */
  recordingDownload?: Partial<DownloadOptions>;
  /** The call engine's commands (a FakeCallControl for API-rule tests); absent: commands answer 503. */
  callControl?: (h: { store: Store; clock: FakeClock }) => CallControl;
  /** Name resolution for the agent address check (so tests need no DNS). */
  resolveHost?: HostResolver;
  /** The console's built files, served at /console (docs/CONSOLE.md); not served when absent. */
  console?: { root: string };
  /** Committed call events, as the `all` role gives the API (the live stream polls the log without). */
  eventBus?: EventBus;
  /** DNS answers of the RFC 3263 resolver that checks stored `sip_uri`s; the system's servers otherwise. */
  sipDns?: DnsLookup;
}

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export async function buildApp(t: Teardown, overrides: BuildAppOverrides = {}): Promise<AppHarness> {
  const clock = new FakeClock(Date.now());
  const location = overrides.dbFile ?? (await switchedDatabase(t)) ?? ':memory:';
  const store = await openStore(location, clock, { idleMs: 30 * 60_000, absoluteMs: 8 * 3600_000 }, new SecretBox(randomBytes(32)));
  const logLines: string[] = [];
  const destination = new Writable({ write(chunk: Buffer, _enc, done) { logLines.push(chunk.toString('utf8')); done(); } });
  const logger = createLogger({ level: 'debug', destination });
  const dataDir = mkdtempSync(join(tmpdir(), 'vgw-app-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const webhookPorts: WebhookPorts = {
    vendors: postCallWebhooks(),
    downloadRecording: (url, limits) => downloadRecording(url, { ...limits, ...overrides.recordingDownload }),
  };
  const webhookOptions: WebhookOptions = {
    attributionWindowMs: 120 * 60_000, secrets: {}, recordingHosts: { elevenlabs: [], retell: [], vapi: ['storage.vapi.ai'] },
    downloadMaxBytes: 1024 * 1024, downloadTimeoutMs: 5_000, downloadMaxRedirects: 3, recordings: new FolderRecordingFiles(join(dataDir, 'recordings')), bodyLimitBytes: 256 * 1024,
    maxRawBytesPerCall: 4 * 1024 * 1024, maxRawBytesTotal: 256 * 1024 * 1024,
    ...overrides.webhooks,
  };
  const sipLocator = new ServerLocator(overrides.sipDns ? { dns: overrides.sipDns } : {});
  const api = createApp({
    options: { ...testApiOptions, ...overrides.options },
    store, logger, clock, metrics: new Registry(),
    // Verification waits on real sockets (fake providers on loopback), so the HTTP clock is real.
    platforms: createProviderRegistry(overrides.providers ?? {}, { timeoutMs: 2_000, retryBackoffMs: 20 }),
    readiness: { notReadyReason: () => (overrides.draining?.() ? 'draining' : null) },
    routes: overrides.routes?.({ store, clock }) ?? [],
    ...(overrides.eventBus ? { eventBus: overrides.eventBus } : {}),
    ...(overrides.callControl ? { calls: overrides.callControl({ store, clock }) } : {}),
    ...(overrides.resolveHost ? { resolveHost: overrides.resolveHost } : {}),
    locateSip: (uri) => locateAddresses(sipLocator, uri),
    // As an API process reads them: the traces the engines stored (docs/API.md "SIP trace of a call").
    sipTraces: { read: (tenantId, callId) => store.sipTraces.get(tenantId, callId) },
    webhooks: { ports: webhookPorts, options: webhookOptions },
    ...(overrides.console ? { console: overrides.console } : {}),
  });
  const callback = api.app.callback();
  // Koa's callback settles its own promise (errors become responses), so nothing is lost by void.
  const dispatch = (req: IncomingMessage, res: ServerResponse): void => { void callback(req, res); };
  t.teardown(() => store.close());
  return {
    api, store, clock, logLines, dataDir,
    request: (options) => inject(dispatch, options),
    async createTenant(name = 'Tenant') {
      const tenant = await store.tenants.create(name);
      const { apiKey } = await store.apiKeys.create(tenant.id, 'live');
      const { apiKey: sandboxKey } = await store.apiKeys.create(tenant.id, 'sandbox');
      return { tenant, apiKey, sandboxKey, auth: { authorization: `Bearer ${apiKey}` } };
    },
  };
}

/** The session cookie value from a login response's Set-Cookie. */
export function sessionCookieOf(response: Response): string {
  const header = response.headers['set-cookie'];
  const line = Array.isArray(header) ? header[0] : header;
  const match = /gateway_session=([^;]*)/.exec(line ?? '');
  if (!match) throw new Error('no gateway_session cookie in the response');
  return match[1]!;
}
