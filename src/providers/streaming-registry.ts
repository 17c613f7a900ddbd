/** @module Provider name → AgentSession factory, for the vendors that have a streaming protocol (from the registry's {@link VENDORS}). */
import type { AgentSessionFactory } from './agent-session.js';
import { VENDORS, vendorOf, type ProviderName } from './registry.js';

/** Looks up the session factory of a provider. */
export interface StreamingRegistry {
  /** The factory of `name`, or undefined when the provider has no streaming adapter (any string is safe). */
  get(name: string): AgentSessionFactory | undefined;
  /** Providers with a streaming adapter, in a stable order. */
  names(): ProviderName[];
}

export function createStreamingRegistry(): StreamingRegistry {
  const names = VENDORS.filter((v) => v.streaming !== null).map((v) => v.name).sort();
  return Object.freeze({
    get: (name: string) => vendorOf(name)?.streaming ?? undefined,
    names: () => [...names],
  });
}
