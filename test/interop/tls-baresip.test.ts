/**
 * Real-peer SIP over TLS (RFC 3261 26.2) carrying SDES keys for SRTP (RFC 4568 8.3 wants them on
 * secured signalling): baresip calls the gateway's TLS listener, the gateway calls baresip's,
 * checking its certificate against `sip.tls.ca_file`, and a certificate it cannot trust stops
 * the call before any INVITE is sent. Speech is checked by cross-correlation, as in
 * srtp-baresip.test.ts.
 */
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { correlationPeak, samples8k } from '../support/audio-probe.js';
import { startBaresip } from '../support/baresip-peer.js';
import { callState } from '../support/calls-sipp-rig.js';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { routeDidToFakeAgent, startTestGateway, waitFor } from '../support/gateway-harness.js';
import { needPeer, tempWorkdir } from '../support/peers.js';
import { activeInboundCall, CORRELATION_PASS, linear, mulaw, remoteLeg, selfSigned, silenceWav, speech, startPhone } from '../support/secure-call.js';

t.test('RFC 3261 26.2 + RFC 4568 8.3: baresip calls over TLS with SRTP, the keys never in the clear, and the agent hears it', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox', 'openssl')) return;
  const dir = tempWorkdir(t, 'vgw-srtp-');
  const words = speech(dir, 2, 2);
  const { cert, key } = selfSigned(dir, 'gateway');
  const gw = await startTestGateway(t, {
    yaml: `calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  record_inbound: false\nsip:\n  tls:\n    port: 0\n    cert_file: ${cert}\n    key_file: ${key}`,
    carriers: `carriers:\n  - name: secure\n    media_encryption: required\n    inbound:\n      sources: ['127.0.0.1']\n`,
  });
  // The caller-ID policy `owned` (docs/API.md "Caller IDs"): the tenant holds the number it calls from.
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'secure');
  t.notOk(gw.logs.some((l) => /cross the network readable/.test(String(l.msg))), 'with a TLS listener, the start has no exposure to warn of');
  const tlsPort = gw.gateway.sip.tlsPort;
  t.type(tlsPort, 'number', 'the gateway listens for SIP over TLS');
  const { bot } = await routeDidToFakeAgent(t, gw, { did: '+15550103', carrier: 'secure', externalAgentId: 'listener' });
  const caller = await startPhone(t, dir, 'caller', words.wav, false, 38000 + 200 * Math.floor(Math.random() * 4));
  await caller.command('dial', `sip:+15550103@127.0.0.1:${String(tlsPort)};transport=tls`);
  await caller.waitFor(/established/i, 15_000);
  t.match(gw.logs.find((l) => l.msg === 'inbound call'), { transport: 'TLS' }, 'the INVITE came over TLS');
  const live = await activeInboundCall(gw, '+15550103');
  t.equal(remoteLeg(live).srtp, 'AES_CM_128_HMAC_SHA1_80', 'the call runs SRTP');
  await caller.waitFor(/terminated|closed/i, 30_000);
  await caller.stop();
  const heard = correlationPeak(words.samples, linear(bot.receivedAudio()));
  t.ok(heard.peak >= CORRELATION_PASS, `the agent heard the caller's words (peak ${heard.peak.toFixed(3)}, pass ${CORRELATION_PASS})`);
});

t.test('RFC 3261 26.2 + RFC 4568 8.3: an outbound call over TLS with SRTP to baresip, its certificate checked, speech both ways', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox', 'openssl')) return;
  const dir = tempWorkdir(t, 'vgw-srtp-');
  const words = speech(dir, 2, 4);
  const ours = selfSigned(dir, 'gateway');
  const theirs = selfSigned(dir, 'phone');
  const phonePem = join(dir, 'phone.pem');
  writeFileSync(phonePem, Buffer.concat([readFileSync(theirs.cert), readFileSync(theirs.key)]));
  const rtpBase = 39000 + 200 * Math.floor(Math.random() * 4);
  const phoneDir = join(dir, 'callee');
  mkdirSync(phoneDir);
  const phone = await startBaresip(t, {
    dir: phoneDir, sourceWav: words.wav, user: '+15550199', autoAnswer: true, rtpPorts: `${rtpBase}-${rtpBase + 99}`,
    mediaenc: 'srtp-mand', tlsCertificate: phonePem,
  });
  const gw = await startTestGateway(t, {
    yaml: `calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\nsip:\n  tls:\n    port: 0\n    cert_file: ${ours.cert}\n    key_file: ${ours.key}\n    ca_file: ${theirs.cert}`,
    carriers: `carriers:\n  - name: secure\n    media_encryption: required\n    outbound:\n      uri: "sip:127.0.0.1:${phone.sipPort + 1};transport=tls"\n    options_ping_s: 0\n`,
  });
  // The caller-ID policy `owned` (docs/API.md "Caller IDs"): the tenant holds the number it calls from.
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'secure');
  t.notOk(gw.logs.some((l) => /cross the network readable/.test(String(l.msg))), 'a transport=tls carrier URI exposes no keys');
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'secure', agent_ws_url: bot.url }, { key: gw.liveKey });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const live = await callState(gw, String(placed.body.id), 'active');
  t.equal(remoteLeg(live).srtp, 'AES_CM_128_HMAC_SHA1_80', 'the carrier leg runs SRTP');
  await waitFor('the agent stream', () => bot.streamSid());
  const said = mulaw(words.samples);
  for (let i = 0; i + 160 <= said.length; i += 160) bot.sendAudio(said.subarray(i, i + 160));
  await phone.waitFor(/terminated|closed/i, 30_000);
  await callState(gw, String(placed.body.id), 'ended');
  await phone.stop();
  const heardByAgent = correlationPeak(words.samples, linear(bot.receivedAudio()));
  t.ok(heardByAgent.peak >= CORRELATION_PASS, `the agent heard baresip (peak ${heardByAgent.peak.toFixed(3)}, pass ${CORRELATION_PASS})`);
  const heardByPhone = correlationPeak(words.samples, samples8k(phone.recording()));
  t.ok(heardByPhone.peak >= CORRELATION_PASS, `baresip heard the agent (peak ${heardByPhone.peak.toFixed(3)}, pass ${CORRELATION_PASS})`);
});

t.test('RFC 5922 7.2: a carrier whose TLS certificate the gateway cannot trust is never dialled in the clear', async (t) => {
  if (!needPeer(t, 'baresip', 'sox', 'openssl')) return;
  const dir = tempWorkdir(t, 'vgw-srtp-');
  const ours = selfSigned(dir, 'gateway');
  const theirs = selfSigned(dir, 'phone');
  const phonePem = join(dir, 'phone.pem');
  writeFileSync(phonePem, Buffer.concat([readFileSync(theirs.cert), readFileSync(theirs.key)]));
  const silence = silenceWav(dir, 30);
  const phoneDir = join(dir, 'callee');
  mkdirSync(phoneDir);
  const rtpBase = 39000 + 200 * Math.floor(Math.random() * 4) + 100;
  const phone = await startBaresip(t, {
    dir: phoneDir, sourceWav: silence, user: '+15550199', autoAnswer: true, rtpPorts: `${rtpBase}-${rtpBase + 99}`, tlsCertificate: phonePem,
  });
  // No ca_file: the phone's self-signed certificate chains to none of the system's roots.
  const gw = await startTestGateway(t, {
    yaml: `calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\nsip:\n  tls:\n    port: 0\n    cert_file: ${ours.cert}\n    key_file: ${ours.key}`,
    carriers: `carriers:\n  - name: secure\n    outbound:\n      uri: "sip:127.0.0.1:${phone.sipPort + 1};transport=tls"\n    options_ping_s: 0\n`,
  });
  // The caller-ID policy `owned` (docs/API.md "Caller IDs"): the tenant holds the number it calls from.
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550100', 'secure');
  const bot = await FakeCustomAgent.start();
  t.teardown(() => bot.core.close());
  const placed = await gw.api('POST', '/v1/calls', { from: '+15550100', to: '+15550199', carrier: 'secure', agent_ws_url: bot.url }, { key: gw.liveKey });
  const ended = await callState(gw, String(placed.body.id), 'ended');
  t.match(ended, { answered_at: null, end_reason: 'carrier_unreachable' }, 'the handshake failed, so the carrier counts as unreachable');
  t.match(gw.logs.find((l) => l.msg === 'carrier unreachable'), { reason: /TLS connect failed: self-signed certificate/ }, 'and the log says why');
  t.notMatch(phone.output(), /Incoming call|Call established/i, 'and baresip never saw an INVITE');
  await phone.stop();
});

t.test('RFC 3261 26.2: without sip.tls a TLS carrier stops the start; a TLS agent edge is unreachable, and the log says why', async (t) => {
  await t.rejects(startTestGateway(t, {
    carriers: 'carriers:\n  - name: secure\n    outbound:\n      uri: "sip:127.0.0.1:5999;transport=tls"\n',
  }), { name: 'ConfigError', message: /carrier "secure": outbound\.uri .* uses TLS, which needs sip\.tls/ });
  if (!needPeer(t, 'baresip', 'sox')) return;
  const dir = tempWorkdir(t, 'vgw-tls-');
  // Two port pairs only: the caller's leg and the agent's. A failed agent leg that kept its pair
  // would leave the second call no ports, and it would fail for that instead.
  const min = 30000 + 4 * Math.floor(Math.random() * 2400);
  const gw = await startTestGateway(t, { yaml: 'calls:\n  allow_private_sip_targets: true', carriers: "carriers:\n  - name: plain\n    inbound:\n      sources: ['127.0.0.1']\n", rtp: { min, max: min + 3 } });
  t.equal(gw.gateway.sip.tlsPort, null, 'no TLS listener');
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550104', 'plain');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'tls-edge', connection_mode: 'sip_trunk', sip_uri: 'sip:bot@127.0.0.1:5999;transport=tls', sip_transport: 'tls', did_number: '+15550104',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  const callerDir = join(dir, 'caller');
  mkdirSync(callerDir);
  const rtpBase = 38000 + 200 * Math.floor(Math.random() * 4) + 100;
  const caller = await startBaresip(t, { dir: callerDir, sourceWav: silenceWav(dir, 10), user: '+15557770004', autoAnswer: false, rtpPorts: `${rtpBase}-${rtpBase + 99}` });
  for (const attempt of [1, 2]) {
    await caller.command('dial', `sip:+15550104@127.0.0.1:${gw.gateway.sip.udpPort}`);
    const reports = await waitFor(`call ${attempt} logged`, () => {
      const found = gw.logs.filter((l) => l.msg === 'sip_trunk agent unreachable');
      return found.length >= attempt ? found : undefined;
    });
    t.match(reports[attempt - 1], { reason: /no TLS listening point/ }, `call ${attempt}: the log names the missing transport`);
  }
  await caller.stop();
  const ended = await gw.api('GET', '/v1/calls?direction=inbound&state=ended', undefined, { key: gw.liveKey });
  t.same(ended.body.data.map((c) => c.end_reason), ['agent_unreachable', 'agent_unreachable'], 'both calls reached the edge attempt: the first gave its ports back');
});
