/**
 * docs/EVENTS.md "Order" and docs/DECISIONS.md "Call events: the sender runs with the engine": a
 * real gateway process delivering to a real HTTPS receiver on loopback (its throwaway CA trusted
 * by `events.ca_file`) is killed with SIGKILL while the receiver answers 500 and it is retrying;
 * after a restart every event is delivered, in order per call, and a repeat carries the same
 * VGW-Event-Id (at least once).
 */
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { systemClock } from '../../src/common/clock.js';
import { SecretBox } from '../../src/common/secret-box.js';
import { databasePath, openStore, type EventRecord } from '../../src/storage/index.js';
import { verifyDelivery } from '../../src/events/signature.js';
import { startGatewayProcess, writeGatewayConfig } from '../support/gateway-process.js';
import { startHttpsFixture } from '../support/https-fixture.js';

t.test('kill -9 mid-retry, then a restart: every event delivered, in order per call, duplicates only by the same id', async (t) => {
  const dir = t.testdir({});
  let healthy = false;
  const received: { id: string; type: string; call: string; status: number; signature: string; raw: string }[] = [];
  const fixture = await startHttpsFixture(t, (req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => { raw += d.toString(); });
    req.on('end', () => {
      const envelope = JSON.parse(raw) as { id: string; type: string; data: { call: { id: string } } };
      const status = healthy ? 204 : 500;
      received.push({ id: envelope.id, type: envelope.type, call: envelope.data.call.id, status, signature: String(req.headers['vgw-signature']), raw });
      res.writeHead(status).end();
    });
  });
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, fixture.ca);
  const { configFile, dataDir } = writeGatewayConfig(dir, [`events:\n  ca_file: ${JSON.stringify(caFile)}\n  poll_ms: 200`]);
  const secretKey = randomBytes(32).toString('hex');
  const env = { VGW_CONFIG: configFile, VGW_SECRET_KEY: secretKey };

  // The tenant, its endpoint and the calls' events, written as the gateway's store writes them.
  const store = await openStore(databasePath(dataDir), systemClock, { idleMs: 1, absoluteMs: 1 }, new SecretBox(Buffer.from(secretKey, 'hex')));
  const tenant = (await store.tenants.create('acme')).id;
  await store.webhookEndpoints.create(tenant, { url: `https://127.0.0.1:${fixture.port}/events`, events: ['*'], description: null, secret: 'whsec_kill9' });
  const types = ['call.initiated', 'call.ringing', 'call.answered', 'call.ended'] as const;
  const events: EventRecord[] = [];
  for (const call of ['call_1', 'call_2', 'call_3']) events.push(...await store.events.append(tenant, types.map((type) => ({ type, callId: call, data: { call: { id: call } } }))));
  await store.close();

  const first = await startGatewayProcess(t, env);
  const until = async (check: () => boolean, what: string, ms = 60_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  // Each call's first event was refused once, and retried at least once (5 s back-off, jittered).
  await until(() => received.filter((r) => r.type === 'call.initiated').length >= 4, 'retries under way');
  first.child.kill('SIGKILL');
  await new Promise((r) => first.child.once('exit', r));
  t.notOk(received.some((r) => r.type !== 'call.initiated'), 'while a call\'s first event fails, its next ones wait');

  healthy = true;
  await startGatewayProcess(t, env);
  await until(() => events.every((e) => received.some((r) => r.id === e.id && r.status === 204)), 'every event delivered after the restart');
  for (const call of ['call_1', 'call_2', 'call_3']) {
    const order = received.filter((r) => r.call === call && r.status === 204).map((r) => r.type);
    t.same(order, [...types], `${call}: delivered in order, each once`);
  }
  const ids = new Set(events.map((e) => e.id));
  t.ok(received.every((r) => ids.has(r.id)), 'no delivery but of a logged event');
  const nowS = Math.floor(Date.now() / 1000);
  t.ok(received.every((r) => verifyDelivery(r.signature, 'whsec_kill9', r.raw, nowS).valid), 'every delivery verifies');
});
