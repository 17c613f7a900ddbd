/**
 * @module docs/PROVIDERS.md "Adding a vendor": every vendor is one folder `providers/<vendor>/`
 * whose `vendor.ts` exports one complete descriptor, and the registry's `VENDORS` line lists
 * exactly those folders.
 */
import t from 'tap';
import { existsSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { systemClock } from '../common/clock.js';
import { CONNECTION_MODES, SIP_TRANSPORTS } from './provider-adapter.js';
import { createProviderRegistry, OWN_PROTOCOL_VENDOR, postCallWebhooks, VENDORS, vendorOf } from './registry.js';
import { createStreamingRegistry } from './streaming-registry.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const CALL = { callId: 'call_1', callControlId: 'v3:1', from: '+15550001111', to: '+15550002222', direction: 'inbound' as const };

t.test('adding a vendor: each folder with a vendor.ts is one line of VENDORS, named after its folder', async (t) => {
  const folders = readdirSync(HERE, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(`${HERE}${entry.name}/vendor.ts`))
    .map((entry) => entry.name)
    .sort();
  t.same(VENDORS.map((v) => v.name).sort(), folders, 'no folder without a registry line, no line without a folder');
  for (const vendor of VENDORS) {
    const exported = (await import(`./${vendor.name}/vendor.js`)) as Record<string, unknown>;
    t.same(Object.values(exported), [vendor], `${vendor.name}/vendor.ts exports its descriptor and nothing else`);
  }
  t.equal(new Set(VENDORS.map((v) => v.name)).size, VENDORS.length, 'names are unique');
});

t.test('adding a vendor: every descriptor is complete and agrees with its own adapter', (t) => {
  const registry = createProviderRegistry();
  for (const vendor of VENDORS) {
    t.test(vendor.name, (t) => {
      t.match(vendor.name, /^[a-z][a-z0-9]{1,39}$/, 'a name fit for a config key and a URL path segment');
      t.ok(vendor.displayName.trim().length > 0, 'a display name');
      t.ok(Object.isFrozen(vendor) && Object.isFrozen(vendor.sipEdge), 'frozen');
      const adapter = registry.get(vendor.name)!;
      t.equal(adapter.name, vendor.name, 'the adapter carries the descriptor\'s name');
      t.ok(adapter.connectionModes.length > 0 && adapter.connectionModes.every((m) => (CONNECTION_MODES as readonly string[]).includes(m)));
      t.ok((SIP_TRANSPORTS as readonly string[]).includes(adapter.defaultSipTransport), 'a default SIP transport');
      t.ok(adapter.regions.includes(adapter.defaultRegion), 'a default region among its regions');
      // A media_bridge vendor needs a session; a vendor with a session must offer media_bridge to reach it.
      t.equal(vendor.streaming !== null, adapter.connectionModes.includes('media_bridge'), 'a session exactly when media_bridge is offered');
      const headers = vendor.sipEdge.callHeaders(CALL);
      t.ok(headers.length > 0 && headers.some(([, value]) => value === CALL.callId), 'SIP headers carry the gateway\'s call id');
      t.ok(headers.every(([name]) => /^[A-Za-z0-9-]+$/.test(name)), 'header names are RFC 3261 tokens');
      t.ok(vendor.sipEdge.registerCall === undefined || typeof vendor.sipEdge.registerCall === 'function', 'a registration, when there is one, is a function');
      if (vendor.postCallWebhook) {
        t.match(vendor.postCallWebhook.parse(null), { kind: 'invalid' }, 'a parser refuses a body that is not an object');
        t.equal(vendor.postCallWebhook.verifySignature('{}', () => undefined, 'secret', Date.now()), 'missing', 'no header is a missing signature');
      }
      t.end();
    });
  }
  t.end();
});

t.test('the registry is the one list: the adapters, sessions and webhooks are its descriptors\'', (t) => {
  const registry = createProviderRegistry();
  t.same(registry.names(), VENDORS.map((v) => v.name));
  t.same(createStreamingRegistry().names(), VENDORS.filter((v) => v.streaming).map((v) => v.name).sort());
  for (const vendor of VENDORS) {
    t.equal(vendorOf(vendor.name), vendor);
    t.equal(registry.streaming(vendor.name), vendor.streaming ?? undefined, `${vendor.name} session`);
    t.equal(registry.sipEdge(vendor.name), vendor.sipEdge, `${vendor.name} SIP edge`);
  }
  t.same([...postCallWebhooks().keys()], VENDORS.filter((v) => v.postCallWebhook).map((v) => v.name));
  for (const name of ['twilio', '__proto__', 'constructor', '']) {
    t.equal(vendorOf(name), undefined, `unsupported: ${JSON.stringify(name)}`);
    t.equal(registry.sipEdge(name), undefined);
    t.equal(registry.streaming(name), undefined);
  }
  t.ok(OWN_PROTOCOL_VENDOR.streaming, 'the own-protocol vendor has a session');
  const session = OWN_PROTOCOL_VENDOR.streaming!({
    call: CALL, endpoint: { url: 'ws://127.0.0.1:9/agent', externalAgentId: '' }, clock: systemClock, connectTimeoutMs: 1000, handlers: {},
  });
  session.close('unused');
  t.end();
});
