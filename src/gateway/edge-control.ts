/**
 * @module The SIP edge's control as an engine uses it (docs/CLUSTER.md "Drain"): JSON-RPC 2.0
 * over HTTP to Kamailio's `jsonrpcs` (`cluster.edge.rpc_url`). A draining engine sets its own
 * dispatcher destination inactive there before it refuses new calls, so the edge stops choosing it
 * at once instead of after a refused INVITE. State `ip` (inactive, still probed): while this
 * process drains its OPTIONS answer 503 and keep it out; an engine started again on the same
 * address answers 200 and the edge takes it back by itself.
 */
import type { Logger } from '../common/logger.js';
import type { Config } from '../config/schema.js';

/** The engines' set in the edge's dispatcher list (sbc-config/kamailio/dispatcher.list.example). */
export const ENGINE_SET = 1;
/** How long a drain waits for the edge: it goes on without it (the probes take the engine out). */
const RPC_TIMEOUT_MS = 2000;

/** This engine's destination as the edge's list names it: `cluster.edge.destination`, else `sip:<host>:<port>` where SIP listens. */
export function edgeDestination(config: Readonly<Config>, listening: { host: string; udpPort: number }): string {
  const host = listening.host.includes(':') ? `[${listening.host}]` : listening.host;
  return config.cluster.edge.destination ?? `sip:${host}:${listening.udpPort}`;
}

/** One JSON-RPC 2.0 call; the result, or an Error naming what went wrong (never thrown). */
export async function edgeRpc(rpcUrl: string, method: string, params: readonly unknown[]): Promise<unknown> {
  try {
    const res = await fetch(rpcUrl, {
      method: 'POST', headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', method, params, id: 1 }), signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
    });
    const text = await res.text();
    if (!res.ok) return new Error(`HTTP ${res.status}: ${text.slice(0, 200)}`);
    const body = JSON.parse(text) as { result?: unknown; error?: { code?: number; message?: string } };
    if (body.error) return new Error(`JSON-RPC error ${body.error.code ?? ''}: ${body.error.message ?? ''}`);
    return body.result;
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
}

/**
 * Takes this engine out of the edge's rotation (`dispatcher.set_state ip`); nothing without
 * `cluster.edge.rpc_url`. Failures are logged, never thrown: the drain goes on, and the edge's
 * OPTIONS probes (503 while draining) take the engine out a few seconds later.
 */
export async function leaveEdge(config: Readonly<Config>, listening: { host: string; udpPort: number }, logger: Logger): Promise<boolean> {
  const rpcUrl = config.cluster.edge.rpc_url;
  if (rpcUrl === undefined) return false;
  const destination = edgeDestination(config, listening);
  const result = await edgeRpc(rpcUrl, 'dispatcher.set_state', ['ip', ENGINE_SET, destination]);
  if (result instanceof Error) {
    logger.warn({ err: result, destination }, 'the SIP edge could not be told this engine drains; its probes will take it out');
    return false;
  }
  logger.info({ destination }, 'inactive at the SIP edge');
  return true;
}
