/**
 * @module The `engine` role (docs/ARCHITECTURE.md "Process roles"): SIP and media as in a single
 * process, with HTTP reduced to /healthz, /readyz and /metrics, the internal command endpoint on
 * its own port for the API process, and its row in the `nodes` table (with `cluster.redis_url`,
 * its lease in Redis). Recovery at start ends only this node's unfinished calls. Stops in order: no new calls, drain, endpoints closed, calls hung
 * up, node row removed.
 */
import { hostname } from 'node:os';
import { isIP } from 'node:net';
import { waitForDrain } from '../drain.js';
import { startCallEngine, type CallEngine } from './call-engine.js';
import { controlApiServer, listen } from './control-api-server.js';
import { leaveEdge } from './edge-control.js';
import { internalEndpoint } from './internal-endpoint.js';
import { isUnspecified } from './media-ports.js';
import { clusterAdmission, openClusterState, unavailableCounter } from './cluster-state.js';
import { endPreviousRun, liveDialogSnapshots, liveReaperState, previousRun } from './cluster-failover.js';
import { announceNode, announceNodeLease, type NodePresence } from './node-presence.js';
import { openProcessBase, type GatewayOptions, type RoleProcess } from './process-base.js';

/** Where an API process reaches this engine's endpoint: the bound address, or the host name when bound to every address. */
function internalUrl(host: string, port: number): string {
  const name = isUnspecified(host) ? hostname() : host;
  return `http://${isIP(name) === 6 ? `[${name}]` : name}:${port}`;
}

export async function startEngineProcess(options: GatewayOptions): Promise<RoleProcess> {
  const { config } = options;
  const nodeId = config.node_id ?? `${hostname()}:${config.sip.port}`;
  const secret = config.cluster.secret;
  // loadConfig refuses a role other than `all` without one; a config built otherwise must too.
  if (secret === undefined) throw new Error('cluster.secret is required for the engine role');
  const base = await openProcessBase(options, { nodeId });
  const { logger, store } = base;
  let draining = false;
  let engine: CallEngine;
  // With cluster.redis_url: the limits across engines and the engine's lease (docs/CLUSTER.md "Live state in Redis").
  const live = await openClusterState(config, logger);
  // Calls a previous run of this node left in Redis are over: recovery ends them in the store, and
  // their far ends get a BYE once SIP is up (no other engine reaps a node whose lease is still live).
  const left = live ? await previousRun(live, nodeId, store.calls, logger) : undefined;
  try {
    const cluster = live && clusterAdmission(live, nodeId, logger.child({ component: 'cluster-admission' }), unavailableCounter(base.metrics));
    const failover = live && { snapshots: liveDialogSnapshots(live, logger.child({ component: 'cluster-state' })), state: liveReaperState(live) };
    engine = await startCallEngine({ ...base, isDraining: () => draining, recoveryNodeId: nodeId, cluster, failover });
  } catch (err) {
    await live?.close();
    await store.close();
    throw err;
  }
  const health = controlApiServer({
    ...base, calls: engine.service, locateSip: engine.locateSip, notReadyReason: () => (draining ? 'draining' : null), surface: 'health',
  });
  const internal = internalEndpoint(engine.service, secret, logger.child({ component: 'internal-endpoint' }));
  let httpPort: number;
  let internalPort: number;
  try {
    httpPort = await health.listen();
    internalPort = await listen(internal, config.internal.host, config.internal.port);
  } catch (err) {
    await health.close();
    await engine.stop();
    await live?.close();
    await store.close();
    throw err;
  }
  const announced = { id: nodeId, internalUrl: internalUrl(config.internal.host, internalPort) };
  const presence: NodePresence = live
    ? await announceNodeLease(live, { ...announced, capacity: config.cluster.capacity }, logger)
    : await announceNode(store.nodes, announced, () => engine.service.registry.size, logger);
  // With the lease renewed, no other engine reaps this node: the previous run's dialogs are ended here.
  const previousRunEnded = live && left ? endPreviousRun(live, nodeId, left, (snapshot) => engine.byeFromSnapshot(snapshot), logger) : Promise.resolve();
  logger.info({ node_id: nodeId, host: config.http.host, port: httpPort, internal_host: config.internal.host, internal_port: internalPort, data_dir: config.data_dir }, 'engine listening');

  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => (stopping ??= (async () => {
    // docs/CLUSTER.md "Drain": out of the SIP edge's rotation first, then new calls are refused.
    await leaveEdge(config, engine.sip, logger);
    draining = true;
    await presence.drain();
    logger.info({ reason, drain_seconds: config.shutdown.drain_seconds }, 'draining');
    // The internal endpoint stays open while calls drain: the API process still holds and hangs them up.
    const outcome = await waitForDrain({ liveCalls: () => engine.service.registry.size, requestsInFlight: health.requestsInFlight }, config.shutdown.drain_seconds * 1000);
    if (outcome === 'timeout') logger.warn({ live_calls: engine.service.registry.size }, 'drain time over; ending what is left');
    await previousRunEnded;
    await engine.stop();
    await presence.stop();
    const closed = new Promise<void>((resolve) => internal.close(() => resolve()));
    internal.closeAllConnections();
    await Promise.all([closed, health.close()]);
    await live?.close();
    await store.close();
    logger.info('stopped');
  })());
  return { httpPort, stop };
}
