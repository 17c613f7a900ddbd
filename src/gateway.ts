/**
 * @module startGateway(): builds the running product from a Config: store, secrets, the SIP and
 * media engine with its call service, and the control API over them; and stops it in order: stop
 * taking new work, drain HTTP, hang up calls, close. That is the `all` role; startProcess() starts
 * the role the configuration names (docs/ARCHITECTURE.md "Process roles"), the `api` and
 * `engine` ones composed in src/gateway/.
 */
import type { SecretBox } from './common/secret-box.js';
import type { CarrierConfig } from './config/carriers.js';
import type { Store } from './storage/index.js';
import { startCallEngine, type CallEngine } from './gateway/call-engine.js';
import { bootstrapSandboxTenant, controlApiServer } from './gateway/control-api-server.js';
import { openProcessBase, type GatewayOptions, type RoleProcess } from './gateway/process-base.js';
import { leaveEdge } from './gateway/edge-control.js';
import { startApiProcess } from './gateway/role-api.js';
import { startEngineProcess } from './gateway/role-engine.js';
import { waitForDrain } from './drain.js';

export type { GatewayOptions, RoleProcess } from './gateway/process-base.js';

export interface Gateway extends RoleProcess {
  /** Where SIP listens (UDP and TCP), and the sandbox far end's URI. */
  sip: { host: string; udpPort: number; tcpPort: number; tlsPort: number | null; sandboxUri: string };
  store: Store;
  secrets: SecretBox;
  carriers: readonly CarrierConfig[];
}

/** The process the configuration's `role` asks for. */
export function startProcess(options: GatewayOptions): Promise<RoleProcess> {
  switch (options.config.role) {
    case 'api': return startApiProcess(options);
    case 'engine': return startEngineProcess(options);
    case 'all': return startGateway(options);
  }
}

export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  // One process owns the SQLite data folder: its calls carry its node id, and recovery ends every
  // unfinished call, whatever node wrote it (docs/DECISIONS.md "Process roles: choosing the engine, and the internal endpoint").
  // A PostgreSQL store may be shared by several processes: recovery ends only this node's calls
  // (docs/DECISIONS.md "Recovery on a shared database").
  const base = await openProcessBase(options, { nodeId: options.config.node_id });
  const { config, logger, store } = base;
  const recoveryNodeId = config.storage.url === undefined ? undefined : config.node_id;
  let draining = false;
  let engine: CallEngine;
  try {
    engine = await startCallEngine({ ...base, isDraining: () => draining, ...(recoveryNodeId === undefined ? {} : { recoveryNodeId }) });
  } catch (err) {
    await store.close();
    throw err;
  }
  const api = controlApiServer({
    ...base, calls: engine.service, locateSip: engine.locateSip, ...(engine.sipTraces ? { sipTraces: engine.sipTraces } : {}), eventBus: engine.events.bus, notReadyReason: () => (draining ? 'draining' : null),
  });
  let httpPort: number;
  try {
    httpPort = await api.listen();
  } catch (err) {
    // The HTTP port is taken (or not ours to bind): undo the engine so nothing is left listening.
    await engine.stop();
    await store.close();
    throw err;
  }
  // Only now that every listener is bound: a failed first start leaves no tenant whose key was never shown.
  await bootstrapSandboxTenant(store, logger, base.announce);
  logger.info({ host: config.http.host, port: httpPort, data_dir: config.data_dir, carriers: base.carriers.map((c) => c.name) }, 'control API listening');

  let stopping: Promise<void> | undefined;
  const stop = (reason: string): Promise<void> => (stopping ??= (async () => {
    // docs/CLUSTER.md "Drain": out of the SIP edge's rotation first (with cluster.edge.rpc_url), then new calls are refused.
    await leaveEdge(config, engine.sip, logger);
    draining = true;
    logger.info({ reason, drain_seconds: config.shutdown.drain_seconds }, 'draining');
    // The listener stays open: /readyz answers 503 and new calls are refused (unavailable) while
    // live calls and requests in flight go on, until none is left or the drain time is over.
    const outcome = await waitForDrain({ liveCalls: () => engine.service.registry.size, requestsInFlight: api.requestsInFlight }, config.shutdown.drain_seconds * 1000);
    if (outcome === 'timeout') logger.warn({ live_calls: engine.service.registry.size }, 'drain time over; ending what is left');
    await api.close();
    // Calls still up are hung up (gateway_shutdown) so their CDRs and recordings are complete.
    await engine.stop();
    await store.close();
    logger.info('stopped');
  })());

  return { httpPort, sip: { ...engine.sip, sandboxUri: engine.sandboxUri }, store, secrets: base.secrets, carriers: base.carriers, stop };
}
