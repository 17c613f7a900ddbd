/** @module Vapi, as the registry sees it (docs/PROVIDERS.md). */
import { callIdHeader, defineVendor } from '../vendor.js';
import { parseVapiWebhook } from './post-call-webhook.js';
import { createVapiAdapter } from './vapi-adapter.js';
import { openVapiAgentSession } from './vapi-agent-session.js';
import { verifyVapiSignature } from './webhook-signature.js';

export const vapi = defineVendor({
  name: 'vapi',
  displayName: 'Vapi',
  createAdapter: createVapiAdapter,
  streaming: openVapiAgentSession,
  sipEdge: { callHeaders: callIdHeader },
  postCallWebhook: {
    parse: parseVapiWebhook,
    // Vapi's default HMAC plan: the configured secret, the timestamp in its own header.
    verifySignature: (rawBody, header, secret, nowMs) => verifyVapiSignature(rawBody, header('x-signature'), header('x-timestamp'), { secret }, nowMs),
  },
});
