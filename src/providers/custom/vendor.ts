/**
 * @module Provider `custom`, as the registry sees it (docs/PROVIDERS.md): any SIP edge or any agent
 * on the gateway's own WebSocket protocol; also the session of every `agent_ws_url` call.
 */
import { callIdHeader, defineVendor } from '../vendor.js';
import { createCustomAdapter } from './custom-adapter.js';
import { openCustomAgentSession } from './custom-agent-session.js';

export const custom = defineVendor({
  name: 'custom',
  displayName: 'custom',
  createAdapter: (options) => createCustomAdapter(options.overrides),
  streaming: openCustomAgentSession,
  sipEdge: { callHeaders: callIdHeader },
  postCallWebhook: null,
});
