/**
 * docs/SECURITY.md "Outbound addresses": at configuration time (agent import and PUT) a
 * `websocket_url` or `sip_uri` is resolved (WebSocket hosts with the host resolver, SIP URIs with
 * the RFC 3263 resolver) and every answer checked; a non-public answer is a 400
 * `validation_failed` unless the operator allows it, and a URL that does not parse is a 400 too.
 */
import t from 'tap';
import type { NaptrRecord, SrvRecord } from 'node:dns';
import { isIP } from 'node:net';
import type { HostResolver } from '../../src/common/outbound-policy.js';
import type { Test } from 'tap';
import { buildApp, type AppHarness, type BuildAppOverrides, type TestTenant } from '../support/build-app.js';

const PUBLIC_V4 = '93.184.215.14';
/** The host resolver's answers (A and AAAA) for WebSocket hosts. */
const HOSTS: Record<string, string[]> = {
  'agent.example.test': [PUBLIC_V4],
  'loopback.example.test': ['127.0.0.1'],
  'mixed.example.test': [PUBLIC_V4, '10.0.0.7'],
  'metadata.example.test': ['169.254.169.254'],
};
const resolveHost: HostResolver = (host) =>
  HOSTS[host] ? Promise.resolve(HOSTS[host].map((address) => ({ address, family: isIP(address) }))) : Promise.reject(Object.assign(new Error(`ENOTFOUND ${host}`), { code: 'ENOTFOUND' }));

/** DNS of the RFC 3263 resolver: an edge with SRV records, one of whose targets is internal. */
const A: Record<string, string[]> = { 'edge.example.test': [PUBLIC_V4], 'pbx.internal.test': ['10.1.2.3'], 'sip1.example.test': [PUBLIC_V4] };
const SRV: Record<string, SrvRecord[]> = {
  '_sip._udp.srv.example.test': [
    { name: 'sip1.example.test', port: 5060, priority: 10, weight: 1 },
    { name: 'pbx.internal.test', port: 5060, priority: 20, weight: 1 },
  ],
};
const none = (): Promise<never> => Promise.reject(Object.assign(new Error('ENODATA'), { code: 'ENODATA' }));
const sipDns = {
  resolveNaptr: (): Promise<NaptrRecord[]> => none(),
  resolveSrv: (name: string): Promise<SrvRecord[]> => (SRV[name] ? Promise.resolve(SRV[name]) : none()),
  resolve4: (name: string): Promise<string[]> => (A[name] ? Promise.resolve(A[name]) : none()),
  resolve6: (): Promise<string[]> => none(),
};

async function setup(t: Test, overrides: BuildAppOverrides = {}): Promise<{ h: AppHarness; acme: TestTenant; importAgent: (body: Record<string, unknown>) => Promise<{ status: number; body: Record<string, unknown> }> }> {
  const h = await buildApp(t, { resolveHost, sipDns, ...overrides });
  const acme = await h.createTenant('Acme');
  let n = 0;
  return {
    h, acme,
    async importAgent(body) {
      const res = await h.request({ method: 'POST', url: '/v1/agents/import', headers: acme.auth, payload: { provider: 'custom', external_agent_id: `a${++n}`, ...body } });
      return { status: res.statusCode, body: JSON.parse(res.body) as Record<string, unknown> };
    },
  };
}

const ws = (url: string) => ({ connection_mode: 'media_bridge', websocket_url: url });
const sip = (uri: string) => ({ connection_mode: 'sip_trunk', sip_uri: uri });

t.test('Outbound addresses: a websocket_url whose name resolves to loopback, private or metadata space is refused at import', async (t) => {
  const { h, acme, importAgent } = await setup(t);
  for (const url of ['ws://loopback.example.test:8080/agent', 'wss://mixed.example.test/agent', 'ws://metadata.example.test/', 'ws://localhost:9/x', 'ws://[::ffff:127.0.0.1]:9/x']) {
    const res = await importAgent(ws(url));
    t.equal(res.status, 400, url);
    t.equal(res.body.code, 'validation_failed', url);
    t.match(res.body.errors, [{ path: '/websocket_url' }], url);
  }
  t.equal((await importAgent(ws('wss://agent.example.test/agent'))).status, 200, 'a name with public answers only');
  t.equal((await importAgent(ws('wss://not-yet.example.test/agent'))).status, 200, 'a name that does not resolve yet is kept (checked again at connect time)');
  const list = await h.request({ method: 'GET', url: '/v1/agents', headers: acme.auth });
  t.equal((JSON.parse(list.body) as { data: unknown[] }).data.length, 2, 'none of the refused ones was stored');
});

t.test('Outbound addresses: a sip_uri on loopback, link-local (metadata) or private space is refused at import', async (t) => {
  const { importAgent } = await setup(t);
  const refused = [
    'sip:+19005550100@127.0.0.1:5070', 'sip:x@169.254.169.254:80;transport=tcp', 'sip:x@10.0.0.1', 'sip:x@[::1]:5060',
    'sip:x@localhost', 'sips:x@[::ffff:169.254.169.254]', 'sip:x@pbx.internal.test', 'sip:x@edge.example.test;maddr=127.0.0.1',
    // RFC 3263 4.2: every SRV target counts, the internal one at a lower priority too.
    'sip:x@srv.example.test',
  ];
  for (const uri of refused) {
    const res = await importAgent(sip(uri));
    t.equal(res.status, 400, uri);
    t.equal(res.body.code, 'validation_failed', uri);
    t.match(res.body.errors, [{ path: '/sip_uri' }], uri);
  }
  for (const uri of ['sip:+15550100@edge.example.test;transport=tcp', `sip:x@${PUBLIC_V4}:5060`, 'sip:x@unknown.example.test']) {
    t.equal((await importAgent(sip(uri))).status, 200, `accepted: ${uri}`);
  }
});

t.test('Outbound addresses: PUT is checked like import', async (t) => {
  const { h, acme, importAgent } = await setup(t);
  const created = await importAgent(sip('sip:x@edge.example.test'));
  t.equal(created.status, 200);
  const put = (payload: Record<string, unknown>) => h.request({ method: 'PUT', url: `/v1/agents/${String(created.body.id)}`, headers: acme.auth, payload });
  const res = await put(sip('sip:x@127.0.0.1:5060'));
  t.equal(res.statusCode, 400);
  t.equal((JSON.parse(res.body) as { code: string }).code, 'validation_failed');
  const kept = await h.request({ method: 'GET', url: `/v1/agents/${String(created.body.id)}`, headers: acme.auth });
  t.equal((JSON.parse(kept.body) as { sip_uri: string }).sip_uri, 'sip:x@edge.example.test', 'the stored target is unchanged');
  t.equal((await put(ws('ws://loopback.example.test/a'))).statusCode, 400, 'a websocket_url the same way');
});

t.test('Outbound addresses: a URL that passes the schema but does not parse is a 400 validation_failed, never a 500', async (t) => {
  const { importAgent } = await setup(t);
  for (const url of ['ws://[', 'ws://a:99999/', 'ws://%zz/', 'wss://[::1', 'ws://a%00b/']) {
    const res = await importAgent(ws(url));
    t.equal(res.status, 400, url);
    t.equal(res.body.code, 'validation_failed', url);
  }
  for (const uri of ['sip:x@[', 'sip:x@host:99999', 'sip:@', 'sips:x@a b']) {
    const res = await importAgent(sip(uri));
    t.equal(res.status, 400, uri);
    t.equal(res.body.code, 'validation_failed', uri);
  }
});

t.test('Outbound addresses: the operator allows non-public targets, all of them or some networks', async (t) => {
  const open = await setup(t, { options: { allowPrivateAgentUrls: true, allowPrivateSipTargets: true } });
  for (const body of [ws('ws://loopback.example.test:8080/agent'), sip('sip:+19005550100@127.0.0.1:5070'), sip('sip:x@169.254.169.254:80;transport=tcp')]) {
    t.equal((await open.importAgent(body)).status, 200, `allowed by calls.allow_private_*: ${JSON.stringify(body)}`);
  }
  const sipOnly = await setup(t, { options: { allowPrivateSipTargets: true } });
  t.equal((await sipOnly.importAgent(ws('ws://loopback.example.test:8080/agent'))).status, 400, 'each kind has its own switch');
  const listed = await setup(t, { options: { allowedPrivateNetworks: ['127.0.0.0/8', '10.1.2.0/24'] } });
  t.equal((await listed.importAgent(sip('sip:x@127.0.0.1:5070'))).status, 200, 'a listed network');
  t.equal((await listed.importAgent(sip('sip:x@pbx.internal.test'))).status, 200, 'a name resolving into a listed network');
  t.equal((await listed.importAgent(ws('ws://loopback.example.test/a'))).status, 200, 'agent URLs share the list');
  t.equal((await listed.importAgent(sip('sip:x@169.254.169.254'))).status, 400, 'an unlisted one is still refused');
});
