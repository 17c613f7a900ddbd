/** @module What each fake platform answers: its get-agent path, auth header and bodies. */

export type FakeProviderKind = 'elevenlabs' | 'retell' | 'vapi' | 'ultravox' | 'openai';

/** How one platform's get-agent endpoint looks on the wire. */
export interface PlatformAnswers {
  /** Matches the get-agent path; group 1 is the (still encoded) agent id. */
  path: RegExp;
  /** The key the request carries, or undefined when the header is absent or malformed. */
  keyOf(headers: Record<string, string | string[] | undefined>): string | undefined;
  found(agentId: string, name: string | undefined): unknown;
  notFound(agentId: string): unknown;
  badKey: unknown;
}

const bearer = (headers: Record<string, string | string[] | undefined>): string | undefined => {
  const value = headers.authorization;
  return typeof value === 'string' && value.startsWith('Bearer ') ? value.slice('Bearer '.length) : undefined;
};
const header = (name: string) => (headers: Record<string, string | string[] | undefined>): string | undefined => {
  const value = headers[name];
  return typeof value === 'string' ? value : undefined;
};

/**
 * Bodies follow the vendors' documentation where it gives them (ElevenLabs 404/401 as observed
 * in the wild; OpenAI's error object); where a vendor leaves the error body undocumented (Retell,
 * Vapi, Ultravox) the fake sends a plausible one, and the adapters rely on the status alone.
 */
export const PLATFORM_ANSWERS: Record<FakeProviderKind, PlatformAnswers> = {
  elevenlabs: {
    path: /^\/v1\/convai\/agents\/([^/?]+)$/,
    keyOf: header('xi-api-key'),
    found: (id, name) => ({
      agent_id: id, name: name ?? 'Agent', tags: [],
      conversation_config: { asr: { user_input_audio_format: 'pcm_16000' }, tts: { agent_output_audio_format: 'pcm_16000' } },
      metadata: { created_at_unix_secs: 1767225600 }, platform_settings: {}, phone_numbers: [],
    }),
    notFound: () => ({ detail: { status: 'agent_not_found', message: 'Agent not found' } }),
    badKey: { detail: { status: 'invalid_api_key', message: 'Invalid API key' } },
  },
  retell: {
    path: /^\/get-agent\/([^/?]+)$/,
    keyOf: bearer,
    found: (id, name) => ({
      agent_id: id, version: 0, agent_name: name ?? null, voice_id: '11labs-Adrian',
      response_engine: { type: 'retell-llm', llm_id: 'llm_fake' }, last_modification_timestamp: 1767225600000,
    }),
    notFound: () => ({ status: 'error', message: 'Not Found' }),
    badKey: { status: 'error', message: 'Unauthorized' },
  },
  vapi: {
    path: /^\/assistant\/([^/?]+)$/,
    keyOf: bearer,
    found: (id, name) => ({ id, orgId: '00000000-0000-4000-8000-000000000000', name, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z' }),
    notFound: () => ({ message: "Couldn't Get Assistant. `assistant` Not Found.", error: 'Not Found', statusCode: 404 }),
    badKey: { message: 'Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa.', error: 'Unauthorized', statusCode: 401 },
  },
  ultravox: {
    path: /^\/api\/agents\/([^/?]+)$/,
    keyOf: header('x-api-key'),
    found: (id, name) => ({ agentId: id, name: name ?? 'agent', created: '2026-01-01T00:00:00Z', callTemplate: {} }),
    notFound: () => ({ detail: 'Not found.' }),
    badKey: { detail: 'Invalid API key.' },
  },
  openai: {
    path: /^\/v1\/models\/([^/?]+)$/,
    keyOf: bearer,
    found: (id) => ({ id, object: 'model', created: 1767225600, owned_by: 'system' }),
    notFound: (id) => ({ error: { message: `The model '${id}' does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } }),
    badKey: { error: { message: 'Incorrect API key provided.', type: 'invalid_request_error', param: null, code: 'invalid_api_key' } },
  },
};
