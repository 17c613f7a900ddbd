/** @module Branded, prefixed opaque identifiers (docs/API.md "Requests and responses"). */
import { randomFillSync } from 'node:crypto';

declare const brand: unique symbol;
/** A string that the type system keeps apart from other strings. */
export type Brand<T, B extends string> = T & { readonly [brand]: B };

export type TenantId = Brand<string, 'TenantId'>;
export type ApiKeyId = Brand<string, 'ApiKeyId'>;
export type CallId = Brand<string, 'CallId'>;
export type AgentId = Brand<string, 'AgentId'>;
export type RouteId = Brand<string, 'RouteId'>;
export type NumberId = Brand<string, 'NumberId'>;
export type SipCredentialId = Brand<string, 'SipCredentialId'>;
export type CallerIdId = Brand<string, 'CallerIdId'>;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * CSPRNG bytes drawn ahead, a few KiB at a time: an id takes about 16, and a call of
 * `randomBytes` per id cost more than the rest of making one (node:crypto's randomUUID caches
 * ahead the same way).
 */
const pool = Buffer.alloc(4096);
let poolOffset = pool.length;

function randomByte(): number {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  return pool[poolOffset++]!;
}

/** `n` characters of base62 drawn from the CSPRNG without modulo bias. */
export function randomBase62(n: number): string {
  let out = '';
  while (out.length < n) {
    const byte = randomByte();
    // 248 = 4 * 62: bytes at or above it would bias the first characters.
    if (byte < 248) out += ALPHABET[byte % 62];
  }
  return out;
}

/**
 * A new id: prefix, then a time part in base36 so ids sort roughly by creation, then randomness.
 * Ordering by id is only a tie-breaker; lists order by created_at first.
 */
function newId(prefix: string): string {
  return `${prefix}_${Date.now().toString(36).padStart(9, '0')}${randomBase62(14)}`;
}

export const newTenantId = (): TenantId => newId('ten') as TenantId;
export const newApiKeyId = (): ApiKeyId => newId('key') as ApiKeyId;
export const newCallId = (): CallId => newId('call') as CallId;
export const newAgentId = (): AgentId => newId('agt') as AgentId;
export const newRouteId = (): RouteId => newId('rte') as RouteId;
export const newNumberId = (): NumberId => newId('num') as NumberId;
export const newSipCredentialId = (): SipCredentialId => newId('sipc') as SipCredentialId;
export const newCallerIdId = (): CallerIdId => newId('cid') as CallerIdId;
/** docs/EVENTS.md: events (`evt_…`), webhook endpoints (`whe_…`) and delivery attempts (`dla_…`). */
export const newEventId = (): string => newId('evt');
export const newWebhookEndpointId = (): string => newId('whe');
export const newDeliveryAttemptId = (): string => newId('dla');
/** The transfer/control token of a call: deliberately unrelated to its id. */
export const newCallControlId = (): string => `v1:${randomBase62(32)}`;
