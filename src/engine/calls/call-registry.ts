/**
 * @module The live calls of this node, shared by the engine and the API: found by id or control
 * id within a tenant only, counted per tenant and per carrier for the concurrency limits.
 */
import type { TenantId } from '../../common/ids.js';
import type { Call } from './call.js';
import type { CallCommandFailure } from './call-control.js';
import type { CallSessionSnapshot } from './session-snapshot.js';

/** A call in progress with the commands the API may give it. */
export interface LiveCall {
  readonly call: Call;
  /** Mutes both legs, pauses recording; null when done (or already held). */
  hold(): CallCommandFailure | null;
  unhold(): CallCommandFailure | null;
  /** Queues digits toward the remote party; null once queued. */
  sendDigits(digits: string): CallCommandFailure | null;
  /** CANCEL or BYE as the state requires; resolves once the call has ended. */
  hangup(): Promise<void>;
  /** The same for a gateway shutdown (`gateway_shutdown`). */
  shutdown(): Promise<void>;
  /** Starts a blind transfer of the remote party; null once started. */
  transfer(to: string): CallCommandFailure | null;
  /** Live media state for GET /v1/calls/{id}. */
  session(): CallSessionSnapshot;
}

export class CallRegistry {
  readonly #byId = new Map<string, LiveCall>();
  readonly #byControlId = new Map<string, LiveCall>();
  readonly #perTenant = new Map<string, number>();
  readonly #perCarrier = new Map<string, number>();

  /** Holds the call until it ends; counts it from now on. */
  add(live: LiveCall): void {
    const record = live.call.snapshot();
    this.#byId.set(record.id, live);
    this.#byControlId.set(record.call_control_id, live);
    bump(this.#perTenant, record.tenant_id, 1);
    bump(this.#perCarrier, record.carrier, 1);
    live.call.onEnd(() => {
      this.#byId.delete(record.id);
      this.#byControlId.delete(record.call_control_id);
      bump(this.#perTenant, record.tenant_id, -1);
      bump(this.#perCarrier, record.carrier, -1);
    });
  }

  /** The tenant's live call with that id; another tenant's is invisible. */
  get(tenantId: TenantId, callId: string): LiveCall | undefined {
    const live = this.#byId.get(callId);
    return live?.call.tenantId === tenantId ? live : undefined;
  }

  byControlId(tenantId: TenantId, callControlId: string): LiveCall | undefined {
    const live = this.#byControlId.get(callControlId);
    return live?.call.tenantId === tenantId ? live : undefined;
  }

  countForTenant(tenantId: string): number {
    return this.#perTenant.get(tenantId) ?? 0;
  }

  countOnCarrier(carrier: string): number {
    return this.#perCarrier.get(carrier) ?? 0;
  }

  get size(): number {
    return this.#byId.size;
  }

  all(): LiveCall[] {
    return [...this.#byId.values()];
  }
}

function bump(map: Map<string, number>, key: string, by: number): void {
  const n = (map.get(key) ?? 0) + by;
  if (n > 0) map.set(key, n);
  else map.delete(key);
}
