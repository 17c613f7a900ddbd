/**
 * @module createApp(deps): the Koa control API, built from injected dependencies (no globals), so
 * tests drive `app.callback()` directly and main.ts wires the real store and engine.
 */
import Koa from 'koa';
import type { Registry } from 'prom-client';
import type { Logger } from '../common/logger.js';
import { OutboundAddressPolicy, tenantHostResolver } from '../common/outbound-policy.js';
import type { Store } from '../storage/index.js';
import type { ApiState } from './api-state.js';
import { createApiMetrics } from './metrics.js';
import { accessLog } from './middleware/access-log.js';
import { errorHandler } from './middleware/error-handler.js';
import { RequestRateLimiter } from './middleware/rate-limit.js';
import { BodyAdmission, type BodyAdmissionOptions } from './middleware/body-admission.js';
import { requestId } from './middleware/request-id.js';
import { consoleFiles, type ConsoleFilesOptions } from './middleware/console-files.js';
import { buildOpenApiDocument } from './openapi/openapi-document.js';
import type { AnyRoute, SerializedJson } from './route.js';
import { buildRouter } from './router.js';
import type { Clock } from '../common/clock.js';
import type { CallControl } from '../engine/calls/call-control.js';
import type { AgentPlatforms, HostResolver, SipUriLocator } from './ports.js';
import { callReadRoutes } from './routes/calls/calls.routes.js';
import type { LiveListCache } from './routes/calls/live-list-cache.js';
import { sipTraceRoutes, type SipTraceReader } from './routes/calls/sip-trace.routes.js';
import { callCommandRoutes } from './routes/calls/calls-commands.routes.js';
import { agentRoutes } from './routes/agents/agents.routes.js';
import { authRoutes } from './routes/auth/auth.routes.js';
import { routeRoutes } from './routes/routes/routes.routes.js';
import { sipCredentialRoutes } from './routes/sip-credentials/sip-credentials.routes.js';
import { numberRoutes } from './routes/numbers/numbers.routes.js';
import { callerIdRoutes } from './routes/numbers/caller-ids.routes.js';
import { systemRoutes, type Readiness } from './routes/system/system.routes.js';
import { tenantRoutes } from './routes/tenant/tenant.routes.js';
import { webhookRoutes } from './routes/webhooks/webhooks.routes.js';
import { webhookEndpointRoutes } from './routes/events/webhook-endpoints.routes.js';
import { eventLogRoutes } from './routes/events/events.routes.js';
import { eventStreamRoutes } from './routes/events/event-stream.routes.js';
import type { EventBus } from '../events/event-bus.js';
import type { WebhookOptions, WebhookPorts } from '../post-call/index.js';

/** The slice of configuration the API reads. */
export interface ApiOptions {
  cookieSecure: boolean;
  allowedOrigins: readonly string[];
  bodyLimitBytes: number;
  /** How many bodies that may be large are read at once, per client address and overall. */
  largeBodies: BodyAdmissionOptions;
  rateLimitPerSecond: number;
  rateLimitBurst: number;
  /** A node-redis client the API processes share the rate limits through (docs/CLUSTER.md "Live state in Redis"); per process when absent. */
  rateLimitStore?: unknown;
  sessionMaxAgeSeconds: number;
  trustProxy: boolean;
  /** How long ended calls stay in `GET /v1/calls?state=ended`. */
  callLiveWindowMs: number;
  /** Allow agent addresses on loopback/private networks (development only). */
  allowPrivateAgentUrls: boolean;
  /** Allow sip_trunk `sip_uri`s on loopback/private networks (development only); false when absent. */
  allowPrivateSipTargets?: boolean;
  /** Non-public networks (addresses or CIDRs) both may reach anyway. */
  allowedPrivateNetworks?: readonly string[];
  /** Webhook endpoints may be `http://` (config `events.allow_http`); false when absent. */
  eventsAllowHttp?: boolean;
  /** Between `: keepalive` comments of the live event stream (config `events.stream_keepalive_seconds`); 15 s when absent. */
  eventsKeepaliveMs?: number;
}

export interface AppDeps {
  options: ApiOptions;
  store: Store;
  platforms: AgentPlatforms;
  /** The engine's call commands and live sessions; when absent, commands answer 503 `unavailable`. */
  calls?: CallControl;
  /** Name resolution for the agent address checks; the outbound-address policy's by default. */
  resolveHost?: HostResolver;
  /** RFC 3263 location of a `sip_uri`, with the SIP layer's resolver, for its address check. */
  locateSip: SipUriLocator;
  clock: Clock;
  logger: Logger;
  metrics: Registry;
  readiness: Readiness;
  /** Calls' SIP traces (docs/API.md "SIP trace of a call"); the endpoint answers 404 without. */
  sipTraces?: SipTraceReader;
  /** Pages of the live call list served again for a short time (an `api` process, docs/ARCHITECTURE.md "Process roles"); read per request when absent. */
  liveListCache?: LiveListCache<SerializedJson> | undefined;
  /** Committed call events of this process (the `all` role); without it the live stream reads the log every second. */
  eventBus?: EventBus | undefined;
  /** Routes of later features (calls, agents, ...), mounted beside the built-in ones. */
  routes?: AnyRoute[];
  /** The post-call webhook endpoint and the recording endpoint; not mounted when absent. */
  webhooks?: { ports: WebhookPorts; options: WebhookOptions };
  /**
   * `health`: only /healthz, /readyz and /metrics, for an engine process, whose tenants are
   * served by an API process (docs/ARCHITECTURE.md "Process roles"). `full` by default.
   */
  surface?: 'full' | 'health' | undefined;
  /** The built tenant console, served at /console (docs/CONSOLE.md); not served when absent. */
  console?: ConsoleFilesOptions | undefined;
}

const HEALTH_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

export interface ControlApi {
  app: Koa<ApiState>;
  routes: readonly AnyRoute[];
  openApiDocument(): Record<string, unknown>;
}

export function createApp(deps: AppDeps): ControlApi {
  const { options, store } = deps;
  const resolveHost = deps.resolveHost ?? tenantHostResolver;
  // docs/SECURITY.md "Outbound addresses": one policy, with the operator's exceptions per kind.
  const allowedPrivateNetworks = options.allowedPrivateNetworks ?? [];
  const agentUrls = new OutboundAddressPolicy({ allowPrivate: options.allowPrivateAgentUrls, allowedPrivateNetworks });
  const sipTargets = new OutboundAddressPolicy({ allowPrivate: options.allowPrivateSipTargets ?? false, allowedPrivateNetworks });
  let document: Record<string, unknown> | undefined;
  const openApiDocument = (): Record<string, unknown> => (document ??= buildOpenApiDocument(routes));
  const routes: AnyRoute[] = [
    ...systemRoutes({ readiness: deps.readiness, metrics: deps.metrics, openApiDocument }),
    ...authRoutes({ apiKeys: store.apiKeys, sessions: store.sessions, cookieSecure: options.cookieSecure, sessionMaxAgeSeconds: options.sessionMaxAgeSeconds, allowedOrigins: options.allowedOrigins }),
    ...tenantRoutes({ tenants: store.tenants }),
    ...numberRoutes({ store }),
    ...callerIdRoutes({ store }),
    ...agentRoutes({
      store, platforms: deps.platforms, clock: deps.clock,
      addresses: { agentUrls, sipTargets, resolveHost, locateSip: deps.locateSip, clock: deps.clock },
    }),
    ...routeRoutes({ routes: store.routes }),
    ...sipCredentialRoutes({ sipCredentials: store.sipCredentials }),
    ...callReadRoutes({
      calls: store.calls, transcripts: store.transcripts, clock: deps.clock, liveWindowMs: options.callLiveWindowMs,
      sessions: deps.calls, liveList: deps.liveListCache,
    }),
    ...sipTraceRoutes({ calls: store.calls, traces: deps.sipTraces }),
    // Endpoint URLs pass the agent URLs' policy (docs/EVENTS.md "Delivery").
    ...webhookEndpointRoutes({
      endpoints: store.webhookEndpoints, deliveries: store.eventDeliveries, policy: agentUrls, resolveHost, allowHttp: options.eventsAllowHttp ?? false, clock: deps.clock,
    }),
    ...eventStreamRoutes({ events: store.events, bus: deps.eventBus, keepaliveMs: options.eventsKeepaliveMs ?? 15_000 }),
    ...eventLogRoutes({ events: store.events, deliveries: store.eventDeliveries }),
    ...callCommandRoutes({
      calls: deps.calls, records: store.calls, idempotency: store.idempotency, resolveHost, clock: deps.clock, agentUrls, agents: store.agents,
    }),
    ...(deps.webhooks ? webhookRoutes({ ...deps.webhooks, store, clock: deps.clock, logger: deps.logger, metrics: deps.metrics }) : []),
    ...(deps.routes ?? []),
  ];
  const served = deps.surface === 'health' ? routes.filter((route) => HEALTH_PATHS.has(route.path)) : routes;
  const router = buildRouter(served, {
    auth: { apiKeys: store.apiKeys, sessions: store.sessions },
    rateLimiter: new RequestRateLimiter({ perSecond: options.rateLimitPerSecond, burst: options.rateLimitBurst, sharedStore: options.rateLimitStore }),
    allowedOrigins: options.allowedOrigins,
    bodyLimitBytes: options.bodyLimitBytes,
    bodyAdmission: new BodyAdmission(options.largeBodies),
  });
  const app = new Koa<ApiState>({ proxy: options.trustProxy });
  // Koa's own error printing would duplicate ours; everything is handled in errorHandler.
  app.silent = true;
  app.use(requestId());
  app.use(createApiMetrics(deps.metrics).middleware);
  app.use(accessLog(deps.logger));
  app.use(errorHandler(deps.logger));
  if (deps.console && deps.surface !== 'health') app.use(consoleFiles(deps.console));
  app.use(router.routes());
  app.use(router.allowedMethods({ throw: false }));
  return { app, routes, openApiDocument };
}
