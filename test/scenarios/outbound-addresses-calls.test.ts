/**
 * docs/SECURITY.md "Outbound addresses" at call time, through the whole product: an inbound call
 * to a sip_trunk agent whose stored `sip_uri` is on loopback or the metadata address (stored before
 * the policy, or by a name that resolved elsewhere then) sends no INVITE there unless the operator
 * allows it; a media_bridge agent stored on a loopback name gets no connection.
 */
import t from 'tap';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { startTestGateway, waitFor, type TestGateway } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';

const CARRIERS = `carriers:
  - name: trunk
    inbound:
      sources: ['127.0.0.1']
`;
const SETTINGS = { name: null, region: 'default', sip_credential_id: null, sip_transport: null, sip_region: null };

/** A UDP socket on 127.0.0.1 standing in for an internal PBX: every datagram it receives. */
async function udpListener(t: Test): Promise<{ port: number; datagrams: string[] }> {
  const socket = createSocket('udp4');
  const datagrams: string[] = [];
  socket.on('message', (data) => datagrams.push(data.toString('utf8')));
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => socket.close());
  return { port: socket.address().port, datagrams };
}

/** Stores `settings` as an agent routed from `did`, bypassing the import check (as a stored agent from before would). */
async function storeAgent(gw: TestGateway, did: string, settings: Record<string, unknown>): Promise<void> {
  const { store } = gw.gateway;
  await store.numbers.add(gw.tenantId, did, 'trunk');
  const agent = await store.agents.insert(gw.tenantId, {
    provider: 'custom', external_agent_id: `bot-${did}`, apiKey: null, verifiedAt: null,
    settings: { ...SETTINGS, sip_uri: null, websocket_url: null, ...settings } as never,
  });
  await store.routes.insert(gw.tenantId, { didNumber: did, carrier: 'trunk', agentId: agent.id });
}

/** The carrier calls `did`; resolves with the final status the caller got (an answered call is left to the gateway to end). */
async function callDid(t: Test, gw: TestGateway, did: string): Promise<number> {
  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const call = carrier.ua.invite({ target: `sip:${did}@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770009@127.0.0.1', sdp: phone.offer });
  return answered(call).then(() => 200, (err: { status: number }) => err.status);
}

t.test('Outbound addresses: a stored sip_trunk target on loopback or at the metadata address gets no INVITE', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: 'calls:\n  ring_timeout_seconds: 3' });
  const pbx = await udpListener(t);
  await storeAgent(gw, '+15550131', { connection_mode: 'sip_trunk', sip_uri: `sip:+19005550100@127.0.0.1:${pbx.port}`, sip_transport: 'udp' });
  await storeAgent(gw, '+15550132', { connection_mode: 'sip_trunk', sip_uri: 'sip:x@169.254.169.254:80;transport=tcp', sip_transport: 'tcp' });
  t.equal(await callDid(t, gw, '+15550131'), 503, 'the caller is refused (RFC 3261 21.5.4: the agent cannot be reached)');
  t.equal(await callDid(t, gw, '+15550132'), 503);
  // The refusal is decided before anything is sent; give a late INVITE time to show up anyway.
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.same(pbx.datagrams, [], 'the loopback PBX received nothing');
  const refusals = gw.logs.filter((l) => typeof l.detail === 'string' && l.detail.includes('refused by the outbound-address policy'));
  t.equal(refusals.length, 2, 'both were refused by the policy, not by a time-out');
});

t.test('Outbound addresses: the operator allows private SIP targets (calls.allow_private_sip_targets, or a listed network)', async (t) => {
  for (const yaml of ['calls:\n  allow_private_sip_targets: true\n  ring_timeout_seconds: 3', "calls:\n  allowed_private_networks: ['127.0.0.1/32']\n  ring_timeout_seconds: 3"]) {
    const gw = await startTestGateway(t, { carriers: CARRIERS, yaml });
    const pbx = await udpListener(t);
    await storeAgent(gw, '+15550133', { connection_mode: 'sip_trunk', sip_uri: `sip:+19005550100@127.0.0.1:${pbx.port}`, sip_transport: 'udp' });
    void callDid(t, gw, '+15550133');
    await waitFor(`the INVITE at the PBX (${yaml})`, () => pbx.datagrams.some((d) => d.startsWith('INVITE sip:+19005550100@127.0.0.1')));
    t.pass(`allowed: ${yaml.split('\n')[1]!.trim()}`);
    await gw.gateway.stop('next');
  }
});

t.test('Outbound addresses: a stored media_bridge URL on a loopback name gets no connection and no start', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: 'calls:\n  ring_timeout_seconds: 3' });
  const server = createServer();
  let connections = 0;
  server.on('connection', (socket) => { connections++; socket.destroy(); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  const port = (server.address() as AddressInfo).port;
  await storeAgent(gw, '+15550134', { connection_mode: 'media_bridge', websocket_url: `ws://localhost:${port}/agent` });
  const status = await callDid(t, gw, '+15550134');
  // Left alone, the caller stays on: only the gateway ends this call (it has no agent).
  const ended = await waitFor('the call ended', async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound&state=ended', undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.to === '+15550134');
  });
  t.equal(ended.end_reason, 'agent_unreachable', `the call ends without its agent (caller got ${status})`);
  t.equal(connections, 0, 'the agent server received no connection');
});
