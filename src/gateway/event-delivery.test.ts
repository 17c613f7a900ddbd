/**
 * docs/DECISIONS.md "Call events: the sender runs with the engine" ("Read by what changed"): the
 * sender reads the deliveries of the events the bus announces, and only of those written with a
 * delivery, so a tenant with no endpoint costs it no read. Real store (SQLite file), real config.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { FakeClock } from '../common/clock.js';
import { silentLogger } from '../common/logger.js';
import { SecretBox } from '../common/secret-box.js';
import { loadConfig } from '../config/load-config.js';
import { databasePath, openStore } from '../storage/index.js';
import { startEventDelivery } from './event-delivery.js';

t.test('an event written with no delivery is not read again by the sender; one with deliveries is', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
  const store = await openStore(databasePath(t.testdir({})), clock, { idleMs: 60_000, absoluteMs: 3_600_000 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  const quiet = (await store.tenants.create('quiet')).id;
  const hooked = (await store.tenants.create('hooked')).id;
  // The endpoint's address is refused at delivery (no private address allowed): only the read matters here.
  await store.webhookEndpoints.create(hooked, { url: 'https://127.0.0.1:9/hook', events: ['*'], description: null, secret: `whsec_${'A'.repeat(40)}` });

  const read: number[][] = [];
  const dueOf = store.eventDeliveries.dueOf.bind(store.eventDeliveries);
  store.eventDeliveries.dueOf = (seqs) => {
    read.push([...seqs]);
    return dueOf(seqs);
  };
  const delivery = startEventDelivery(loadConfig({ env: {} }), store, clock, silentLogger(), { nodeId: 'test', ownsOutbox: true });
  t.teardown(() => delivery.stop());

  const event = { type: 'call.initiated' as const, callId: 'call_1', data: {} };
  const [none] = await store.transaction((tx) => tx.events.append(quiet, [event]));
  const [some] = await store.transaction((tx) => tx.events.append(hooked, [event]));
  t.equal(none!.deliveries, 0, 'the quiet tenant\'s event is written with no delivery');
  t.equal(some!.deliveries, 1, 'the other\'s with one, to its endpoint');

  delivery.bus.publish([none!]);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(read, [], 'no read for the event with no delivery');
  delivery.bus.publish([some!]);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.same(read, [[some!.seq]], 'its deliveries are read by its sequence number');
});
