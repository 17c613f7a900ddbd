/**
 * Hold and media direction against sipp as a carrier's trunk (docs/DECISIONS.md, "Hold and media
 * direction"): sipp signals, and the test's RTP probe is the carrier's media end (its SDP names the
 * probe's port), so every packet the gateway sends the carrier is seen and counted, wherever it was
 * addressed. The agent is a WebSocket agent imported as `custom` media_bridge, or a sipp edge
 * (`-rtp_echo`) for sip_trunk.
 */
import t, { type Test } from 'tap';
import { toneLevel } from '../support/audio-probe.js';
import { agentSays } from '../support/calls-sipp-rig.js';
import { asMulaw, CarrierRtpProbe, mulawPeak } from '../support/carrier-rtp-probe.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { detailWhen, ended, inboundCall, sippPassed, startCarrier, startInboundRig } from '../support/inbound-sipp-rig.js';
import { needPeer } from '../support/peers.js';

interface Session {
  remote?: { local_rtp_port?: number; direction?: string; codec?: string; packets_sent?: number };
  agent?: { rtp?: { packets_sent?: number } | null };
}
const sessionOf = (d: ApiBody): Session => (d.session ?? {}) as Session;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** A gateway whose carrier `trunk` takes calls from 127.0.0.1, with `did` routed to a WebSocket agent imported as `custom` media_bridge. */
async function startCustomBridgeRig(t: Test, did: string): Promise<{ gw: TestGateway; bot: FakeCustomAgent }> {
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const gw = await startTestGateway(t, {
    carriers: "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n",
    yaml: 'calls:\n  allow_private_agent_urls: true',
  });
  await gw.gateway.store.numbers.add(gw.tenantId, did, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'ws-bot', connection_mode: 'media_bridge', websocket_url: bot.url, did_number: did,
  }, { key: gw.liveKey });
  if (imported.status !== 200) throw new Error(`import: ${JSON.stringify(imported.body)}`);
  return { gw, bot };
}

/** The gateway's RTP port toward the carrier, once the call is answered. */
async function gatewayPort(gw: TestGateway, id: string): Promise<number> {
  const d = await detailWhen(gw, id, 'media up', (x) => typeof sessionOf(x).remote?.local_rtp_port === 'number');
  return sessionOf(d).remote!.local_rtp_port!;
}

const holdEvents = (bot: FakeCustomAgent): Record<string, unknown>[] => bot.core.jsonMessages().filter((m) => m.event === 'hold' || m.event === 'unhold');
const mediaCount = (bot: FakeCustomAgent): number => bot.events().filter((e) => e === 'media').length;

t.test('RFC 3264 6.1 and 8.4: a carrier holding with a=sendonly, then c=0.0.0.0, is answered recvonly and sent nothing; the agent gets hold and unhold with source remote and none of the hold music', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const did = '+15550130';
  const { gw, bot } = await startCustomBridgeRig(t, did);
  const probe = await CarrierRtpProbe.open(t);
  const carrier = await startCarrier(t, gw, did, 'inbound-uac-remote-hold.xml', ['-key', 'probe_port', String(probe.port)]);
  const live = await inboundCall(gw, did);
  // The caller talks, and once held the same stream is its hold music: a tone either way.
  probe.play(await gatewayPort(gw, live.id), 'PCMU', 440);
  await waitFor('the agent hears the caller', () => bot.receivedAudio().length >= 160 * 25);
  agentSays(bot, 1000, 1000);
  await waitFor('the carrier hears the agent', () => toneLevel(asMulaw(probe.received), 1000) > 1000);

  await waitFor('the hold event', () => holdEvents(bot).length >= 1, 10_000);
  const heldFrom = probe.received.length;
  agentSays(bot, 1000, 1000); // the agent talks on; the held carrier must get none of it
  await waitFor('the unhold event', () => holdEvents(bot).length >= 2, 10_000);
  const resumedAt = Date.now();
  const sentWhileHeld = probe.since(heldFrom, resumedAt - 60).length;
  t.match(holdEvents(bot), [{ event: 'hold', source: 'remote' }, { event: 'unhold', source: 'remote' }], 'one hold and one unhold, both with source remote');
  t.equal(sentWhileHeld, 0, `nothing went to the carrier while its answers said recvonly, to 0.0.0.0 included (${sentWhileHeld} packets)`);
  const events = bot.events();
  const mediaWhileHeld = events.slice(events.indexOf('hold'), events.indexOf('unhold')).filter((e) => e === 'media').length;
  t.equal(mediaWhileHeld, 0, "the agent got none of the carrier's hold music between its hold and unhold events");

  const resumedFrom = probe.received.length;
  const mediaAtResume = mediaCount(bot);
  agentSays(bot, 1000, 1000);
  await waitFor('caller audio at the agent again', () => mediaCount(bot) >= mediaAtResume + 10, 5_000);
  t.pass('the agent hears the caller again');
  await waitFor("the agent's voice at the carrier again", () => toneLevel(asMulaw(probe.since(resumedFrom)), 1000) > 1000, 5_000);
  t.pass('after the resume the carrier hears the agent');

  await sippPassed(t, carrier, 'the carrier (recvonly, recvonly, sendrecv answered as checked; BYE answered)');
  const done = await ended(gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
  t.equal(done.on_hold, false, "the carrier's own hold is not an API hold");
});

t.test('RFC 3264 6.1 and 8.4 on sip_trunk: while the carrier holds, the gateway sends it nothing and the edge gets silence instead of the hold music', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const probe = await CarrierRtpProbe.open(t);
  const carrier = await rig.call('inbound-uac-remote-hold.xml', ['-key', 'probe_port', String(probe.port)]);
  const live = await inboundCall(rig.gw, rig.did);
  probe.play(await gatewayPort(rig.gw, live.id), 'PCMU', 440);
  await waitFor("the edge's echo at the carrier", () => toneLevel(asMulaw(probe.received), 440) > 1000, 10_000);

  const held = await detailWhen(rig.gw, live.id, 'held by the carrier', (d) => sessionOf(d).remote?.direction === 'recvonly');
  const [heldFrom, heldAt] = [probe.received.length, Date.now()];
  const edgeAtHold = sessionOf(held).agent?.rtp?.packets_sent ?? 0;
  await sleep(1500);
  const stillHeld = await rig.gw.api('GET', `/v1/calls/${live.id}`, undefined, { key: rig.gw.liveKey });
  const heldMs = Date.now() - heldAt;
  t.equal(sessionOf(stillHeld.body).remote?.direction, 'recvonly', 'still held (sendonly, then c=0.0.0.0)');
  t.equal(probe.since(heldFrom).length, 0, `the carrier got nothing while held (${probe.since(heldFrom).length} packets in ${heldMs} ms)`);
  const toEdge = (sessionOf(stillHeld.body).agent?.rtp?.packets_sent ?? 0) - edgeAtHold;
  t.ok(toEdge >= heldMs / 20 / 2, `RTP kept flowing to the edge (${toEdge} packets in ${heldMs} ms)`);

  await detailWhen(rig.gw, live.id, 'resumed', (d) => sessionOf(d).remote?.direction === 'sendrecv');
  const resumedFrom = probe.received.length;
  await waitFor("the edge's echo at the carrier again", () => toneLevel(asMulaw(probe.since(resumedFrom)), 440) > 1000, 5_000);
  t.pass('after the resume the carrier hears the edge again');
  await sippPassed(t, carrier, 'the carrier (recvonly, recvonly, sendrecv; BYE answered)');
  await sippPassed(t, rig.edge, 'the edge (BYE received)');
});

t.test('docs/DECISIONS.md hold: an API hold on a sip_trunk call keeps RTP flowing, silence, to the carrier and to the edge', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const probe = await CarrierRtpProbe.open(t);
  const carrier = await rig.call('inbound-uac-probe-wait-bye.xml', ['-key', 'probe_port', String(probe.port)]);
  const live = await inboundCall(rig.gw, rig.did);
  probe.play(await gatewayPort(rig.gw, live.id), 'PCMU', 440);
  await waitFor("the edge's echo at the carrier", () => toneLevel(asMulaw(probe.received), 440) > 1000, 10_000);
  const key = { key: rig.gw.liveKey };

  const held = await rig.gw.api('POST', `/v1/calls/${live.id}/hold`, undefined, key);
  t.equal(held.body.on_hold, true);
  const [heldFrom, heldAt] = [probe.received.length, Date.now()];
  const edgeAtHold = sessionOf((await rig.gw.api('GET', `/v1/calls/${live.id}`, undefined, key)).body).agent?.rtp?.packets_sent ?? 0;
  await sleep(1500);
  const during = await rig.gw.api('GET', `/v1/calls/${live.id}`, undefined, key);
  const heldMs = Date.now() - heldAt;
  // The first 100 ms may still carry the echo that was on its way.
  const toCarrier = probe.since(heldFrom).filter((p) => p.at > heldAt + 100);
  t.ok(toCarrier.length >= heldMs / 20 / 2, `RTP kept flowing to the carrier (${toCarrier.length} packets in ${heldMs} ms)`);
  t.ok(mulawPeak(asMulaw(toCarrier)) < 100, `silence, with no hold music configured (peak ${mulawPeak(asMulaw(toCarrier))})`);
  const toEdge = (sessionOf(during.body).agent?.rtp?.packets_sent ?? 0) - edgeAtHold;
  t.ok(toEdge >= heldMs / 20 / 2, `RTP kept flowing to the edge (${toEdge} packets in ${heldMs} ms)`);

  await rig.gw.api('POST', `/v1/calls/${live.id}/unhold`, undefined, key);
  const resumedFrom = probe.received.length;
  await waitFor("the edge's echo at the carrier again", () => toneLevel(asMulaw(probe.since(resumedFrom)), 440) > 1000, 5_000);
  t.pass('after unhold the carrier hears the edge again');
  await rig.gw.api('POST', `/v1/calls/${live.id}/hangup`, undefined, key);
  await sippPassed(t, carrier, 'the carrier (BYE from the gateway)');
  await sippPassed(t, rig.edge, 'the edge (BYE from the gateway)');
});

t.test('RFC 3264 8.3.2 and 6.1 on sip_trunk: a re-offer of PCMA alone while PCMU is in use is answered with PCMA, and the bridge converts', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const rig = await startInboundRig(t, { edgeScenario: 'inbound-edge-auth.xml' });
  const probe = await CarrierRtpProbe.open(t);
  const carrier = await rig.call('inbound-uac-reoffer-pcma.xml', ['-key', 'probe_port', String(probe.port)]);
  const live = await inboundCall(rig.gw, rig.did);
  const gwPort = await gatewayPort(rig.gw, live.id);
  probe.play(gwPort, 'PCMU', 440);
  await waitFor("the edge's echo at the carrier", () => toneLevel(asMulaw(probe.received), 440) > 1000, 10_000);

  await detailWhen(rig.gw, live.id, 'moved to PCMA', (d) => sessionOf(d).remote?.codec === 'PCMA');
  probe.play(gwPort, 'PCMA', 440);
  const movedFrom = probe.received.length;
  await waitFor('A-law back at the carrier', () => probe.since(movedFrom).filter((p) => p.payloadType === 8).length >= 40, 5_000);
  const after = probe.since(movedFrom);
  const firstAlaw = after.findIndex((p) => p.payloadType === 8);
  const alaw = after.slice(firstAlaw);
  t.ok(alaw.every((p) => p.payloadType === 8), 'after the first A-law packet every packet to the carrier is PCMA (payload type 8)');
  const level = toneLevel(asMulaw(alaw), 440);
  t.ok(level > 1000, `the carrier's A-law tone crossed to the µ-law edge and its echo came back as A-law (tone ${level.toFixed(0)})`);
  await sippPassed(t, carrier, 'the carrier (the re-offer answered 200 with PCMA; BYE answered)');
  await sippPassed(t, rig.edge, 'the edge (BYE received)');
  const done = await ended(rig.gw, live.id);
  t.match(done.cdr, { end_reason: 'completed', hangup_by: 'caller' });
});

t.test('RFC 3264 8.3.2 and 6.1 on media_bridge: a re-offer of PCMA alone while PCMU is in use is answered with PCMA, and the agent leg converts', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const did = '+15550131';
  const { gw, bot } = await startCustomBridgeRig(t, did);
  const probe = await CarrierRtpProbe.open(t);
  const carrier = await startCarrier(t, gw, did, 'inbound-uac-reoffer-pcma.xml', ['-key', 'probe_port', String(probe.port)]);
  const live = await inboundCall(gw, did);
  const gwPort = await gatewayPort(gw, live.id);
  probe.play(gwPort, 'PCMU', 440);
  await waitFor('the agent hears the caller', () => bot.receivedAudio().length >= 160 * 25);

  await detailWhen(gw, live.id, 'moved to PCMA', (d) => sessionOf(d).remote?.codec === 'PCMA');
  probe.play(gwPort, 'PCMA', 440);
  const heardFrom = bot.receivedAudio().length + 160 * 5; // past what was already on its way
  const movedFrom = probe.received.length;
  agentSays(bot, 1000, 1500);
  await waitFor("the agent's tone at the carrier", () => toneLevel(asMulaw(probe.since(movedFrom)), 1000) > 1000, 5_000);
  t.ok(probe.since(movedFrom).every((p) => p.payloadType === 8), 'everything the carrier got after the move is PCMA (payload type 8)');
  await waitFor('the caller at the agent', () => bot.receivedAudio().length >= heardFrom + 160 * 25, 5_000);
  const heard = bot.receivedAudio().subarray(heardFrom);
  t.ok(toneLevel(heard, 440) > 1000, `the carrier's A-law reaches the agent as µ-law (tone ${toneLevel(heard, 440).toFixed(0)})`);
  await sippPassed(t, carrier, 'the carrier (the re-offer answered 200 with PCMA; BYE answered)');
});
