/**
 * docs/EVENTS.md "Delivery": deliveries held for want of room are taken oldest first within each
 * endpoint, as many as fit, and an endpoint whose oldest does not fit gives none.
 */
import t from 'tap';
import type { TenantId } from '../common/ids.js';
import type { DueDelivery } from '../storage/index.js';
import { HeldDeliveries } from './held-deliveries.js';

const delivery = (id: number, endpoint: string): DueDelivery => ({
  id, tenant_id: 'ten_a' as TenantId, endpoint_id: endpoint, url: 'https://hooks.example.com/', call_id: null,
  event_id: `evt_${id}`, event_type: 'call.ended', payload: '{}', attempts: 0, window_started_at: '2026-11-27T00:00:00.000Z',
});

t.test('taken oldest first per endpoint, as many as fit; held again, one is not counted twice', (t) => {
  const held = new HeldDeliveries();
  for (const [id, endpoint] of [[1, 'whe_a'], [2, 'whe_b'], [3, 'whe_a'], [4, 'whe_a'], [5, 'whe_b']] as const) held.hold(delivery(id, endpoint));
  held.hold(delivery(3, 'whe_a'));
  t.equal(held.size, 5);
  const room = new Map([['whe_a', 2], ['whe_b', 0]]);
  const taken = held.take((d) => room.get(d.endpoint_id)! > 0, (d) => room.set(d.endpoint_id, room.get(d.endpoint_id)! - 1), () => false);
  t.same(taken.map((d) => d.id), [1, 3], 'whe_a\'s two oldest; whe_b has no room');
  t.equal(held.size, 3);
  t.ok(held.has(delivery(4, 'whe_a')) && !held.has(delivery(1, 'whe_a')));
  let left = 1;
  t.same(held.take(() => true, () => { left--; }, () => left <= 0).map((d) => d.id), [4], 'stops once full');
  t.end();
});
