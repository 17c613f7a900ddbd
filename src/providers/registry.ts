/** @module The providers this gateway supports, built once from the config's `providers.<name>`. */
import { systemClock, type Clock } from '../common/clock.js';
import { createCustomAdapter } from './custom/custom-adapter.js';
import { createElevenLabsAdapter } from './elevenlabs/elevenlabs-adapter.js';
import type { AdapterOptions } from './http-adapter.js';
import { DEFAULT_RETRY_BACKOFF_MS, DEFAULT_TIMEOUT_MS, type HttpOptions } from './http-verify.js';
import { createOpenAiAdapter } from './openai/openai-adapter.js';
import {
  PROVIDER_NAMES,
  isProviderName,
  type EndpointOverrides,
  type ProviderAdapter,
  type ProviderName,
} from './provider-adapter.js';
import { createRetellAdapter } from './retell/retell-adapter.js';
import { createUltravoxAdapter } from './ultravox/ultravox-adapter.js';
import { createVapiAdapter } from './vapi/vapi-adapter.js';

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

/** Looks adapters up by the provider name a tenant sent. */
export interface ProviderRegistry {
  /** The adapter of `name`, or undefined for an unsupported provider (any string is safe). */
  get(name: string): ProviderAdapter | undefined;
  /** Supported provider names, in a stable order. */
  names(): ProviderName[];
}

const FACTORIES: Record<ProviderName, (options: AdapterOptions) => ProviderAdapter> = {
  elevenlabs: createElevenLabsAdapter,
  retell: createRetellAdapter,
  vapi: createVapiAdapter,
  custom: (options) => createCustomAdapter(options.overrides),
  ultravox: createUltravoxAdapter,
  openai: createOpenAiAdapter,
};

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
  for (const name of PROVIDER_NAMES) {
    const own = overrides[name];
    if (own) checkOverrides(name, own);
    adapters.set(name, FACTORIES[name](own ? { overrides: own, http } : { http }));
  }
  return Object.freeze({
    get: (name: string) => adapters.get(name),
    names: () => [...PROVIDER_NAMES],
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
