/**
 * @module The `api` role (docs/ARCHITECTURE.md "Process roles"): the control API alone, with no
 * SIP or RTP socket. Call commands go to the engines through RemoteCallControl; the live call
 * list is read from the database, which the engines write, or with `cluster.redis_url` from
 * Redis (docs/CLUSTER.md "Live state in Redis"); recordings are read from the shared recordings
 * folder. Stops in order: not ready, requests drained, closed.
 */
import type { TenantId } from '../common/ids.js';
import { waitForDrain } from '../drain.js';
import { locateAddresses, ServerLocator } from '../engine/sip/index.js';
import { bootstrapSandboxTenant, controlApiServer } from './control-api-server.js';
import { openClusterState, redisLiveList, unavailableCounter, type UnavailableCounter } from './cluster-state.js';
import { redisEngineDirectory, sqlEngineDirectory } from './engine-directory.js';
import { NODE_LIVE_WITHIN_MS } from './node-presence.js';
import { openProcessBase, type GatewayOptions, type RoleProcess } from './process-base.js';
import { RemoteCallControl } from './remote-call-control.js';

/** Longest wait for an engine's answer: a hang-up waits for the call's end (BYE, or CANCEL and its 487). */
const COMMAND_TIMEOUT_MS = 40_000;

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
  const calls = new RemoteCallControl({
    directory: live ? redisEngineDirectory(live, store.calls) : sqlEngineDirectory(store.nodes, store.calls, NODE_LIVE_WITHIN_MS),
    secret, timeoutMs: COMMAND_TIMEOUT_MS, logger: logger.child({ component: 'remote-calls' }),
  });
  // The engines write a call's SIP trace to the shared store when the call ends; a live call's is
  // still in its engine's memory, so the API process serves traces of ended calls.
  const sipTraces = { read: (tenantId: TenantId, callId: string) => base.store.sipTraces.get(tenantId, callId) };
  const api = controlApiServer({ ...base, calls, sipTraces, locateSip: (uri) => locateAddresses(locator, uri), notReadyReason: () => (draining ? 'draining' : null), ...(live ? { rateLimitStore: live.client } : {}) });
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
