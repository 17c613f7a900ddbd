/**
 * Outbound calls to imported agents (docs/API.md "Calls", `agent_id`): sipp is the carrier's callee
 * (answering PCMA and playing the Debian g711a.pcap). A sip_trunk agent is a second sipp, the
 * platform's SIP edge, which challenges with digest, answers PCMU and echoes what it hears
 * (`-rtp_echo`): the gateway dials it once the callee answered and bridges the two dialogs (a
 * B2BUA, as inbound calls are). A media_bridge agent is the fake ElevenLabs, reached with the
 * stored provider key through a signed URL. Also the rules of `agent_id`: exactly one agent, the
 * tenant's own.
 */
import t, { type Test } from 'tap';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { FakeElevenLabs } from '../support/fake-agent-servers/elevenlabs-server.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { detailWhen, EDGE_PASSWORD, EDGE_USER, ended, requestsIn, sippMessages, sippPassed, type SippPeer } from '../support/inbound-sipp-rig.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { freeMediaPort, freePort, SCENARIOS, startSipp } from '../support/sip-sipp.js';
import { metric } from '../support/metrics.js';

const FROM = '+15550100';
const TO = '+15550199';
const API_KEY = 'el-key-0123456789';

/** sipp running `scenario` (a file in test/interop/scenarios) with `-rtp_echo`, `pcap` linked to the Debian captures. */
async function sippPeer(t: Test, scenario: string, extra: string[] = []): Promise<SippPeer> {
  const cwd = tempWorkdir(t);
  symlinkSync('/usr/share/sip-tester', join(cwd, 'pcap'));
  const [port, media] = [await freePort(), await freeMediaPort()];
  const run = startSipp(t, cwd, ['-sf', join(SCENARIOS, scenario), '-i', '127.0.0.1', '-p', String(port), '-mp', String(media), '-rtp_echo', '-trace_msg', '-m', '1', '-timeout', '30s', '-timeout_error', ...extra]);
  return { run, cwd, port };
}

/** A gateway whose live carrier `far` dials `callee`, the tenant holding the calling number there. */
async function gatewayTo(t: Test, callee: SippPeer, yaml = ''): Promise<TestGateway> {
  const gw = await startTestGateway(t, {
    carriers: `carriers:\n  - name: far\n    outbound:\n      uri: "sip:127.0.0.1:${callee.port};transport=udp"\n    codecs: [PCMU, PCMA]\n    options_ping_s: 0\n`,
    yaml: `calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  ring_timeout_seconds: 10\n${yaml}`,
  });
  await gw.gateway.store.numbers.add(gw.tenantId, FROM, 'far');
  return gw;
}

/** Imports the sipp `edge` as the tenant's custom sip_trunk agent with the digest credential the edge checks. */
async function importEdge(gw: TestGateway, edge: SippPeer): Promise<string> {
  const credential = await gw.api('POST', '/v1/sip-credentials', { username: EDGE_USER, password: EDGE_PASSWORD }, { key: gw.liveKey });
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'edge-bot', connection_mode: 'sip_trunk', sip_uri: `sip:bot@127.0.0.1:${edge.port}`,
    sip_transport: 'udp', sip_credential_id: credential.body.id,
  }, { key: gw.liveKey });
  if (imported.status !== 200) throw new Error(`import: ${JSON.stringify(imported.body)}`);
  return String(imported.body.id);
}

interface Legs {
  remote?: { packets_received?: number; packets_sent?: number };
  agent?: { kind?: string; rtp?: { packets_received?: number; packets_sent?: number } | null };
}
const legsOf = (d: ApiBody): Legs => (d.session ?? {}) as Legs;

t.test('docs/API.md "Calls" agent_id, sip_trunk (RFC 7092 B2BUA): the callee answers, the agent edge is dialled with digest and bridged, audio crosses both dialogs, and a hang-up ends both', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const callee = await sippPeer(t, 'calls-uas-talk-wait-bye.xml');
  const edge = await sippPeer(t, 'inbound-edge-auth.xml');
  const gw = await gatewayTo(t, callee);
  const agentId = await importEdge(gw, edge);

  const placed = await gw.api('POST', '/v1/calls', { from: FROM, to: TO, carrier: 'far', agent_id: agentId }, { key: gw.liveKey });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  t.same(placed.body.agent, { type: 'imported', agent_id: agentId }, 'the call names the imported agent');
  const id = String(placed.body.id);

  // The callee's speech crossed to the edge, whose echo came back and went on to the callee.
  const talking = await detailWhen(gw, id, 'packets on both legs', (d) => {
    const s = legsOf(d);
    return (s.remote?.packets_received ?? 0) >= 40 && (s.agent?.rtp?.packets_received ?? 0) >= 40 && (s.remote?.packets_sent ?? 0) >= 40;
  });
  const s = legsOf(talking);
  t.equal(s.agent?.kind, 'sip_trunk', 'the agent side is the second SIP leg');
  t.pass(`RTP both ways: callee leg ${s.remote?.packets_received} in / ${s.remote?.packets_sent} out, edge leg ${s.agent?.rtp?.packets_sent} out / ${s.agent?.rtp?.packets_received} in`);

  const hungUp = await gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(hungUp.status, 200);
  await sippPassed(t, callee, 'the callee (answered, BYE received)');
  await sippPassed(t, edge, 'the edge (challenge met, BYE received)');
  const done = await ended(gw, id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'api' });
  t.equal(done.direction, 'outbound');

  const invites = requestsIn(sippMessages(edge), 'INVITE');
  const authorized = invites.find((m) => /^Authorization:\s*Digest /im.test(m));
  t.match(authorized, new RegExp(`username="${EDGE_USER}"`), 'the edge is reached with the stored SIP credential');
  t.match(authorized, new RegExp(`^X-Call-Id:\\s*${id}\\s*$`, 'im'), 'and the platform is told which call it is');
  t.match(authorized, new RegExp(`^From:.*sip:\\${FROM}@`, 'im'), 'From is the calling number');
  // docs/API.md "Operational endpoints": the edge's answer timed under the agent's provider.
  t.equal(await metric(gw, 'vgw_agent_connect_seconds_count{provider="custom"}'), 1, 'the connection to the edge is timed by provider');
});

t.test('docs/API.md "Calls" agent_id, sip_trunk: an edge that refuses (486) ends the answered call, the callee hung up with BYE', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const callee = await sippPeer(t, 'calls-uas-talk-wait-bye.xml');
  const edge = await sippPeer(t, 'calls-uas-486.xml');
  const gw = await gatewayTo(t, callee);
  const agentId = await importEdge(gw, edge);
  const placed = await gw.api('POST', '/v1/calls', { from: FROM, to: TO, carrier: 'far', agent_id: agentId }, { key: gw.liveKey });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await sippPassed(t, edge, 'the edge (486 sent, ACK received)');
  await sippPassed(t, callee, 'the callee (its BYE from the gateway answered)');
  const done = await ended(gw, String(placed.body.id));
  t.match(done.cdr, { sip_status: 486, hangup_by: 'agent' }, 'the agent side refused');
  t.ok(done.answered_at, 'after the callee answered');
  t.equal(await metric(gw, 'vgw_agent_connect_failures_total{provider="custom",reason="rejected"}'), 1, 'the refusal counted by provider and reason');
});

t.test('docs/API.md "Calls" agent_id, media_bridge: the callee is connected to the platform\'s streaming session, opened with the stored provider key', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const fake = await FakeElevenLabs.start({ apiKey: API_KEY, userInputAudioFormat: 'pcm_16000', agentOutputAudioFormat: 'pcm_16000' });
  t.teardown(() => fake.core.close());
  fake.core.route((req, res) => {
    if (req.method !== 'GET' || req.path !== `/v1/convai/agents/${fake.externalAgentId}`) return false;
    if (req.headers['xi-api-key'] !== API_KEY) {
      res.writeHead(401).end();
      return true;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ agent_id: fake.externalAgentId, name: 'Sales', conversation_config: {}, metadata: {} }));
    return true;
  });
  const port = new URL(fake.url).port;
  const callee = await sippPeer(t, 'calls-uas-talk-wait-bye.xml');
  const gw = await gatewayTo(t, callee, `providers:\n  elevenlabs:\n    api_base_url: http://127.0.0.1:${port}\n    ws_base_url: ws://127.0.0.1:${port}`);
  const imported = await gw.api('POST', '/v1/agents/import', { provider: 'elevenlabs', external_agent_id: fake.externalAgentId, connection_mode: 'media_bridge', api_key: API_KEY }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));

  const placed = await gw.api('POST', '/v1/calls', { from: FROM, to: TO, carrier: 'far', agent_id: imported.body.id }, { key: gw.liveKey });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const id = String(placed.body.id);
  // The pcap's speech, 16-bit PCM at 16 kHz, 1 s of it.
  await waitFor('the callee\'s speech at the platform', () => fake.receivedAudio().length >= 32_000, 20_000);
  t.pass('the callee\'s audio reaches the platform');
  const signed = fake.core.http.find((r) => r.path.startsWith('/v1/convai/conversation/get-signed-url?'));
  t.equal(signed?.headers['xi-api-key'], API_KEY, 'the session URL was signed with the stored key');
  t.ok(fake.core.http.some((r) => r.path.includes('conversation_signature=')), 'the private agent was reached through the signed URL');

  const hungUp = await gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(hungUp.status, 200);
  await sippPassed(t, callee, 'the callee (BYE received)');
  const done = await ended(gw, id);
  t.match(done, { agent: { type: 'imported', agent_id: imported.body.id }, cdr: { hangup_by: 'api' } });
  t.equal(await metric(gw, 'vgw_agent_connect_seconds_count{provider="elevenlabs"}'), 1, 'the platform session timed under its provider');
});

t.test('docs/API.md "Calls": exactly one of agent_ws_url and agent_id (400), and only the tenant\'s own agent (404); nothing is dialled', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const callee = await sippPeer(t, 'calls-uas-talk-wait-bye.xml');
  const gw = await gatewayTo(t, callee);
  const ours = await gw.api('POST', '/v1/agents/import', { provider: 'custom', external_agent_id: 'ours', connection_mode: 'media_bridge', websocket_url: 'ws://127.0.0.1:9/agent' }, { key: gw.liveKey });
  const other = await gw.gateway.store.tenants.create('other');
  const otherKey = (await gw.gateway.store.apiKeys.create(other.id, 'live')).apiKey;
  const theirs = await gw.api('POST', '/v1/agents/import', { provider: 'custom', external_agent_id: 'theirs', connection_mode: 'media_bridge', websocket_url: 'ws://127.0.0.1:9/agent' }, { key: otherKey });
  t.equal(theirs.status, 200, JSON.stringify(theirs.body));
  const base = { from: FROM, to: TO, carrier: 'far' };
  const edge = await importEdge(gw, callee);
  const cases: [string, Record<string, unknown>, number, string][] = [
    ['neither agent', base, 400, 'validation_failed'],
    ['machine detection with a sip_trunk agent', { ...base, agent_id: edge, machine_detection: 'async' }, 400, 'validation_failed'],
    ['both agents', { ...base, agent_id: ours.body.id, agent_ws_url: 'ws://127.0.0.1:9/agent' }, 400, 'validation_failed'],
    ['another tenant\'s agent', { ...base, agent_id: theirs.body.id }, 404, 'not_found'],
    ['an unknown agent', { ...base, agent_id: 'agt_nope' }, 404, 'not_found'],
  ];
  for (const [what, body, status, code] of cases) {
    const r = await gw.api('POST', '/v1/calls', body, { key: gw.liveKey });
    t.equal(r.status, status, `${what}: ${status}`);
    t.equal(r.body.code, code, `${what}: ${code}`);
  }
  const calls = await gw.api('GET', '/v1/calls', undefined, { key: gw.liveKey });
  t.equal(calls.body.data.length, 0, 'no call was placed');
  t.equal(sippMessages(callee), '', 'and nothing reached the carrier');
});
