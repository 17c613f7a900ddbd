/**
 * Inbound calls end to end through the whole product: a carrier (our SIP user agent and an RTP
 * phone on loopback) calls a tenant's DID; the gateway routes it to the imported agent in its
 * connection mode: media_bridge to a `custom` WebSocket agent, sip_trunk to a SIP edge that
 * challenges with digest (docs/DECISIONS.md "Calls", docs/API.md "Calls" and docs/API.md "Agent WebSocket protocol" and docs/API.md "Agents, routes, numbers and SIP credentials").
 */
import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import wavefile from 'wavefile';
import { DigestServer, type SessionDialog } from '../../src/engine/sip/index.js';
import { CODECS, createOffer } from '../../src/engine/media/index.js';
import { systemClock } from '../../src/common/clock.js';
import { mulawTone, toneLevel } from '../support/audio-probe.js';
import { routeDidToFakeAgent, startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';

const CARRIERS = `carriers:
  - name: trunk
    inbound:
      sources: ['127.0.0.1']
`;
const YAML = 'calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  ring_timeout_seconds: 5';

async function inboundCall(gw: TestGateway, did: string): Promise<ApiBody> {
  return waitFor(`inbound call to ${did}`, async () => {
    for (const query of ['direction=inbound', 'direction=inbound&state=ended']) {
      const r = await gw.api('GET', `/v1/calls?${query}`, undefined, { key: gw.liveKey });
      const found = r.body.data.find((c) => c.to === did);
      if (found) return found;
    }
    return undefined;
  });
}

async function endedCall(gw: TestGateway, id: string): Promise<ApiBody> {
  return waitFor(`call ${id} ended`, async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    return r.body.state === 'ended' ? r.body : undefined;
  });
}

/** A WAV of a 600 Hz tone, for hold music. */
function holdMusicFile(dir: string): string {
  const wav = new wavefile.WaveFile();
  wav.fromScratch(1, 16000, '16', Array.from({ length: 16000 }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 600 * i) / 16000))));
  const file = join(dir, 'hold.wav');
  writeFileSync(file, wav.toBuffer());
  return file;
}

t.test('media_bridge: a caller reaches a custom WebSocket agent, audio both ways, hold with music, and the caller hangs up', async (t) => {
  const musicDir = mkdtempSync(join(tmpdir(), 'vgw-hold-'));
  t.teardown(() => rmSync(musicDir, { recursive: true, force: true }));
  const music = holdMusicFile(musicDir);
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: `${YAML}\n  hold_music_file: ${JSON.stringify(music)}` });
  const { bot, agentId } = await routeDidToFakeAgent(t, gw, { did: '+15550100', carrier: 'trunk', externalAgentId: 'front-desk' });

  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const call = carrier.ua.invite({ target: `sip:+15550100@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer });
  const { session, answer } = await answered(call);
  phone.useAnswer(answer);
  phone.startSending(mulawTone(1000, 1000));

  await waitFor("the agent's start message", () => bot.events().includes('start'));
  const start = bot.core.jsonMessages().find((m) => m.event === 'start') as { start: { customParameters: Record<string, string> } };
  t.equal(start.start.customParameters.direction, 'inbound', 'the agent is told the call is inbound');
  t.equal(start.start.customParameters.from, '+15557770001', 'with the caller in E.164');
  await waitFor('the 1 kHz tone at the agent', () => toneLevel(bot.receivedAudio().subarray(-8000), 1000) > 1000);
  t.pass("the caller's audio reaches the agent");
  const greeting = mulawTone(440, 2000);
  for (let i = 0; i < greeting.length; i += 160) bot.sendAudio(greeting.subarray(i, i + 160));
  await waitFor('agent audio at the caller', () => toneLevel(phone.audio(), 440) > 1000);
  t.pass("the agent's audio reaches the caller");

  const live = await inboundCall(gw, '+15550100');
  t.equal(live.direction, 'inbound');
  t.equal(live.state, 'active');
  t.same(live.agent, { type: 'imported', agent_id: agentId }, 'the call names the imported agent');
  const held = await gw.api('POST', `/v1/calls/${live.id}/hold`, undefined, { key: gw.liveKey });
  t.equal(held.body.on_hold, true, 'hold works on inbound calls as on outbound ones');
  await waitFor("the agent's hold event", () => bot.events().includes('hold'));
  const heardBefore = phone.received.length;
  await waitFor('hold music at the caller', () => toneLevel(Buffer.concat(phone.received.slice(heardBefore)), 600) > 1000);
  t.pass('the held caller hears the configured hold music (docs/API.md "Calls")');
  await gw.api('POST', `/v1/calls/${live.id}/unhold`, undefined, { key: gw.liveKey });
  await waitFor("the agent's unhold event", () => bot.events().includes('unhold'));

  await session.bye();
  const ended = await endedCall(gw, live.id);
  t.equal(ended.cdr?.hangup_by, 'caller');
  t.equal(ended.cdr?.end_reason, 'completed');
  await waitFor('the agent socket closed', () => bot.core.closedWith !== undefined);
  t.pass('the agent socket closes when the caller hangs up');
  const recorded = await waitFor('recording', async () => (await gw.api('GET', `/v1/calls/${live.id}`, undefined, { key: gw.liveKey })).body.recording.available || undefined);
  t.ok(recorded, 'inbound calls are recorded by default');
});

t.test('RFC 3261 21.4.5 and 21.5.4: an unrouted DID gets 404, a foreign source 403', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const call = carrier.ua.invite({ target: `sip:+15550999@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer });
  const failure = await answered(call).then(() => 0, (err: { status: number }) => err.status);
  t.equal(failure, 404, 'a DID with no live route is Not Found');

  const elsewhere = await startTestGateway(t, { carriers: 'carriers:\n  - name: trunk\n    inbound:\n      sources: [\'192.0.2.1\']\n', yaml: YAML });
  const refused = carrier.ua.invite({ target: `sip:+15550100@127.0.0.1:${elsewhere.gateway.sip.udpPort}`, from: 'sip:+15557770001@127.0.0.1', sdp: phone.offer });
  t.equal(await answered(refused).then(() => 0, (err: { status: number }) => err.status), 403, 'a source that matches no carrier is refused (docs/CONFIGURATION.md "Operator surface")');
});

t.test('sip_trunk: the gateway dials the agent edge with the stored digest credential and bridges the media', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  // The platform's SIP edge: challenges with digest (RFC 3261 22.2), answers, plays a 440 Hz tone.
  const digest = new DigestServer({ realm: 'edge.example', clock: systemClock });
  const edge = await startSipPhoneUa(t, { inboundAuth: () => ({ server: digest, passwordOf: (u) => (u === 'gw-trunk' ? 's3cret-pass' : undefined) }) });
  const edgePhone = await edge.phone();
  const edgeInvites: string[] = [];
  const edgeDialogs: SessionDialog[] = [];
  edge.ua.events.on('invite', (incoming) => {
    edgeInvites.push(incoming.request.headers.get('X-Call-Id') ?? '');
    incoming.progress(180);
    setTimeout(() => {
      const dialog = incoming.accept(edgePhone.answerOffer(incoming.offer));
      edgePhone.startSending(mulawTone(440, 1000));
      if (dialog) edgeDialogs.push(dialog);
    }, 100);
  });

  const credential = await gw.api('POST', '/v1/sip-credentials', { username: 'gw-trunk', password: 's3cret-pass' }, { key: gw.liveKey });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550101', 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'trunk-bot', connection_mode: 'sip_trunk', sip_uri: `sip:bot@127.0.0.1:${edge.port}`,
    sip_transport: 'udp', sip_credential_id: credential.body.id, did_number: '+15550101',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));

  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const ringing: number[] = [];
  const call = carrier.ua.invite({ target: `sip:+15550101@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770002@127.0.0.1', sdp: phone.offer });
  call.events.on('progress', (r) => ringing.push(r.status));
  const { answer } = await answered(call);
  t.ok(ringing.includes(180), "the agent's 180 reached the caller before the answer");
  t.equal(edgeInvites.length, 1, 'the edge answered the INVITE that carried the digest credential');
  const live = await inboundCall(gw, '+15550101');
  t.equal(edgeInvites[0], live.id, 'the INVITE names the call for the platform');
  phone.useAnswer(answer);
  phone.startSending(mulawTone(1000, 1000));
  await waitFor('edge audio at the caller', () => toneLevel(phone.audio(), 440) > 1000);
  await waitFor('caller audio at the edge', () => toneLevel(edgePhone.audio(), 1000) > 1000);
  t.pass('media flows both ways through the anchored bridge');

  const held = await gw.api('POST', `/v1/calls/${live.id}/hold`, undefined, { key: gw.liveKey });
  t.equal(held.body.on_hold, true);
  await gw.api('POST', `/v1/calls/${live.id}/unhold`, undefined, { key: gw.liveKey });

  // RFC 3264 8.4: the edge puts the gateway on hold with a re-INVITE; the gateway answers recvonly.
  const hold = createOffer({ address: '127.0.0.1', port: edgePhone.rtp.localPort, codecs: [CODECS.PCMU], sessionId: 7, sessionVersion: 2, direction: 'sendonly' });
  const reoffer = await edgeDialogs[0]!.reinvite(Buffer.from(hold));
  t.equal(reoffer.status, 200, 're-INVITE from the agent side is answered');
  t.match('body' in reoffer ? reoffer.body.toString('utf8') : '', /a=recvonly/, 'with recvonly to a sendonly offer');

  t.equal(await edgeDialogs[0]?.bye(), 200, 'the gateway answers the edge\'s BYE');
  const ended = await endedCall(gw, live.id);
  t.equal(ended.cdr?.hangup_by, 'agent', 'BYE from the agent edge ends the call');
});

t.test('sip_trunk: CANCEL from the caller before the agent answers is propagated', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  const edge = await startSipPhoneUa(t);
  const cancelled: string[] = [];
  edge.ua.events.on('invite', (incoming) => {
    incoming.progress(180);
    incoming.events.on('cancel', () => cancelled.push('cancel'));
  });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550102', 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'slow-bot', connection_mode: 'sip_trunk', sip_uri: `sip:bot@127.0.0.1:${edge.port}`, sip_transport: 'udp', did_number: '+15550102',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const call = carrier.ua.invite({ target: `sip:+15550102@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770003@127.0.0.1', sdp: phone.offer });
  await new Promise<void>((resolve) => call.events.on('progress', (r) => { if (r.status === 180) resolve(); }));
  call.cancel();
  const status = await answered(call).then(() => 0, (err: { status: number }) => err.status);
  t.equal(status, 487, 'the caller gets 487 Request Terminated');
  await waitFor('CANCEL at the edge', () => cancelled.length > 0);
  const live = await inboundCall(gw, '+15550102');
  const ended = await endedCall(gw, live.id);
  t.equal(ended.end_reason, 'canceled');
  t.equal(ended.cdr?.hangup_by, 'caller');
});

t.test('RFC 3960: the agent edge\'s early media (183 with SDP) reaches the caller before the answer', async (t) => {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  const edge = await startSipPhoneUa(t);
  const edgePhone = await edge.phone();
  edge.ua.events.on('invite', (incoming) => {
    const sdp = edgePhone.answerOffer(incoming.offer);
    incoming.progress(183, sdp);
    edgePhone.startSending(mulawTone(440, 1000));
    setTimeout(() => incoming.accept(sdp), 3000);
  });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550103', 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'early-bot', connection_mode: 'sip_trunk', sip_uri: `sip:bot@127.0.0.1:${edge.port}`, sip_transport: 'udp', did_number: '+15550103',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  const carrier = await startSipPhoneUa(t);
  const phone = await carrier.phone();
  const call = carrier.ua.invite({ target: `sip:+15550103@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770004@127.0.0.1', sdp: phone.offer });
  let answeredYet = false;
  const early = new Promise<void>((resolve) => call.events.on('progress', (r) => {
    if (r.status === 183 && r.body.length > 0) {
      phone.useAnswer(r.body);
      resolve();
    }
  }));
  const done = answered(call).then((a) => { answeredYet = true; return a; });
  await early;
  await waitFor('early media at the caller', () => toneLevel(phone.audio(), 440) > 1000);
  t.equal(answeredYet, false, "the agent's early audio played while the call was still ringing");
  const { session } = await done;
  await session.bye();
});
