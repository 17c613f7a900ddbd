/**
 * docs/API.md "Live event stream": `GET /v1/events/stream` over real HTTP on loopback sends the
 * tenant's events as Server-Sent Events, exactly `id: evt_…`, `event: <type>`, `data: <envelope>`;
 * `Last-Event-ID` resumes from the log after that event; `type` (with a `call.*` prefix form) and
 * `call_id` filter; another tenant's events never appear; idle connections get `: keepalive`.
 * Live events come from the in-process bus, or from the log where there is none.
 */
import t, { type Test } from 'tap';
import { request as httpRequest, createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { silentLogger } from '../../src/common/logger.js';
import { EventBus } from '../../src/events/event-bus.js';
import type { TenantId } from '../../src/common/ids.js';
import type { Store } from '../../src/storage/index.js';
import { buildApp, type AppHarness } from '../support/build-app.js';

async function listen(t: Test, h: AppHarness): Promise<string> {
  const callback = h.api.app.callback();
  const server = createServer((req, res) => { void callback(req, res); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Opens the stream; `text()` is everything received so far. */
async function open(t: Test, url: string, headers: Record<string, string>): Promise<{ res: IncomingMessage; text: () => string; until(what: RegExp): Promise<void> }> {
  let text = '';
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpRequest(url, { headers }, resolve);
    req.on('error', reject);
    req.end();
    t.teardown(() => req.destroy());
  });
  res.setEncoding('utf8');
  res.on('data', (chunk: string) => { text += chunk; });
  return {
    res, text: () => text,
    async until(what) {
      const end = Date.now() + 10_000;
      while (!what.test(text)) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${String(what)} in ${JSON.stringify(text)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

const append = (store: Store, tenant: TenantId, type: 'call.initiated' | 'call.answered' | 'call.transfer.started' | 'call.ended', callId: string) =>
  store.events.append(tenant, [{ type, callId, data: { call: { id: callId } } }]);

t.test('Last-Event-ID resumes from the log, messages are id/event/data exactly, and later events arrive (log polled without a bus)', async (t) => {
  const h = await buildApp(t);
  const base = await listen(t, h);
  const acme = await h.createTenant('Acme');
  const [first] = await append(h.store, acme.tenant.id, 'call.initiated', 'call_1');
  const [second] = await append(h.store, acme.tenant.id, 'call.answered', 'call_1');
  const stream = await open(t, `${base}/v1/events/stream`, { ...acme.auth, 'last-event-id': first!.id });
  t.equal(stream.res.statusCode, 200);
  t.match(stream.res.headers['content-type'], /^text\/event-stream/);
  await stream.until(/event: call\.answered/);
  t.ok(stream.text().includes(`id: ${second!.id}\nevent: call.answered\ndata: ${second!.payload}\n\n`), 'the message, exactly');
  t.notOk(stream.text().includes(first!.id), 'nothing before Last-Event-ID');
  const [third] = await append(h.store, acme.tenant.id, 'call.ended', 'call_1');
  await stream.until(/event: call\.ended/);
  t.ok(stream.text().includes(`id: ${third!.id}\nevent: call.ended\ndata: ${third!.payload}\n\n`));
  t.equal(stream.text().split(`id: ${second!.id}\n`).length, 2, 'each event once');
});

t.test('live events from the bus, filtered by type prefix and call id; another tenant\'s never; keepalive comments', async (t) => {
  const bus = new EventBus(silentLogger());
  const h = await buildApp(t, { eventBus: bus, options: { eventsKeepaliveMs: 100 } });
  const base = await listen(t, h);
  const acme = await h.createTenant('Acme');
  const globex = await h.createTenant('Globex');
  const all = await open(t, `${base}/v1/events/stream`, acme.auth);
  const transfers = await open(t, `${base}/v1/events/stream?type=call.transfer.*&call_id=call_2`, acme.auth);
  await all.until(/: connected/);
  await transfers.until(/: connected/);
  const published = [
    ...await append(h.store, acme.tenant.id, 'call.initiated', 'call_2'),
    ...await append(h.store, acme.tenant.id, 'call.transfer.started', 'call_3'),
    ...await append(h.store, acme.tenant.id, 'call.transfer.started', 'call_2'),
    ...await append(h.store, globex.tenant.id, 'call.ended', 'call_9'),
  ];
  bus.publish(published);
  await all.until(new RegExp(published[2]!.id));
  await transfers.until(new RegExp(published[2]!.id));
  t.same([...all.text().matchAll(/^id: (\S+)$/gm)].map((m) => m[1]), published.slice(0, 3).map((e) => e.id), 'every event of the tenant, in order');
  t.same([...transfers.text().matchAll(/^id: (\S+)$/gm)].map((m) => m[1]), [published[2]!.id], 'only call_2\'s transfer events');
  t.notOk(all.text().includes(published[3]!.id), 'another tenant\'s event never');
  await all.until(/: keepalive\n\n/);
  const unauthenticated = await open(t, `${base}/v1/events/stream`, {});
  t.equal(unauthenticated.res.statusCode, 401);
});
