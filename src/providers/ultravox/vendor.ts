/** @module Ultravox, as the registry sees it (docs/PROVIDERS.md). */
import { callIdHeader, defineVendor } from '../vendor.js';
import { createUltravoxAdapter } from './ultravox-adapter.js';
import { openUltravoxAgentSession } from './ultravox-agent-session.js';

export const ultravox = defineVendor({
  name: 'ultravox',
  displayName: 'Ultravox',
  createAdapter: createUltravoxAdapter,
  streaming: openUltravoxAgentSession,
  sipEdge: { callHeaders: callIdHeader },
  postCallWebhook: null,
});
