/**
 * docs/DECISIONS.md "Call events: the sender runs with the engine" ("Read by what changed"): the
 * sender reads the deliveries of the events the bus announces, and only of those written with a
 * delivery, so a tenant with no endpoint costs it no read. docs/API.md "Operational endpoints":
 * its attempts are counted by outcome and its deliveries' delay measured on the registry given.
 * Real store (SQLite file), real config, a real receiver on loopback.
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Registry } from 'prom-client';
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

t.test('each attempt is counted by its outcome, and a delivered event\'s delay is measured', async (t) => {
  const clock = new FakeClock(Date.parse('2026-11-27T12:00:00.000Z'));
  const dir = t.testdir({});
  const store = await openStore(databasePath(dir), clock, { idleMs: 60_000, absoluteMs: 3_600_000 }, new SecretBox(randomBytes(32)));
  t.teardown(() => store.close());
  // One endpoint answers 204, the other 500: its delivery is retried later.
  const receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(req.url === '/ok' ? 204 : 500).end());
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.teardown(() => receiver.close());
  const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  const tenant = (await store.tenants.create('acme')).id;
  for (const path of ['/ok', '/broken']) {
    await store.webhookEndpoints.create(tenant, { url: `${base}${path}`, events: ['*'], description: null, secret: `whsec_${'A'.repeat(40)}` });
  }
  writeFileSync(join(dir, 'vgw.yaml'), 'calls:\n  allow_private_agent_urls: true\nevents:\n  allow_http: true\n');
  const metrics = new Registry();
  const delivery = startEventDelivery(loadConfig({ env: { VGW_CONFIG: join(dir, 'vgw.yaml') } }), store, clock, silentLogger(), { nodeId: 'test', ownsOutbox: true }, metrics);
  t.teardown(() => delivery.stop());
  const text = async (): Promise<string> => metrics.metrics();
  t.match(await text(), /^vgw_event_delivery_attempts_total\{outcome="failed"\} 0$/m, 'every outcome\'s series is there at 0');

  const [event] = await store.transaction((tx) => tx.events.append(tenant, [{ type: 'call.initiated' as const, callId: 'call_1', data: {} }]));
  clock.advance(1_500);
  delivery.bus.publish([event!]);
  const deadline = Date.now() + 5_000;
  while (!/outcome="retrying"\} 1$/m.test(await text()) || !/outcome="delivered"\} 1$/m.test(await text())) {
    if (Date.now() > deadline) throw new Error(`both attempts not counted in time:\n${await text()}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const after = await text();
  t.match(after, /^vgw_event_delivery_attempts_total\{outcome="failed"\} 0$/m, 'the 500 is retried, not failed for good');
  t.match(after, /^vgw_event_delivery_delay_seconds_count 1$/m, 'one event delivered');
  t.match(after, /^vgw_event_delivery_delay_seconds_sum 1\.5$/m, 'its delay from the event written to the 2xx, on the store\'s clock');
  t.match(after, /^vgw_event_delivery_delay_seconds_bucket\{le="1"\} 0$/m);
  t.match(after, /^vgw_event_delivery_delay_seconds_bucket\{le="2\.5"\} 1$/m);
  t.match(after, /^vgw_event_deliveries_in_flight 0$/m, 'nothing in flight once both are answered and written');
});
