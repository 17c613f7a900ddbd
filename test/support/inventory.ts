/** @module Shared set-up of the inventory scenarios: an app whose providers are local fakes. */
import { buildApp, type AppHarness, type TestTenant } from './build-app.js';
import { overridesFor, startFakeProvider, type FakeProvider } from './fake-providers/fake-provider.js';

export const EL_KEY = 'sk_el_test_0123456789abcdef';
export const RETELL_KEY = 'key_retell_test_9876543210';
export const VAPI_KEY = '6f2c1d5e-0000-4000-8000-00000000vapi';

export interface InventoryHarness extends AppHarness {
  elevenlabs: FakeProvider;
  retell: FakeProvider;
  vapi: FakeProvider;
  acme: TestTenant;
  /** POST /v1/agents/import as `who` (acme by default). */
  importAgent(body: Record<string, unknown>, who?: TestTenant): ReturnType<AppHarness['request']>;
}

interface Teardown {
  teardown(fn: () => void | Promise<void>): void;
}

export async function buildInventory(t: Teardown, dbFile?: string): Promise<InventoryHarness> {
  const elevenlabs = await startFakeProvider('elevenlabs', { agents: ['agent_el_1', 'agent_el_2'], apiKey: EL_KEY });
  const retell = await startFakeProvider('retell', { agents: ['agent_rt_1'], apiKey: RETELL_KEY });
  const vapi = await startFakeProvider('vapi', { agents: ['3f1e0c2a-1111-4222-8333-444455556666'], apiKey: VAPI_KEY });
  t.teardown(() => Promise.all([elevenlabs.close(), retell.close(), vapi.close()]).then(() => undefined));
  const h = await buildApp(t, { providers: overridesFor(elevenlabs, retell, vapi), ...(dbFile ? { dbFile } : {}) });
  const acme = await h.createTenant('Acme');
  return {
    ...h, elevenlabs, retell, vapi, acme,
    importAgent: (body, who = acme) => h.request({ method: 'POST', url: '/v1/agents/import', headers: who.auth, payload: body }),
  };
}
