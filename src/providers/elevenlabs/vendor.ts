/** @module ElevenLabs Agents Platform, as the registry sees it (docs/PROVIDERS.md). */
import { defineVendor } from '../vendor.js';
import { createElevenLabsAdapter } from './elevenlabs-adapter.js';
import { openElevenLabsAgentSession } from './elevenlabs-agent-session.js';
import { parseElevenLabsWebhook } from './post-call-webhook.js';
import { verifyElevenLabsSignature } from './webhook-signature.js';

export const elevenlabs = defineVendor({
  name: 'elevenlabs',
  displayName: 'ElevenLabs',
  createAdapter: createElevenLabsAdapter,
  streaming: openElevenLabsAgentSession,
  sipEdge: {
    // ElevenLabs honours X-CALL-ID and X-CALLER-ID on inbound INVITEs.
    callHeaders: (call) => [['X-CALL-ID', call.callId], ['X-CALLER-ID', call.from]],
  },
  postCallWebhook: {
    parse: parseElevenLabsWebhook,
    verifySignature: (rawBody, header, secret, nowMs) => verifyElevenLabsSignature(rawBody, header('elevenlabs-signature'), secret, nowMs),
  },
});
