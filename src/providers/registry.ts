/**
 * @module The one list of the vendors this gateway supports, and the registry built from it once
 * with the config's `providers.<name>`. Each vendor is a folder `providers/<vendor>/` whose
 * `vendor.ts` exports one {@link VendorDescriptor}; adding a vendor is that folder plus one line
 * in {@link VENDORS} (docs/PROVIDERS.md, "Adding a vendor").
 */
import { systemClock, type Clock } from '../common/clock.js';
import type { AgentSessionFactory } from './agent-session.js';
import { custom } from './custom/vendor.js';
import { elevenlabs } from './elevenlabs/vendor.js';
import { DEFAULT_RETRY_BACKOFF_MS, DEFAULT_TIMEOUT_MS, type HttpOptions } from './http-verify.js';
import { openai } from './openai/vendor.js';
import type { EndpointOverrides, ProviderAdapter } from './provider-adapter.js';
import { retell } from './retell/vendor.js';
import { ultravox } from './ultravox/vendor.js';
import type { PostCallWebhook, SipEdge, VendorDescriptor } from './vendor.js';
import { vapi } from './vapi/vendor.js';

/** Every supported vendor, in the order the API and the docs list them. */
export const VENDORS = Object.freeze([elevenlabs, retell, vapi, custom, ultravox, openai] as const);

/** Providers this gateway can import agents from. */
export type ProviderName = (typeof VENDORS)[number]['name'];
export const PROVIDER_NAMES: readonly ProviderName[] = Object.freeze(VENDORS.map((v) => v.name));

/**
 * The vendor whose session speaks the gateway's own agent WebSocket protocol (docs/API.md): the
 * session of every `agent_ws_url` call too, not only of its imported agents.
 */
export const OWN_PROTOCOL_VENDOR = custom;

const BY_NAME: ReadonlyMap<string, VendorDescriptor> = new Map(VENDORS.map((v) => [v.name, v]));

/** True when `value` names a provider this build knows (safe for tenant input). */
export function isProviderName(value: string): value is ProviderName {
  return BY_NAME.has(value);
}

/** The descriptor of `name`, or undefined for an unsupported provider (any string is safe). */
export function vendorOf(name: string): VendorDescriptor | undefined {
  return BY_NAME.get(name);
}

/** The vendors whose post-call webhooks are ingested, by name, in {@link VENDORS} order. */
export function postCallWebhooks(): ReadonlyMap<ProviderName, PostCallWebhook & { displayName: string }> {
  const hooks = new Map<ProviderName, PostCallWebhook & { displayName: string }>();
  for (const v of VENDORS) if (v.postCallWebhook) hooks.set(v.name, { ...v.postCallWebhook, displayName: v.displayName });
  return hooks;
}

/** The config file's `providers` object: per provider, endpoints that replace the public ones. */
export type ProviderOverrides = Partial<Record<ProviderName, EndpointOverrides>>;

/** HTTP settings of the verify calls. Only `timeoutMs` is required. */
export interface RegistryOptions {
  /** Time allowed for one verify attempt (default 5 s). */
  timeoutMs?: number;
  /** Wait before the one retry after a 5xx or network error (default 250 ms). */
  retryBackoffMs?: number;
  /** Node's global fetch unless given (tests pass a recording wrapper). */
  fetch?: typeof fetch;
  clock?: Clock;
}

/** Looks a vendor's parts up by the provider name a tenant sent (any string is safe). */
export interface ProviderRegistry {
  /** The adapter of `name`, or undefined for an unsupported provider. */
  get(name: string): ProviderAdapter | undefined;
  /** Supported provider names, in a stable order. */
  names(): ProviderName[];
  /** The SIP edge specifics of `name` (call headers, per-call registration), or undefined. */
  sipEdge(name: string): SipEdge | undefined;
  /** The media_bridge session factory of `name`, or undefined when it has none. */
  streaming(name: string): AgentSessionFactory | undefined;
}

/**
 * Builds every adapter once.
 * @throws Error naming the config key when an override is not a usable URL or host, or when a
 *   provider name is unknown: configuration mistakes stop the start, they are not tenant errors.
 */
export function createProviderRegistry(overrides: ProviderOverrides = {}, options: RegistryOptions = {}): ProviderRegistry {
  const http: HttpOptions = Object.freeze({
    timeoutMs: positive(options.timeoutMs ?? DEFAULT_TIMEOUT_MS, 'timeoutMs'),
    retryBackoffMs: positive(options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS, 'retryBackoffMs', true),
    fetch: options.fetch ?? globalThis.fetch,
    clock: options.clock ?? systemClock,
  });
  for (const name of Object.keys(overrides)) {
    if (!isProviderName(name)) throw new Error(`providers.${name}: unknown provider (known: ${PROVIDER_NAMES.join(', ')})`);
  }
  const adapters = new Map<string, ProviderAdapter>();
  for (const vendor of VENDORS) {
    const own = overrides[vendor.name];
    if (own) checkOverrides(vendor.name, own);
    adapters.set(vendor.name, vendor.createAdapter(own ? { overrides: own, http } : { http }));
  }
  return Object.freeze({
    get: (name: string) => adapters.get(name),
    names: () => [...PROVIDER_NAMES],
    sipEdge: (name: string) => vendorOf(name)?.sipEdge,
    streaming: (name: string) => vendorOf(name)?.streaming ?? undefined,
  });
}

function positive(value: number, key: string, zeroAllowed = false): number {
  if (!Number.isFinite(value) || value < 0 || (!zeroAllowed && value === 0)) {
    throw new Error(`provider ${key} must be a positive number of milliseconds`);
  }
  return value;
}

function checkOverrides(name: ProviderName, own: EndpointOverrides): void {
  checkUrl(`providers.${name}.api_base_url`, own.api_base_url, ['http:', 'https:']);
  checkUrl(`providers.${name}.ws_base_url`, own.ws_base_url, ['ws:', 'wss:']);
  if (own.sip_host !== undefined && !/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+)(:\d{1,5})?$/.test(own.sip_host)) {
    throw new Error(`providers.${name}.sip_host must be a host name or address, optionally with :port`);
  }
}

function checkUrl(key: string, value: string | undefined, schemes: string[]): void {
  if (value === undefined) return;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${key} is not a URL`);
  }
  if (!schemes.includes(url.protocol)) throw new Error(`${key} must use ${schemes.join(' or ')}`);
  if (url.username || url.password || url.search || url.hash) {
    throw new Error(`${key} must not carry credentials, a query or a fragment`);
  }
}
