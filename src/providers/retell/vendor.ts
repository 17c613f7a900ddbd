/** @module Retell AI, as the registry sees it (docs/PROVIDERS.md): SIP only, with a per-call registration. */
import { callIdHeader, defineVendor, type CallRegistrationInput } from '../vendor.js';
import { parseRetellWebhook } from './post-call-webhook.js';
import { registerRetellCall } from './register-call.js';
import { createRetellAdapter } from './retell-adapter.js';
import { verifyRetellSignature } from './webhook-signature.js';

/** Without a `sip_uri`, every Retell call is registered first with the tenant's stored key. */
async function registerCall(input: CallRegistrationInput): Promise<{ uri: string } | { error: string }> {
  const { endpoints, apiKey } = input;
  if (!apiKey || !endpoints.apiBaseUrl || !endpoints.sipHost) return { error: 'retell needs the stored api_key to register the call' };
  const registered = await registerRetellCall({
    apiBaseUrl: endpoints.apiBaseUrl, sipHost: endpoints.sipHost, apiKey, agentId: input.externalAgentId,
    from: input.call.from, to: input.call.to, direction: input.call.direction, transport: input.transport, timeoutMs: input.timeoutMs,
  });
  return 'error' in registered ? registered : { uri: registered.uri };
}

export const retell = defineVendor({
  name: 'retell',
  displayName: 'Retell',
  createAdapter: createRetellAdapter,
  // Retell has no audio WebSocket any more (SIP only).
  streaming: null,
  sipEdge: { callHeaders: callIdHeader, registerCall },
  postCallWebhook: {
    parse: parseRetellWebhook,
    verifySignature: (rawBody, header, secret, nowMs) => verifyRetellSignature(rawBody, header('x-retell-signature'), secret, nowMs),
  },
});
