/**
 * @module The cluster's live state as the process roles use it (docs/CLUSTER.md "Live state in
 * Redis"): opened when `cluster.redis_url` is set, an engine's admission port over it, and the
 * count of operations that found it away.
 */
import { Counter, type Registry } from 'prom-client';
import { ClusterStateUnavailable, type LiveState } from '../cluster/live-state.js';
import { RedisLiveState } from '../cluster/redis-live-state.js';
import type { Logger } from '../common/logger.js';
import type { Config } from '../config/schema.js';
import type { CallRecord } from '../engine/calls/index.js';
import type { ClusterAdmission } from '../engine/calls/ports.js';
import type { LiveListSource } from '../storage/call-repository.js';
import type { CallListItem } from '../storage/index.js';

/** Opens the live state named by `cluster.redis_url`; undefined without one (the nodes table is used). */
export async function openClusterState(config: Readonly<Config>, logger: Logger): Promise<RedisLiveState | undefined> {
  const url = config.cluster.redis_url;
  if (url === undefined) return undefined;
  return RedisLiveState.open({ url, logger: logger.child({ component: 'cluster-state' }) });
}

/** `vgw_cluster_state_unavailable_total{operation}`: operations that went on without the live state. */
export type UnavailableCounter = (operation: string) => void;

export function unavailableCounter(metrics: Registry): UnavailableCounter {
  const counter = new Counter({
    name: 'vgw_cluster_state_unavailable_total',
    help: 'Operations on the cluster live state (Redis) that found it unreachable, by operation; admissions then used this engine\'s limits alone.',
    labelNames: ['operation'], registers: [metrics],
  });
  return (operation) => counter.inc({ operation });
}

/**
 * An engine's admission over the live state. While Redis is away a call is admitted on the
 * engine's own limits alone (already checked), with a warning and the counter: refusing every
 * call for an outage of the shared state would turn it into an outage of the service
 * (docs/CLUSTER.md "Live state in Redis").
 */
export function clusterAdmission(live: LiveState, nodeId: string, logger: Logger, unavailable: UnavailableCounter): ClusterAdmission {
  const away = (operation: string, callId: string) => (err: unknown): void => {
    if (!(err instanceof ClusterStateUnavailable)) {
      logger.error({ err, call_id: callId, operation }, 'the cluster live state refused an operation');
      return;
    }
    unavailable(operation);
    logger.warn({ call_id: callId, operation }, 'cluster live state unavailable; the call\'s live entry may be stale');
  };
  const list = (call: CallRecord): string => JSON.stringify(call);
  return {
    async admit(call, limits) {
      try {
        return await live.admit({
          callId: call.id, tenantId: call.tenant_id, nodeId, callControlId: call.call_control_id, carrier: call.carrier, createdAt: call.created_at, list: list(call),
        }, limits);
      } catch (err) {
        if (!(err instanceof ClusterStateUnavailable)) throw err;
        unavailable('admit');
        logger.warn({ call_id: call.id, tenant_id: call.tenant_id }, 'cluster live state unavailable; admitting on this engine\'s limits alone');
        return { ok: true };
      }
    },
    update(call) {
      live.update(call.id, list(call)).catch(away('update', call.id));
    },
    release(callId) {
      live.release(callId).catch(away('release', callId));
    },
  };
}

/**
 * The live list of `GET /v1/calls` from Redis for an API process. While Redis is away the page
 * is read from the store's calls table instead (undefined here), which the engines write too.
 */
export function redisLiveList(live: LiveState, logger: Logger, unavailable: () => UnavailableCounter): LiveListSource {
  return {
    async page(tenantId, filter, page) {
      try {
        return await live.list<CallListItem>(tenantId, filter, page);
      } catch (err) {
        if (!(err instanceof ClusterStateUnavailable)) throw err;
        unavailable()('list');
        logger.warn({ tenant_id: tenantId }, 'cluster live state unavailable; the live call list is read from the store');
        return undefined;
      }
    },
  };
}
