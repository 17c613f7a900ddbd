/** @module Provider name → AgentSession factory, for the providers that have a streaming protocol. */
import type { AgentSessionFactory } from './agent-session.js';
import { openCustomAgentSession } from './custom/custom-agent-session.js';
import { openElevenLabsAgentSession } from './elevenlabs/elevenlabs-agent-session.js';
import { openOpenAiRealtimeSession } from './openai/openai-realtime-session.js';
import type { ProviderName } from './provider-adapter.js';
import { openUltravoxAgentSession } from './ultravox/ultravox-agent-session.js';
import { openVapiAgentSession } from './vapi/vapi-agent-session.js';

/** Streaming adapters by provider. Retell has no audio WebSocket any more (SIP only). */
const FACTORIES: Partial<Record<ProviderName, AgentSessionFactory>> = Object.freeze({
  custom: openCustomAgentSession,
  elevenlabs: openElevenLabsAgentSession,
  openai: openOpenAiRealtimeSession,
  ultravox: openUltravoxAgentSession,
  vapi: openVapiAgentSession,
});

/** Looks up the session factory of a provider. */
export interface StreamingRegistry {
  /** The factory of `name`, or undefined when the provider has no streaming adapter (any string is safe). */
  get(name: string): AgentSessionFactory | undefined;
  /** Providers with a streaming adapter, in a stable order. */
  names(): ProviderName[];
}

export function createStreamingRegistry(): StreamingRegistry {
  const names = Object.keys(FACTORIES).sort() as ProviderName[];
  return Object.freeze({
    get: (name: string) => (Object.hasOwn(FACTORIES, name) ? FACTORIES[name as ProviderName] : undefined),
    names: () => [...names],
  });
}
