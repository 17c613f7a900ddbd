/**
 * The gateway behind Kamailio (Debian) as the carriers' edge proxy, on loopback: two carriers
 * (sipp on 127.0.0.3 and 127.0.0.4) reach it through one edge address (127.0.0.2), which
 * record-routes and adds `X-VGW-Source` with the carrier's own address. With the edge in
 * `sip.trusted_proxies`, each INVITE is matched to its carrier by that forwarded source
 * (docs/ARCHITECTURE.md "Trusted edge proxies"); in-dialog requests go through the edge both ways.
 */
import t, { type Test } from 'tap';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { FakeElevenLabs } from '../support/fake-agent-servers/elevenlabs-server.js';
import { startTestGateway, type TestGateway } from '../support/gateway-harness.js';
import { detailWhen, ended, inboundCall, sippMessages, sippPassed, type SippPeer } from '../support/inbound-sipp-rig.js';
import { startKamailioEdge, type KamailioEdge } from '../support/kamailio-edge.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freeMediaPort, freePort, SCENARIOS, startSipp } from '../support/sip-sipp.js';

const ALPHA_IP = '127.0.0.3';
const BETA_IP = '127.0.0.4';
/** The DID held on the second carrier, which matching by the edge's own address would never reach. */
const BETA_DID = '+15550140';

interface EdgeRig {
  gw: TestGateway;
  edge: KamailioEdge;
}

/** A gateway with carriers alpha and beta behind the edge, BETA_DID on beta, routed to a media_bridge agent. */
async function startEdgeRig(t: Test): Promise<EdgeRig> {
  const fake = await FakeElevenLabs.start({ userInputAudioFormat: 'pcm_16000', agentOutputAudioFormat: 'pcm_16000' });
  t.teardown(() => fake.core.close());
  const port = new URL(fake.url).port;
  const carriers = `carriers:
  - name: alpha
    inbound:
      sources: ['${ALPHA_IP}']
  - name: beta
    inbound:
      sources: ['${BETA_IP}']
`;
  const gw = await startTestGateway(t, {
    carriers,
    yaml: `sip:\n  trusted_proxies: ['127.0.0.2']\ncalls:\n  allow_private_agent_urls: true\nproviders:\n  elevenlabs:\n    api_base_url: http://127.0.0.1:${port}\n    ws_base_url: ws://127.0.0.1:${port}`,
  });
  await gw.gateway.store.numbers.add(gw.tenantId, BETA_DID, 'beta');
  const imported = await gw.api('POST', '/v1/agents/import', { provider: 'elevenlabs', external_agent_id: fake.externalAgentId, connection_mode: 'media_bridge', did_number: BETA_DID }, { key: gw.liveKey });
  if (imported.status !== 200) throw new Error(`import: ${JSON.stringify(imported.body)}`);
  const edge = await startKamailioEdge(t, { ip: '127.0.0.1', port: gw.gateway.sip.udpPort });
  return { gw, edge };
}

/** A carrier: sipp on its own loopback address calling `did` through the edge with `scenario`. */
async function carrierVia(t: Test, rig: EdgeRig, ip: string, scenario: string, did: string, extra: string[] = []): Promise<SippPeer> {
  const cwd = tempWorkdir(t);
  symlinkSync('/usr/share/sip-tester', join(cwd, 'pcap'));
  const [port, media] = [await freePort(), await freeMediaPort()];
  const run = startSipp(t, cwd, [
    `${rig.edge.ip}:${rig.edge.port}`, '-sf', join(SCENARIOS, scenario), '-s', did, '-i', ip, '-p', String(port), '-mp', String(media),
    // Each carrier also writes an X-VGW-Source of its own, naming the other carrier: the edge replaces it.
    '-key', 'claimed_source', `${ip === ALPHA_IP ? BETA_IP : ALPHA_IP}:5060`,
    '-trace_msg', '-m', '1', '-timeout', '30s', '-timeout_error', ...extra,
  ]);
  return { run, cwd, port };
}

t.test('RFC 3261 16.6 / docs/ARCHITECTURE.md trusted edge proxies: the second carrier behind one edge reaches its DID; refresh re-INVITE and BYE go through the edge', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const rig = await startEdgeRig(t);
  const carrier = await carrierVia(t, rig, BETA_IP, 'edge-uac-refresh-bye.xml', BETA_DID, ['-d', '1000']);
  const live = await inboundCall(rig.gw, BETA_DID);
  t.equal(live.carrier, 'beta', 'matched by the forwarded source, not by the edge address');
  await sippPassed(t, carrier, 'the carrier (200 with Session-Expires via the edge, refresh answered with SDP and Session-Expires, BYE 200)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
  t.ok(done.answered_at, 'answered');
  t.match(sippMessages(carrier), /^Record-Route: <sip:127\.0\.0\.2:\d+;lr/m, 'the 200 carried the edge\'s Record-Route');
});

t.test('RFC 3261 16.12: the gateway hangs up; its BYE follows the route set through the edge to the carrier', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const rig = await startEdgeRig(t);
  const carrier = await carrierVia(t, rig, BETA_IP, 'edge-uac-wait-bye.xml', BETA_DID);
  const live = await inboundCall(rig.gw, BETA_DID);
  await detailWhen(rig.gw, live.id, 'active', (d) => d.state === 'active');
  const hangup = await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, {}, { key: rig.gw.liveKey });
  t.equal(hangup.status, 200, JSON.stringify(hangup.body));
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway with the edge\'s Via on top, answered 200)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'api' });
});

t.test('docs/CONFIGURATION.md "Operator surface" with trusted proxies: the first carrier behind the same edge is not the second: its call to the second one\'s DID gets 404', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const rig = await startEdgeRig(t);
  const carrier = await carrierVia(t, rig, ALPHA_IP, 'edge-uac-404.xml', BETA_DID);
  await sippPassed(t, carrier, 'the carrier alpha (404: the DID is beta\'s)');
});

t.test('X-VGW-Source from an untrusted source is ignored: carrier alpha claiming beta\'s address directly still is alpha (404)', async (t) => {
  if (!needPeer(t, 'sipp', 'kamailio')) return;
  const rig = await startEdgeRig(t);
  const cwd = tempWorkdir(t);
  const run = startSipp(t, cwd, [
    `127.0.0.1:${rig.gw.gateway.sip.udpPort}`, '-sf', join(SCENARIOS, 'edge-uac-404.xml'), '-s', BETA_DID, '-i', ALPHA_IP,
    '-p', String(await freePort()), '-mp', String(await freeMediaPort()), '-key', 'claimed_source', `${BETA_IP}:5060`,
    '-trace_msg', '-m', '1', '-timeout', '30s', '-timeout_error',
  ]);
  await sippPassed(t, { run, cwd, port: 0 }, 'alpha sending straight to the gateway with a forged X-VGW-Source (404)');
});
