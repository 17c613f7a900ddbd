/**
 * @module The operator's commands over the store (docs/CONFIGURATION.md "Operator surface"). Each returns the JSON it
 * prints, or throws a CliError; vgw.ts only parses arguments and prints.
 */
import type { TenantId } from '../common/ids.js';
import { isE164 } from '../common/phone-number.js';
import type { Store } from '../storage/index.js';

/** A failed command: `code` is stable for scripts, `exitCode` 1 for failures and 2 for usage. */
export class CliError extends Error {
  override readonly name = 'CliError';
  readonly code: string;
  readonly exitCode: number;

  constructor(code: string, message: string, exitCode = 1) {
    super(message);
    this.code = code;
    this.exitCode = exitCode;
  }
}

async function requireTenant(store: Store, tenantId: string): Promise<TenantId> {
  const tenant = await store.tenants.get(tenantId as TenantId);
  if (!tenant) throw new CliError('tenant_not_found', `no tenant ${tenantId}`);
  return tenant.id;
}

export async function createTenant(store: Store, name: string, sandbox: boolean): Promise<unknown> {
  if (!name.trim() || name.length > 200) throw new CliError('invalid_name', 'the tenant name must be 1 to 200 characters', 2);
  const tenant = await store.tenants.create(name.trim());
  const { apiKey } = await store.apiKeys.create(tenant.id, sandbox ? 'sandbox' : 'live');
  return { tenant: { id: tenant.id, name: tenant.name }, api_key: apiKey };
}

export async function listTenants(store: Store): Promise<unknown> {
  return { tenants: await store.tenants.list() };
}

export async function createKey(store: Store, tenantId: string, sandbox: boolean): Promise<unknown> {
  const { apiKey } = await store.apiKeys.create(await requireTenant(store, tenantId), sandbox ? 'sandbox' : 'live');
  return { api_key: apiKey };
}

export async function revokeKey(store: Store, apiKey: string): Promise<unknown> {
  if (!(await store.apiKeys.revoke(apiKey))) throw new CliError('key_not_found', 'no active key matches');
  return { revoked: true };
}

/** `knownCarriers`: the sandbox plus the carriers file's names; a number on another carrier could never ring. */
export async function addNumber(store: Store, tenantId: string, phoneNumber: string, carrier: string | undefined, knownCarriers: readonly string[]): Promise<unknown> {
  if (!isE164(phoneNumber)) throw new CliError('invalid_number', `${phoneNumber} is not E.164 (+ then 2 to 15 digits)`, 2);
  if (!carrier) throw new CliError('usage', '--carrier NAME is required', 2);
  if (!knownCarriers.includes(carrier)) throw new CliError('unknown_carrier', `no carrier "${carrier}"; known: ${knownCarriers.join(', ')}`);
  const outcome = await store.numbers.add(await requireTenant(store, tenantId), phoneNumber, carrier);
  if (!outcome.ok) {
    throw new CliError(outcome.reason, outcome.reason === 'already_held' ? 'the tenant already holds this number' : 'another tenant holds this number on that carrier');
  }
  const n = outcome.number;
  return { id: n.id, tenant_id: n.tenant_id, phone_number: n.phone_number, carrier: n.carrier, status: n.status, created_at: n.created_at };
}

export async function listNumbers(store: Store, tenantId: string | undefined): Promise<unknown> {
  const owner = tenantId === undefined ? null : await requireTenant(store, tenantId);
  const numbers = [];
  let after;
  do {
    const page = await store.numbers.list(owner, { limit: 500, after });
    numbers.push(...page.items);
    after = page.next ?? undefined;
  } while (after);
  return { numbers };
}

/** Verifies a calling number for the tenant (docs/API.md "Caller IDs"); a number verified twice is an error. */
export async function addCallerId(store: Store, tenantId: string, phoneNumber: string): Promise<unknown> {
  if (!isE164(phoneNumber)) throw new CliError('invalid_number', `${phoneNumber} is not E.164 (+ then 2 to 15 digits)`, 2);
  const outcome = await store.callerIds.add(await requireTenant(store, tenantId), phoneNumber);
  if (!outcome.ok) throw new CliError(outcome.reason, 'this caller ID is already verified for the tenant');
  const c = outcome.callerId;
  return { id: c.id, tenant_id: c.tenant_id, phone_number: c.phone_number, created_at: c.created_at };
}
