/**
 * docs/EVENTS.md "Delivery": one attempt to a real HTTPS receiver on loopback (a throwaway CA
 * trusted by configuration): signed as documented and verified by the receiver, non-2xx and
 * redirects are failures (the redirect never followed), a silent endpoint times out, the answer
 * is kept to 4 KiB, and the outbound-address policy refuses loopback, private and metadata
 * addresses and names that resolve to them, at each attempt, names asked of a real DNS server too.
 */
import t, { type Test } from 'tap';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { OutboundAddressPolicy, type HostResolver } from '../common/outbound-policy.js';
import { dnsResolver } from '../common/dns-resolver.js';
import { startDnsServer } from '../../test/support/dns-server.js';
import { FIXTURE_DOMAIN, startHttpsFixture } from '../../test/support/https-fixture.js';
import { EndpointSender, MAX_RESPONSE_BYTES } from './endpoint-sender.js';
import { verifyDelivery } from './signature.js';

const SECRET = 'whsec_0123456789abcdefghijklmnopqrstuvwxyzAB';
const body = JSON.stringify({ id: 'evt_1', type: 'call.ended', created_at: '2026-11-26T00:00:00Z', api_version: '1.0.0', data: {} });
const request = (url: string): Parameters<EndpointSender['deliver']>[0] => ({ url, eventId: 'evt_1', eventType: 'call.ended', body, secrets: [SECRET] });

/** The fixture's names resolve to loopback, which this policy allows as an on-premises network. */
const toLoopback: HostResolver = () => Promise.resolve([{ address: '127.0.0.1', family: 4 }]);
const allowLoopback = new OutboundAddressPolicy({ allowPrivate: false, allowedPrivateNetworks: ['127.0.0.1'] });

async function receiver(t: Test, handler: (req: IncomingMessage, res: ServerResponse, raw: string) => void) {
  return startHttpsFixture(t, (req, res) => {
    let raw = '';
    req.on('data', (d: Buffer) => { raw += d.toString(); });
    req.on('end', () => handler(req, res, raw));
  });
}

t.test('a delivery is signed as documented, and the receiver verifies it', async (t) => {
  const seen: { headers: IncomingMessage['headers']; raw: string }[] = [];
  const fixture = await receiver(t, (req, res, raw) => {
    seen.push({ headers: req.headers, raw });
    res.writeHead(204).end();
  });
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: false, ca: fixture.ca, resolve: toLoopback });
  const result = await sender.deliver(request(fixture.url('/hooks')));
  t.match(result, { ok: true, status: 204 });
  t.equal(seen.length, 1);
  const got = seen[0]!;
  t.equal(got.raw, body, 'the body as signed');
  t.equal(got.headers['vgw-event-id'], 'evt_1');
  t.equal(got.headers['vgw-event-type'], 'call.ended');
  t.equal(got.headers['content-type'], 'application/json');
  t.same(verifyDelivery(String(got.headers['vgw-signature']), SECRET, got.raw, Math.floor(Date.now() / 1000)), { valid: true });
});

t.test('a non-2xx answer and a redirect are failures; the redirect is not followed; the answer is cut at 4 KiB', async (t) => {
  let hits = 0;
  const fixture = await receiver(t, (req, res) => {
    hits++;
    if (req.url === '/moved') res.writeHead(307, { location: '/elsewhere' }).end();
    else res.writeHead(500, { 'content-type': 'text/plain' }).end('x'.repeat(20_000));
  });
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: false, ca: fixture.ca, resolve: toLoopback });
  const failed = await sender.deliver(request(fixture.url('/fail')));
  t.match(failed, { ok: false, status: 500, error: 'answered 500' });
  t.equal(failed.ok ? -1 : failed.responseBody?.length, MAX_RESPONSE_BYTES);
  const moved = await sender.deliver(request(fixture.url('/moved')));
  t.match(moved, { ok: false, status: 307, error: 'redirect (307) not followed' });
  t.equal(hits, 2, 'the redirect target was never asked');
});

t.test('an endpoint that does not answer in time is a failure after the time-out', async (t) => {
  const fixture = await receiver(t, () => { /* never answers */ });
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: false, ca: fixture.ca, resolve: toLoopback, timeoutMs: 300 });
  t.match(await sender.deliver(request(fixture.url('/slow'))), { ok: false, status: null, error: 'no answer within 300 ms' });
});

t.test('the outbound-address policy refuses non-public endpoints, by address or by what a name resolves to', async (t) => {
  const fixture = await receiver(t, (_req, res) => res.writeHead(200).end());
  const strict = new OutboundAddressPolicy({ allowPrivate: false });
  const cases: [string, HostResolver][] = [
    [`https://127.0.0.1:${fixture.port}/`, toLoopback],
    ['https://169.254.169.254/latest/meta-data/', toLoopback],
    ['https://[::ffff:10.0.0.1]/', toLoopback],
    [fixture.url('/'), toLoopback],
    ['https://hooks.example.com/', () => Promise.resolve([{ address: '93.184.216.34', family: 4 }, { address: '10.1.2.3', family: 4 }])],
  ];
  for (const [url, resolve] of cases) {
    const result = await new EndpointSender({ policy: strict, allowHttp: false, ca: fixture.ca, resolve }).deliver(request(url));
    t.match(result, { ok: false, error: /^endpoint address refused/ }, url);
  }
  t.equal(fixture.requests.length, 0, 'nothing reached the receiver');
});

t.test('an endpoint\'s name asked of DNS at each delivery: delivered to the address checked, refused once it rebinds to a private one', async (t) => {
  const fixture = await receiver(t, (_req, res) => res.writeHead(204).end());
  const dns = await startDnsServer(t);
  dns.records.set(`hooks.${FIXTURE_DOMAIN}`, [{ type: 'A', address: '127.0.0.1', ttl: 0 }]);
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: false, ca: fixture.ca, resolve: dnsResolver({ servers: [dns.server] }) });
  t.match(await sender.deliver(request(fixture.url('/in', `hooks.${FIXTURE_DOMAIN}`))), { ok: true, status: 204 });
  dns.records.set(`hooks.${FIXTURE_DOMAIN}`, [{ type: 'A', address: '10.0.0.1', ttl: 0 }]);
  t.match(await sender.deliver(request(fixture.url('/in', `hooks.${FIXTURE_DOMAIN}`))), { ok: false, error: /^endpoint address refused: .* resolves to 10\.0\.0\.1/ });
  t.equal(dns.asked(`hooks.${FIXTURE_DOMAIN}`, 'A'), 2, 'asked at each delivery (TTL 0)');
  t.equal(fixture.requests.length, 1, 'the second never reached a server');
  sender.close();
});

t.test('http:// endpoints only where configuration allows them', async (t) => {
  const sender = new EndpointSender({ policy: allowLoopback, allowHttp: false, resolve: toLoopback });
  t.match(await sender.deliver(request('http://hooks.example.com/')), { ok: false, error: 'http: endpoints are not allowed' });
  t.match(await sender.deliver(request('not a url')), { ok: false, error: 'the endpoint URL does not parse' });
});
