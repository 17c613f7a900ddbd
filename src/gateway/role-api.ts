/**
 * @module The `api` role (docs/ARCHITECTURE.md "Process roles"): the control API alone, with no
 * SIP or RTP socket. Call commands go to the engines through RemoteCallControl; the live call
 * list is read from the database, which the engines write, or with `cluster.redis_url` from
 * Redis (docs/CLUSTER.md "Live state in Redis"), and its pages are served again for
 * `api.live_list_cache_ms`; recordings are read from the shared recordings folder. Stops in
 * order: not ready, requests drained, closed.
 */
import { Counter, type Registry } from 'prom-client';
import type { TenantId } from '../common/ids.js';
import type { SerializedJson } from '../control-api/route.js';
import { LiveListCache } from '../control-api/routes/calls/live-list-cache.js';
import { waitForDrain } from '../drain.js';
import type { CallCommandResult, CallControl } from '../engine/calls/index.js';
import { locateAddresses, ServerLocator } from '../engine/sip/index.js';
import { bootstrapSandboxTenant, controlApiServer } from './control-api-server.js';
import { openClusterState, redisLiveList, unavailableCounter, type UnavailableCounter } from './cluster-state.js';
import { redisEngineDirectory, sqlEngineDirectory } from './engine-directory.js';
import { NODE_LIVE_WITHIN_MS } from './node-presence.js';
import { openProcessBase, type GatewayOptions, type RoleProcess } from './process-base.js';
import { RemoteCallControl } from './remote-call-control.js';

/** Longest wait for an engine's answer: a hang-up waits for the call's end (BYE, or CANCEL and its 487). */
const COMMAND_TIMEOUT_MS = 40_000;

/**
 * The tenant's cached list pages are dropped once each of its commands is answered (or failed:
 * an engine that did not answer may have acted), so that its next list reads what the engine
 * wrote: a tenant sees its own placed, held or hung-up call at once.
 */
function droppingPagesOnCommands(calls: CallControl, liveList: Pick<LiveListCache<unknown>, 'invalidate'>): CallControl {
  const dropAfter = async (tenantId: TenantId, command: Promise<CallCommandResult>): Promise<CallCommandResult> => {
    try {
      return await command;
    } finally {
      liveList.invalidate(tenantId);
    }
  };
  return {
    place: (request) => dropAfter(request.tenantId, calls.place(request)),
    hold: (tenantId, callId) => dropAfter(tenantId, calls.hold(tenantId, callId)),
    unhold: (tenantId, callId) => dropAfter(tenantId, calls.unhold(tenantId, callId)),
    sendDigits: (tenantId, callId, digits) => dropAfter(tenantId, calls.sendDigits(tenantId, callId, digits)),
    hangup: (tenantId, callId) => dropAfter(tenantId, calls.hangup(tenantId, callId)),
    transfer: (tenantId, callControlId, to) => dropAfter(tenantId, calls.transfer(tenantId, callControlId, to)),
    sessionOf: (tenantId, callId) => calls.sessionOf(tenantId, callId),
    carrierNames: () => calls.carrierNames(),
  };
}

/**
 * `vgw_api_live_list_pages_total{source}`: live list pages served, from the cache or read from
 * where the live list is kept (`listSource`: the database, or Redis in a cluster).
 */
function liveListPagesCounter(metrics: Registry, listSource: 'database' | 'redis'): (served: 'cache' | 'read') => void {
  const counter = new Counter({
    name: 'vgw_api_live_list_pages_total',
    help: 'Pages of the live call list (GET /v1/calls without state) this api process served, by source: cache (held, or a read under way shared), or database or redis (read).',
    labelNames: ['source'], registers: [metrics],
  });
  for (const source of ['cache', listSource]) counter.inc({ source }, 0);
  return (served) => counter.inc({ source: served === 'cache' ? 'cache' : listSource });
}

export async function startApiProcess(options: GatewayOptions): Promise<RoleProcess> {
  const { config, logger } = options;
  const secret = config.cluster.secret;
  // loadConfig refuses a role other than `all` without one; a config built otherwise must too.
  if (secret === undefined) throw new Error('cluster.secret is required for the api role');
  const live = await openClusterState(config, logger);
  // The metrics registry comes with the process base, opened after the list source it counts for.
  let unavailable: UnavailableCounter = () => undefined;
  let base;
  try {
    base = await openProcessBase(options, { liveList: live ? redisLiveList(live, logger.child({ component: 'cluster-state' }), () => unavailable) : 'database' });
  } catch (err) {
    await live?.close();
    throw err;
  }
  if (live) unavailable = unavailableCounter(base.metrics);
  const { store } = base;
  let draining = false;
  // Name resolution only (no socket is bound): the same RFC 3263 checks of sip_uri as an engine's.
  const locator = new ServerLocator();
  const remote = new RemoteCallControl({
    directory: live ? redisEngineDirectory(live, store.calls) : sqlEngineDirectory(store.nodes, store.calls, NODE_LIVE_WITHIN_MS),
    secret, timeoutMs: COMMAND_TIMEOUT_MS, logger: logger.child({ component: 'remote-calls' }),
  });
  // docs/DECISIONS.md "The live call list of an api process": 0 reads the list on every request.
  const freshForMs = config.api.live_list_cache_ms;
  const liveListCache = freshForMs > 0 ? new LiveListCache<SerializedJson>({ freshForMs, clock: base.clock, onServe: liveListPagesCounter(base.metrics, live ? 'redis' : 'database') }) : undefined;
  const calls = liveListCache ? droppingPagesOnCommands(remote, liveListCache) : remote;
  // The engines write a call's SIP trace to the shared store when the call ends; a live call's is
  // still in its engine's memory, so the API process serves traces of ended calls.
  const sipTraces = { read: (tenantId: TenantId, callId: string) => base.store.sipTraces.get(tenantId, callId) };
  const api = controlApiServer({ ...base, calls, sipTraces, ...(liveListCache ? { liveListCache } : {}), locateSip: (uri) => locateAddresses(locator, uri), notReadyReason: () => (draining ? 'draining' : null), ...(live ? { rateLimitStore: live.client } : {}) });
  let httpPort: number;
  try {
    httpPort = await api.listen();
  } catch (err) {
    await store.close();
    await live?.close();
    throw err;
  }
  await bootstrapSandboxTenant(store, logger, base.announce);
  logger.info({ role: 'api', host: config.http.host, port: httpPort, data_dir: config.data_dir }, 'control API listening');

  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => (stopping ??= (async () => {
    draining = true;
    logger.info({ reason, drain_seconds: config.shutdown.drain_seconds }, 'draining');
    await waitForDrain({ liveCalls: () => 0, requestsInFlight: api.requestsInFlight }, config.shutdown.drain_seconds * 1000);
    await api.close();
    await store.close();
    await live?.close();
    logger.info('stopped');
  })());
  return { httpPort, stop };
}
