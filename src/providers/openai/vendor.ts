/** @module OpenAI Realtime, as the registry sees it (docs/PROVIDERS.md). */
import { callIdHeader, defineVendor } from '../vendor.js';
import { createOpenAiAdapter } from './openai-adapter.js';
import { openOpenAiRealtimeSession } from './openai-realtime-session.js';

export const openai = defineVendor({
  name: 'openai',
  displayName: 'OpenAI',
  createAdapter: createOpenAiAdapter,
  streaming: openOpenAiRealtimeSession,
  sipEdge: { callHeaders: callIdHeader },
  postCallWebhook: null,
});
