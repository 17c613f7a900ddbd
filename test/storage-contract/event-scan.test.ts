/**
 * Storage contract, docs/EVENTS.md "Order" and docs/DECISIONS.md "Call events: the sender runs with the engine": a scan of the
 * outbox reads at most its cap of each endpoint and then of each tenant, oldest first, so a
 * tenant with many due deliveries to one endpoint hides neither its other endpoints nor another
 * tenant; and it names the endpoints it read only in part.
 */
import t from 'tap';
import type { TenantId } from '../../src/common/ids.js';
import type { Store } from '../../src/storage/index.js';
import { onEachBackend } from './contract-rig.js';

const SECRET = 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

async function endpoint(store: Store, tenant: TenantId, events: string[]): Promise<string> {
  return (await store.webhookEndpoints.create(tenant, { url: 'https://hooks.example.com/a', events, description: null, secret: SECRET })).id;
}

onEachBackend(t, 'a backlog of one endpoint hides neither the tenant\'s other endpoint nor another tenant', async (t, { store, clock }) => {
  const acme = (await store.tenants.create('Acme')).id;
  const bravo = (await store.tenants.create('Bravo')).id;
  const busy = await endpoint(store, acme, ['call.initiated']);
  // A backlog first: 30 calls' events to acme's first endpoint, then one to each other endpoint.
  for (let i = 0; i < 30; i++) await store.events.append(acme, [{ type: 'call.initiated', callId: `call_${i}`, data: {} }]);
  clock.advance(1);
  const quiet = await endpoint(store, acme, ['call.ended']);
  const other = await endpoint(store, bravo, ['*']);
  await store.events.append(acme, [{ type: 'call.ended', callId: 'call_x', data: {} }]);
  await store.events.append(bravo, [{ type: 'call.ended', callId: 'call_y', data: {} }]);

  const { due, unread } = await store.eventDeliveries.scan(12, { perTenant: 6, perEndpoint: 4 });
  const count = (id: string) => due.filter((d) => d.endpoint_id === id).length;
  t.same([count(busy), count(quiet), count(other)], [4, 1, 1], 'the backlog\'s cap, and the newer deliveries of both others');
  t.same([...unread], [[busy, acme]], 'the backlog\'s endpoint is named as read in part');
  t.same(due.filter((d) => d.endpoint_id === busy).map((d) => d.call_id), ['call_0', 'call_1', 'call_2', 'call_3'], 'oldest first');

  const whole = await store.eventDeliveries.scan(100, { perTenant: 100, perEndpoint: 100 });
  t.equal(whole.due.length, 32);
  t.equal(whole.unread.size, 0);
});
