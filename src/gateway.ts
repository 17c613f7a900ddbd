/**
 * @module startGateway(): builds the running product from a Config: store, secrets, the SIP and
 * media engine with its call service, and the control API over them; and stops it in order: stop
 * taking new work, drain HTTP, hang up calls, close.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { systemClock, type Clock } from './common/clock.js';
import type { Logger } from './common/logger.js';
import { SecretBox } from './common/secret-box.js';
import type { Config } from './config/schema.js';
import { loadMasterKey } from './config/master-key.js';
import { loadCarriers, type CarrierConfig } from './config/carriers.js';
import { createApp } from './control-api/app.js';
import { createApiServer } from './control-api/http-server.js';
import type { WebhookOptions, WebhookPorts } from './post-call/index.js';
import { createProviderRegistry, downloadRecording, postCallWebhooks } from './providers/index.js';
import { databasePath, openStore, type Store } from './storage/index.js';
import { startCallEngine, type CallEngine } from './gateway/call-engine.js';
import { prepareDataDir } from './start-up.js';
import { waitForDrain } from './drain.js';

export interface GatewayOptions {
  config: Readonly<Config>;
  logger: Logger;
  clock?: Clock;
  /** Where the first-start sandbox key is announced (stderr in production: stdout is the JSON log stream). */
  announce?: (text: string) => void;
}

export interface Gateway {
  httpPort: number;
  /** Where SIP listens (UDP and TCP), and the sandbox far end's URI. */
  sip: { host: string; udpPort: number; tcpPort: number; tlsPort: number | null; sandboxUri: string };
  store: Store;
  secrets: SecretBox;
  carriers: readonly CarrierConfig[];
  /** Stops taking new work, waits up to the drain time for work in flight, then closes. Idempotent. */
  stop(reason: string): Promise<void>;
}

/** On first start with an empty database: a sandbox tenant, whose key is shown this once. */
function bootstrapSandboxTenant(store: Store, logger: Logger, announce: (text: string) => void): void {
  if (store.tenants.count() > 0) return;
  const tenant = store.tenants.create('sandbox');
  // The log says that it happened (never the key); the key itself goes to the announcement only.
  logger.info({ tenant_id: tenant.id }, 'first start: sandbox tenant created, its key announced on stderr');
  const { apiKey } = store.apiKeys.create(tenant.id, 'sandbox');
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
function webhookOptions(config: Readonly<Config>): WebhookOptions {
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
    dataDir: config.data_dir,
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

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const carriers = loadCarriers(config.carriers_file);
  prepareDataDir(config.data_dir);
  const secrets = new SecretBox(loadMasterKey(config.secret_key, config.data_dir));
  const store = openStore(databasePath(config.data_dir), clock, {
    idleMs: config.auth.session_idle_minutes * 60_000,
    absoluteMs: config.auth.session_absolute_hours * 3_600_000,
  }, secrets, { busyTimeoutMs: config.storage.busy_timeout_ms });

  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics, prefix: 'vgw_' });
  let draining = false;
  const platforms = createProviderRegistry(config.providers, { clock });
  let engine: CallEngine;
  try {
    engine = await startCallEngine({ config, carriers, store, clock, logger, platforms, metrics, isDraining: () => draining });
  } catch (err) {
    store.close();
    throw err;
  }
  const api = createApp({
    options: {
      cookieSecure: config.http.cookie_secure, allowedOrigins: config.http.allowed_origins,
      bodyLimitBytes: config.http.body_limit_bytes, rateLimitPerSecond: config.http.rate_limit_per_second,
      rateLimitBurst: config.http.rate_limit_burst, sessionMaxAgeSeconds: config.auth.session_absolute_hours * 3600,
      trustProxy: config.http.trust_proxy, allowPrivateAgentUrls: config.calls.allow_private_agent_urls,
      allowPrivateSipTargets: config.calls.allow_private_sip_targets, allowedPrivateNetworks: config.calls.allowed_private_networks,
      callLiveWindowMs: config.calls.live_window_minutes * 60_000,
      largeBodies: {
        largeBodyBytes: config.http.large_body_bytes, maxLargeBodiesPerClient: config.http.max_large_bodies_per_client,
        maxLargeBodies: config.http.max_large_bodies,
      },
    },
    store, logger, metrics, clock,
    platforms,
    readiness: { notReadyReason: () => (draining ? 'draining' : null) },
    calls: engine.service,
    ...(engine.sipTraces ? { sipTraces: engine.sipTraces } : {}),
    locateSip: engine.locateSip,
    webhooks: { ports: webhookPorts(clock), options: webhookOptions(config) },
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
  let httpPort: number;
  try {
    httpPort = await listen(server, config.http.host, config.http.port);
  } catch (err) {
    // The HTTP port is taken (or not ours to bind): undo the engine so nothing is left listening.
    await engine.stop();
    store.close();
    throw err;
  }
  // Only now that every listener is bound: a failed first start leaves no tenant whose key was never shown.
  bootstrapSandboxTenant(store, logger, options.announce ?? ((text) => process.stderr.write(`${text}\n`)));
  logger.info({ host: config.http.host, port: httpPort, data_dir: config.data_dir, carriers: carriers.map((c) => c.name) }, 'control API listening');

  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => (stopping ??= (async () => {
    draining = true;
    logger.info({ reason, drain_seconds: config.shutdown.drain_seconds }, 'draining');
    // The listener stays open: /readyz answers 503 and new calls are refused (unavailable) while
    // live calls and requests in flight go on, until none is left or the drain time is over.
    const outcome = await waitForDrain({ liveCalls: () => engine.service.registry.size, requestsInFlight: () => requestsInFlight }, config.shutdown.drain_seconds * 1000);
    if (outcome === 'timeout') logger.warn({ live_calls: engine.service.registry.size }, 'drain time over; ending what is left');
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    // Calls still up are hung up (gateway_shutdown) so their CDRs and recordings are complete.
    await engine.stop();
    store.close();
    logger.info('stopped');
  })());

  return { httpPort, sip: { ...engine.sip, sandboxUri: engine.sandboxUri }, store, secrets, carriers, stop };
}
