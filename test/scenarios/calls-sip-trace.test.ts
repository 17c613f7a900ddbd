/**
 * docs/API.md "SIP trace of a call": every SIP message of a call's legs is kept with the call and
 * served by `GET /v1/calls/{id}/sip-trace`, as a JSON ladder in the order the gateway saw them,
 * or with `Accept: application/vnd.tcpdump.pcap` as a pcap file that Debian's tshark reads as SIP.
 * Another tenant asking for the call gets 404, as for a call that does not exist (docs/SECURITY.md).
 * A sandbox call (the in-process far end is a SIP user agent on loopback) to a fake WebSocket agent.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type TestGateway } from '../support/gateway-harness.js';
import { needPeer, peerPath, tempWorkdir } from '../support/peers.js';
import { createSocket } from 'node:dgram';
import { parseHep3 } from '../support/hep3.js';
import { HEP_CHUNK } from '../../src/gateway/observability/hep-exporter.js';

interface TraceMessage { direction: string; transport: string; source: string; destination: string; leg: string; sip_call_id: string; summary: string; text: string }
interface Trace { call_id: string; legs: { leg: string; sip_call_id: string }[]; messages: TraceMessage[]; dropped_messages: number }

async function endedCall(t: Test): Promise<{ gw: TestGateway; id: string }> {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true' });
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const id = placed.body.id;
  await waitFor('the call answered', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'active');
  t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`)).status, 200);
  await waitFor('the call ended', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'ended');
  return { gw, id };
}

const summaries = (trace: Trace): string[] => trace.messages.map((m) => `${m.direction} ${m.summary.replace(/ sip:\S+/, '')}`);

t.test('SIP trace: the ladder of a call, every message of its leg in order, with transport, source and destination', async (t) => {
  const { gw, id } = await endedCall(t);
  // The answer to our BYE arrives after the end: the trace still takes it.
  const trace = await waitFor('the 200 to the BYE in the trace', async () => {
    const res = await gw.api('GET', `/v1/calls/${id}/sip-trace`);
    const body = res.body as unknown as Trace;
    return res.status === 200 && summaries(body).some((s) => s.startsWith('received SIP/2.0 200') && /CSeq: \d+ BYE/i.test(body.messages.at(-1)!.text)) ? body : undefined;
  });
  t.equal(trace.call_id, id);
  t.equal(trace.legs.length, 1);
  t.match(trace.legs[0], { leg: 'carrier', sip_call_id: String });
  const ladder = summaries(trace);
  t.match(ladder[0], /^sent INVITE SIP\/2\.0$/, `the INVITE first: ${JSON.stringify(ladder)}`);
  for (const step of ['received SIP/2.0 200 OK', 'sent ACK SIP/2.0', 'sent BYE SIP/2.0']) t.ok(ladder.includes(step), `${step} in ${JSON.stringify(ladder)}`);
  t.ok(ladder.indexOf('sent ACK SIP/2.0') < ladder.indexOf('sent BYE SIP/2.0'), 'ACK before BYE');
  for (const m of trace.messages) {
    t.equal(m.sip_call_id, trace.legs[0]!.sip_call_id, 'every message is the leg\'s, by Call-ID');
    t.equal(m.transport, 'UDP');
    t.match(m.source, /^127\.0\.0\.1:\d+$/);
    t.match(m.destination, /^127\.0\.0\.1:\d+$/);
  }
  t.equal(trace.dropped_messages, 0);

  // Tenant isolation: the same id under another tenant's key is a call that does not exist.
  const other = await gw.gateway.store.tenants.create('other');
  const otherKey = (await gw.gateway.store.apiKeys.create(other.id, 'sandbox')).apiKey;
  const refused = await gw.api('GET', `/v1/calls/${id}/sip-trace`, undefined, { key: otherKey });
  t.equal(refused.status, 404);
  t.equal(refused.body.code, 'not_found');
  t.notMatch(JSON.stringify(refused.body), 'INVITE');
});

t.test('SIP trace: the pcap file reads in tshark as the same SIP messages', async (t) => {
  if (!needPeer(t, 'tshark')) return;
  const { gw, id } = await endedCall(t);
  const json = await waitFor('the trace with the BYE', async () => {
    const body = (await gw.api('GET', `/v1/calls/${id}/sip-trace`)).body as unknown as Trace;
    return body.messages?.some((m) => m.summary.startsWith('BYE')) ? body : undefined;
  });
  const res = await fetch(`${gw.base}/v1/calls/${id}/sip-trace`, { headers: { authorization: `Bearer ${gw.sandboxKey}`, accept: 'application/vnd.tcpdump.pcap' } });
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'application/vnd.tcpdump.pcap');
  const file = join(tempWorkdir(t, 'vgw-pcap-'), 'call.pcap');
  writeFileSync(file, Buffer.from(await res.arrayBuffer()));
  // Decode UDP on the gateway's and the far end's ports as SIP, whatever they are.
  const ports = [...new Set(json.messages.flatMap((m) => [m.source, m.destination].map((e) => Number(e.split(':').pop()))))];
  const decodeAs = ports.flatMap((p) => ['-d', `udp.port==${p},sip`]);
  const out = execFileSync(peerPath('tshark')!, ['-r', file, ...decodeAs, '-Y', 'sip', '-T', 'fields', '-e', 'sip.Method', '-e', 'sip.Status-Code', '-e', 'sip.Call-ID'], { encoding: 'utf8' });
  const rows = out.trim().split('\n').map((line) => line.split('\t'));
  t.ok(rows.length >= json.messages.length, `tshark read ${rows.length} SIP messages of ${json.messages.length}`);
  for (const method of ['INVITE', 'ACK', 'BYE']) t.ok(rows.some((r) => r[0] === method), `${method} decoded`);
  t.ok(rows.some((r) => r[1] === '200'), '200 decoded');
  t.ok(rows.every((r) => r[2] === json.legs[0]!.sip_call_id), 'the Call-ID of the leg in every packet');
});

t.test('SIP trace: a bridge transfer\'s target leg is found by its own Call-ID, beside the carrier leg (and its media is in cdr.quality)', async (t) => {
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true' });
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url });
  const id = placed.body.id;
  await waitFor('the call answered', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'active');
  t.equal((await gw.api('POST', '/v1/calls/transfer', { call_control_id: placed.body.call_control_id, to: '+15550142' })).status, 200);
  await waitFor('transfer connected', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.transfer?.state === 'connected');
  t.equal((await gw.api('POST', `/v1/calls/${id}/hangup`)).status, 200);
  const trace = await waitFor('both legs\' BYEs in the trace', async () => {
    const body = (await gw.api('GET', `/v1/calls/${id}/sip-trace`)).body as unknown as Trace;
    return body.messages?.filter((m) => m.summary.startsWith('BYE')).length >= 2 ? body : undefined;
  }, 15_000);
  t.same(trace.legs.map((l) => l.leg).sort(), ['carrier', 'transfer_target']);
  const [carrier, target] = ['carrier', 'transfer_target'].map((leg) => trace.legs.find((l) => l.leg === leg)!.sip_call_id);
  t.not(carrier, target, 'two dialogs, two Call-IDs');
  for (const [leg, callId] of [['carrier', carrier], ['transfer_target', target]] as const) {
    const mine = trace.messages.filter((m) => m.sip_call_id === callId);
    t.ok(mine.some((m) => m.summary.startsWith('INVITE')) && mine.some((m) => m.summary.startsWith('BYE')), `${leg}: its INVITE and BYE`);
    t.ok(mine.every((m) => m.leg === leg), `${leg}: every message of its Call-ID is named for it`);
  }
  const cdr = (await gw.api('GET', `/v1/calls/${id}`)).body.cdr as unknown as { quality: { legs: { leg: string }[] } };
  t.same(cdr.quality.legs.map((l) => l.leg), ['carrier', 'transfer_target'], 'the CDR keeps the quality of both RTP legs');
});

t.test('HEP3 export (observability.hep): the call\'s SIP messages reach a Homer-style UDP collector, one HEP3 packet each', async (t) => {
  const collector = createSocket('udp4');
  await new Promise<void>((resolve) => collector.bind(0, '127.0.0.1', resolve));
  t.teardown(() => collector.close());
  const packets: Map<number, Buffer>[] = [];
  collector.on('message', (packet) => packets.push(parseHep3(packet)));
  const gw = await startTestGateway(t, { yaml: `calls:\n  allow_private_agent_urls: true\nobservability:\n  hep:\n    host: 127.0.0.1\n    port: ${collector.address().port}\n    id: 77` });
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const id = (await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'sandbox', agent_ws_url: bot.url })).body.id;
  await waitFor('the call answered', async () => (await gw.api('GET', `/v1/calls/${id}`)).body.state === 'active');
  const payloads = () => packets.map((p) => p.get(HEP_CHUNK.payload)!.toString('utf8'));
  await waitFor('the INVITE and its 200 at the collector', () => payloads().some((p) => p.startsWith('INVITE ')) && payloads().some((p) => p.startsWith('SIP/2.0 200')));
  t.ok(packets.every((p) => p.get(HEP_CHUNK.captureId)!.readUInt32BE(0) === 77), 'the configured capture id');
  t.ok(packets.every((p) => p.get(HEP_CHUNK.protocolType)![0] === 1), 'SIP');
});
