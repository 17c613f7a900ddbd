/**
 * @module The control API as a process serves it: the Koa app over the store and a CallControl
 * (the engine in this process, or the engines behind an API process), its HTTP server with the
 * requests in flight counted for the drain, and the first-start sandbox tenant.
 */
import type { EventBus } from '../events/event-bus.js';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { RecordingFiles } from '../common/recording-files.js';
import type { Config } from '../config/schema.js';
import { createApp } from '../control-api/app.js';
import { createApiServer } from '../control-api/http-server.js';
import type { SipUriLocator } from '../control-api/ports.js';
import type { SerializedJson } from '../control-api/route.js';
import type { LiveListCache } from '../control-api/routes/calls/live-list-cache.js';
import type { SipTraceReader } from '../control-api/routes/calls/sip-trace.routes.js';
import type { CallControl } from '../engine/calls/index.js';
import type { WebhookOptions, WebhookPorts } from '../post-call/index.js';
import { downloadRecording, postCallWebhooks, type ProviderRegistry } from '../providers/index.js';
import type { Store } from '../storage/index.js';

/**
 * The console build (docs/CONSOLE.md): `dist/console` at the package root, reached the same way
 * from src/gateway (tests) and dist/gateway (the built program).
 */
const CONSOLE_ROOT = fileURLToPath(new URL('../../dist/console', import.meta.url));

/** On first start with an empty database: a sandbox tenant, whose key is shown this once. */
export async function bootstrapSandboxTenant(store: Store, logger: Logger, announce: (text: string) => void): Promise<void> {
  if ((await store.tenants.count()) > 0) return;
  const tenant = await store.tenants.create('sandbox');
  // The log says that it happened (never the key); the key itself goes to the announcement only.
  logger.info({ tenant_id: tenant.id }, 'first start: sandbox tenant created, its key announced on stderr');
  const { apiKey } = await store.apiKeys.create(tenant.id, 'sandbox');
  announce([
    '',
    'First start: created the sandbox tenant.',
    `  tenant id:   ${tenant.id}`,
    `  sandbox key: ${apiKey}`,
    `This key is shown once; make another with \`npm run -s vgw -- key create ${tenant.id} --sandbox\`.`,
    '',
  ].join('\n'));
}

/** The post-call webhook's settings, compiled from the `webhooks` and `http` sections. */
function webhookOptions(config: Readonly<Config>, recordings: RecordingFiles): WebhookOptions {
  const { webhooks } = config;
  // Only the secrets of providers with a post-call webhook: a secret under another name checks nothing.
  const secrets = Object.fromEntries([...postCallWebhooks().keys()].map((name) => [name, webhooks.secrets[name]]));
  return {
    attributionWindowMs: webhooks.attribution_window_minutes * 60_000,
    secrets,
    recordingHosts: webhooks.recording_hosts,
    downloadMaxBytes: webhooks.download_max_bytes,
    downloadTimeoutMs: webhooks.download_timeout_seconds * 1000,
    downloadMaxRedirects: webhooks.download_max_redirects,
    maxRawBytesPerCall: webhooks.max_raw_bytes_per_call,
    maxRawBytesTotal: webhooks.max_raw_bytes_total,
    recordings,
    bodyLimitBytes: config.http.webhook_body_limit_bytes,
  };
}

/** The providers registry's post-call webhooks (parsers, signature rules), handed to the control API through its ports. */
function webhookPorts(clock: Clock): WebhookPorts {
  return {
    vendors: postCallWebhooks(),
    downloadRecording: (url, limits) => downloadRecording(url, { ...limits, clock }),
  };
}

export function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export interface ControlApiDeps {
  config: Readonly<Config>;
  store: Store;
  logger: Logger;
  metrics: Registry;
  clock: Clock;
  platforms: ProviderRegistry;
  recordings: RecordingFiles;
  /** The calls' commands; absent, every command answers 503. */
  calls: CallControl | undefined;
  locateSip: SipUriLocator;
  /** Calls' SIP traces (docs/API.md "SIP trace of a call"); the route answers 404 without. */
  sipTraces?: SipTraceReader;
  /** The `api` process's cache of live call list pages; the list is read per request without it. */
  liveListCache?: LiveListCache<SerializedJson>;
  /** Why the process takes no new work (draining), or null. */
  notReadyReason: () => string | null;
  /** `health`: only /healthz, /readyz and /metrics (an engine process). */
  surface?: 'full' | 'health';
  /** Committed call events when the engine runs in this process (the `all` role). */
  eventBus?: EventBus;
  /** The cluster's Redis client, through which API processes share the rate limits. */
  rateLimitStore?: unknown;
}

export interface ControlApiServer {
  server: Server;
  requestsInFlight: () => number;
  /** Binds `http.host`/`http.port`; resolves with the port. */
  listen(): Promise<number>;
  /** Stops listening and closes every connection. */
  close(): Promise<void>;
}

export function controlApiServer(d: ControlApiDeps): ControlApiServer {
  const { config } = d;
  const api = createApp({
    options: {
      cookieSecure: config.http.cookie_secure, allowedOrigins: config.http.allowed_origins,
      bodyLimitBytes: config.http.body_limit_bytes, rateLimitPerSecond: config.http.rate_limit_per_second,
      rateLimitBurst: config.http.rate_limit_burst, ...(d.rateLimitStore !== undefined ? { rateLimitStore: d.rateLimitStore } : {}), sessionMaxAgeSeconds: config.auth.session_absolute_hours * 3600,
      trustProxy: config.http.trust_proxy, allowPrivateAgentUrls: config.calls.allow_private_agent_urls,
      allowPrivateSipTargets: config.calls.allow_private_sip_targets, allowedPrivateNetworks: config.calls.allowed_private_networks,
      callLiveWindowMs: config.calls.live_window_minutes * 60_000,
      eventsAllowHttp: config.events.allow_http, eventsKeepaliveMs: config.events.stream_keepalive_seconds * 1000,
      largeBodies: {
        largeBodyBytes: config.http.large_body_bytes, maxLargeBodiesPerClient: config.http.max_large_bodies_per_client,
        maxLargeBodies: config.http.max_large_bodies,
      },
    },
    store: d.store, logger: d.logger, metrics: d.metrics, clock: d.clock,
    platforms: d.platforms,
    readiness: { notReadyReason: d.notReadyReason },
    calls: d.calls,
    ...(d.sipTraces ? { sipTraces: d.sipTraces } : {}),
    liveListCache: d.liveListCache,
    locateSip: d.locateSip,
    webhooks: { ports: webhookPorts(d.clock), options: webhookOptions(config, d.recordings) },
    surface: d.surface,
    console: { root: CONSOLE_ROOT },
    eventBus: d.eventBus,
  });
  const handle = api.app.callback();
  // Koa settles its own promise (errors become responses), so nothing is lost by void.
  let requestsInFlight = 0;
  const server = createApiServer((req, res) => {
    requestsInFlight += 1;
    res.once('close', () => { requestsInFlight -= 1; });
    void handle(req, res);
  });
  server.keepAliveTimeout = 5_000;
  return {
    server,
    requestsInFlight: () => requestsInFlight,
    listen: () => listen(server, config.http.host, config.http.port),
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
