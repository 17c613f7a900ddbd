/**
 * @module How CallService uses the cluster's admission (docs/CLUSTER.md "Live state in Redis"):
 * every save of a call's record also updates its live entry, and its end releases its place.
 */
import type { Call, CallContext } from './call.js';
import type { CallCommandFailure } from './call-control.js';
import type { CarrierProfile } from './setup/carrier-profile.js';
import type { ClusterAdmission } from './ports.js';

/** The calls' context with each saved record forwarded to the cluster's live entry. */
export function withClusterUpdates(ctx: CallContext, cluster: ClusterAdmission | undefined): CallContext {
  if (!cluster) return ctx;
  const store = ctx.store;
  return {
    ...ctx,
    store: {
      insert: (call) => store.insert(call),
      save: (call) => {
        store.save(call);
        cluster.update(call);
      },
      note: (call, happening) => store.note(call, happening),
      finish: (outcome) => store.finish(outcome),
      get: (tenantId, id) => store.get(tenantId, id),
      getByControlId: (tenantId, id) => store.getByControlId(tenantId, id),
      unfinished: (nodeId) => store.unfinished(nodeId),
    },
  };
}

/**
 * Asks the cluster for room for `call` (not yet stored); a refusal is the same concurrency
 * failure as the engine's own limits. Once admitted, the call's end releases its place.
 */
export async function admitInCluster(
  cluster: ClusterAdmission | undefined, call: Call, carrier: CarrierProfile, tenantLimit: number, retryAfterSeconds: number,
): Promise<CallCommandFailure | null> {
  if (!cluster) return null;
  const outcome = await cluster.admit(call.snapshot(), { tenantLimit, carrierLimit: carrier.maxConcurrentCalls });
  if (!outcome.ok) return { error: 'concurrency_limit', retryAfterSeconds };
  call.onEnd(() => cluster.release(call.id));
  return null;
}
