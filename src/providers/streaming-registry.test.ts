import t from 'tap';
import { systemClock } from '../common/clock.js';
import { createStreamingRegistry } from './streaming-registry.js';

t.test('streaming registry: the providers with a streaming protocol, and nothing for the others', (t) => {
  const registry = createStreamingRegistry();
  t.same(registry.names(), ['custom', 'elevenlabs', 'openai', 'ultravox', 'vapi']);
  t.equal(registry.get('retell'), undefined, 'Retell is SIP only');
  t.equal(registry.get('toString'), undefined, 'prototype names are not providers');
  t.equal(registry.get('nope'), undefined);
  t.end();
});

t.test('streaming registry: each factory builds a session that declares its formats before start', (t) => {
  const registry = createStreamingRegistry();
  for (const name of registry.names()) {
    const session = registry.get(name)!({
      call: { callId: 'call_1', callControlId: 'v3:1', from: '+15550001111', to: '+15550002222', direction: 'inbound' },
      endpoint: { url: 'ws://127.0.0.1:9/agent', externalAgentId: 'a' },
      clock: systemClock,
      connectTimeoutMs: 1000,
      handlers: {},
    });
    t.ok(session.inputFormat.sampleRate > 0 && session.outputFormat.sampleRate > 0, name);
    session.close('unused');
  }
  t.end();
});
