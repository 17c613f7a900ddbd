/**
 * Real-peer SRTP (RFC 3711 with SDES keys, RFC 4568): baresip with its srtp module, set to require
 * RTP/SAVP, is a carrier's far end of a carrier set to `media_encryption: required`. Speech must
 * cross the gateway both ways, decrypted and re-encrypted by it, checked by cross-correlation
 * against the words played. baresip's decoder dump is only written for audio it could decrypt and
 * authenticate, and the gateway passes on only packets it authenticated.
 */
import t, { type Test } from 'tap';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { correlationPeak, samples8k } from '../support/audio-probe.js';
import { startBaresip } from '../support/baresip-peer.js';
import { callState, sleep } from '../support/calls-sipp-rig.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { startTestGateway, waitFor, type TestGateway } from '../support/gateway-harness.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { activeInboundCall, CORRELATION_PASS, linear, mulaw, remoteLeg, silenceWav, speech, startPhone } from '../support/secure-call.js';

async function gatewayWith(t: Test, carrier: string): Promise<TestGateway> {
  return startTestGateway(t, { yaml: 'calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  record_inbound: false', carriers: `carriers:\n  - name: secure\n    media_encryption: required\n${carrier}` });
}

t.test('RFC 3711 + RFC 4568: an outbound call over an SRTP carrier to baresip carries speech both ways through the agent', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-srtp-');
  const words = speech(dir, 2, 4);
  const rtpBase = 34000 + 200 * Math.floor(Math.random() * 4);
  const phoneDir = join(dir, 'callee');
  mkdirSync(phoneDir);
  const phone = await startBaresip(t, {
    dir: phoneDir, sourceWav: words.wav, user: '+15550199', autoAnswer: true, rtpPorts: `${rtpBase}-${rtpBase + 99}`, mediaenc: 'srtp-mand',
  });
  const gw = await gatewayWith(t, `    outbound:\n      uri: "sip:127.0.0.1:${phone.sipPort};transport=udp"\n    codecs: [PCMU, telephone-event]\n    options_ping_s: 0\n`);
  // The caller-ID policy `owned` (docs/API.md "Caller IDs"): the tenant holds the number it calls from.
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'secure');
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'secure', agent_ws_url: bot.url }, { key: gw.liveKey });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const live = await callState(gw, String(placed.body.id), 'active');
  t.equal(remoteLeg(live).srtp, 'AES_CM_128_HMAC_SHA1_80', 'the carrier leg runs SRTP with the suite baresip offered back');
  await waitFor('the agent stream', () => bot.streamSid());
  // The agent says the words while baresip says them too: each side then hears the other's copy.
  const said = mulaw(words.samples);
  for (let i = 0; i + 160 <= said.length; i += 160) bot.sendAudio(said.subarray(i, i + 160));
  await waitFor('caller audio at the agent', () => bot.receivedAudio().length >= 16_000);
  const during = remoteLeg((await gw.api('GET', `/v1/calls/${String(placed.body.id)}`, undefined, { key: gw.liveKey })).body);
  t.ok(Number(during.packets_received) >= 100, `the gateway took baresip's SRTP (${String(during.packets_received)} packets)`);
  t.equal(during.packets_unauthenticated, 0, 'every one of them authenticated');
  // baresip (libre) sends an RTCP APP keep-alive in the clear before its SRTCP: dropped, and counted apart.
  t.type(during.rtcp_unauthenticated, 'number', 'RTCP that fails is counted apart');
  // baresip hangs up when its file (2 s + words + 4 s) ends.
  await phone.waitFor(/terminated|closed/i, 30_000);
  const ended = await callState(gw, String(placed.body.id), 'ended');
  await phone.stop();
  await sleep(100);

  const heardByAgent = correlationPeak(words.samples, linear(bot.receivedAudio()));
  t.ok(heardByAgent.peak >= CORRELATION_PASS, `the agent heard baresip's words through SRTP (peak ${heardByAgent.peak.toFixed(3)}, pass ${CORRELATION_PASS})`);
  const heardByPhone = correlationPeak(words.samples, samples8k(phone.recording()));
  t.ok(heardByPhone.peak >= CORRELATION_PASS, `baresip decrypted the agent's words (peak ${heardByPhone.peak.toFixed(3)}, pass ${CORRELATION_PASS})`);
  t.equal(ended.end_reason, 'completed', 'baresip hung up a call that had run');
});

t.test('RFC 3711 + RFC 4568: baresip calls a DID over an SRTP carrier; a plain-RTP sip_trunk agent edge hears the caller', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-srtp-');
  const words = speech(dir, 2, 2);
  const rtpBase = 35000 + 200 * Math.floor(Math.random() * 4);
  const gw = await gatewayWith(t, `    inbound:\n      sources: ['127.0.0.1']\n`);
  // The agent's SIP edge is plain RTP: the gateway decrypts the carrier leg and relays in the clear.
  const edgeDir = join(dir, 'edge');
  mkdirSync(edgeDir);
  const silence = silenceWav(dir, 60);
  const edge = await startBaresip(t, { dir: edgeDir, sourceWav: silence, user: 'bot', autoAnswer: true, rtpPorts: `${rtpBase + 100}-${rtpBase + 199}` });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'secure');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'edge', connection_mode: 'sip_trunk', sip_uri: `sip:bot@127.0.0.1:${edge.sipPort}`, sip_transport: 'udp', did_number: '+15550100',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  const caller = await startPhone(t, dir, 'caller', words.wav, false, rtpBase);
  await caller.command('dial', `sip:+15550100@127.0.0.1:${gw.gateway.sip.udpPort}`);
  await caller.waitFor(/established/i, 15_000);
  const live = await activeInboundCall(gw, '+15550100');
  t.equal(remoteLeg(live).srtp, 'AES_CM_128_HMAC_SHA1_80', 'the caller\'s leg was answered RTP/SAVP');
  await caller.waitFor(/terminated|closed/i, 30_000);
  await Promise.all([caller.stop(), edge.stop()]);
  const heard = correlationPeak(words.samples, samples8k(edge.recording()));
  t.ok(heard.peak >= CORRELATION_PASS, `the plain edge heard the caller's words (peak ${heard.peak.toFixed(3)}, pass ${CORRELATION_PASS})`);
});

t.test('RFC 3264 6: a carrier left at media_encryption disabled refuses baresip\'s SRTP-only offer with 488', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-srtp-');
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_sip_targets: true', carriers: `carriers:\n  - name: plain\n    inbound:\n      sources: ['127.0.0.1']\n` });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550101', 'plain');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'edge', connection_mode: 'sip_trunk', sip_uri: 'sip:bot@127.0.0.1:9', sip_transport: 'udp', did_number: '+15550101',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  const silence = silenceWav(dir, 5);
  const caller = await startPhone(t, dir, 'caller', silence, false, 36000 + 200 * Math.floor(Math.random() * 4));
  await caller.command('dial', `sip:+15550101@127.0.0.1:${gw.gateway.sip.udpPort}`);
  await caller.waitFor(/488 Not Acceptable Here/i, 15_000);
  await caller.stop();
  const refused = gw.logs.find((l) => l.msg === 'offer refused');
  t.match(refused, { sdp: 'no-audio', detail: /RTP\/SAVP is not accepted here \(RTP\/AVP only\)/ }, 'the log says why');
});

t.test('RFC 3711 + RFC 4568: providers.<name>.media_encryption puts SRTP on the sip_trunk leg; a plain caller reaches an edge that requires it', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-srtp-');
  const words = speech(dir, 2, 2);
  const rtpBase = 37000 + 200 * Math.floor(Math.random() * 4);
  const gw = await startTestGateway(t, {
    yaml: 'calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  record_inbound: false\nproviders:\n  custom:\n    media_encryption: required',
    carriers: `carriers:\n  - name: plain\n    inbound:\n      sources: ['127.0.0.1']\n`,
  });
  const silence = silenceWav(dir, 60);
  const edgeDir = join(dir, 'edge');
  mkdirSync(edgeDir);
  const edge = await startBaresip(t, {
    dir: edgeDir, sourceWav: silence, user: 'bot', autoAnswer: true, rtpPorts: `${rtpBase + 100}-${rtpBase + 199}`, mediaenc: 'srtp-mand',
  });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550102', 'plain');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'secure-edge', connection_mode: 'sip_trunk', sip_uri: `sip:bot@127.0.0.1:${edge.sipPort}`, sip_transport: 'udp', did_number: '+15550102',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  const callerDir = join(dir, 'caller');
  mkdirSync(callerDir);
  const caller = await startBaresip(t, { dir: callerDir, sourceWav: words.wav, user: '+15557770003', autoAnswer: false, rtpPorts: `${rtpBase}-${rtpBase + 99}` });
  await caller.command('dial', `sip:+15550102@127.0.0.1:${gw.gateway.sip.udpPort}`);
  await caller.waitFor(/established/i, 15_000);
  const live = await activeInboundCall(gw, '+15550102');
  const agentLeg = ((live.session as { agent?: { rtp?: Record<string, unknown> } } | null)?.agent?.rtp) ?? {};
  t.equal(agentLeg.srtp, 'AES_CM_128_HMAC_SHA1_80', 'the leg to the edge runs SRTP');
  t.equal(remoteLeg(live).srtp, null, 'the caller\'s leg stays plain RTP');
  t.ok(gw.logs.some((l) => /SRTP keys to this agent edge cross the network readable/.test(String(l.msg))), 'the call log says the keys went over UDP (RFC 4568 8.3)');
  await caller.waitFor(/terminated|closed/i, 30_000);
  await Promise.all([caller.stop(), edge.stop()]);
  const heard = correlationPeak(words.samples, samples8k(edge.recording()));
  t.ok(heard.peak >= CORRELATION_PASS, `the SRTP edge decrypted the caller's words (peak ${heard.peak.toFixed(3)}, pass ${CORRELATION_PASS})`);
});
