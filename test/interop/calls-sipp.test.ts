/**
 * Outbound calls end to end against sipp as the carrier's far end (docs/API.md "Calls" and docs/API.md "Agent WebSocket protocol"):
 * POST /v1/calls over HTTP, our SIP stack dialling sipp over loopback, sipp's `-rtp_echo` sending
 * the audio back, and a test agent on a real WebSocket. Neither the recording (paused on hold) nor
 * the agent (which gets no audio on hold) can show that the held far end hears silence; the RTP
 * tap of test/support/calls-sipp-rig.ts can.
 */
import t, { type Test } from 'tap';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { mulawTone, toneLevel } from '../support/audio-probe.js';
import { needPeer } from '../support/peers.js';
import {
  agentSays, byeAnswered, callState, gatewayRtpPort, peak, placeCall, requestsIn, rig, sippMessages, sleep,
} from '../support/calls-sipp-rig.js';

t.test('docs/API.md "Calls" and docs/API.md "Agent WebSocket protocol": a call to sipp -rtp_echo talks both ways, holds in silence both ways, resumes, and hangs up with a recording that leaves the hold out', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-tap.xml', { tap: true });
  const { gw, bot } = r;
  const tap = r.tap!;
  const placed = await placeCall(r, { record: true });
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  t.equal(placed.body.state, 'initiated');
  const id = placed.body.id;
  const active = await callState(gw, id, 'active');
  t.ok(active.answered_at, 'sipp answered with 200 OK');

  await bot.core.until(() => bot.events().includes('start'));
  const start = bot.core.jsonMessages().find((m) => m.event === 'start') as { start: { customParameters: Record<string, string>; mediaFormat: unknown } };
  t.match(start.start.customParameters, { call_id: id, call_control_id: placed.body.call_control_id, from: '+15550100', to: '+15550199', direction: 'outbound' }, 'docs/API.md "Agent WebSocket protocol": start names the call');
  t.same(start.start.mediaFormat, { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });

  const gwPort = await gatewayRtpPort(r, id);
  agentSays(bot, 1000, 1000);
  await waitFor('the far end hears the agent', () => toneLevel(tap.heardByFarEnd(gwPort), 1000) > 1000);
  t.pass('the far end heard the agent');
  await bot.core.until(() => toneLevel(bot.receivedAudio().subarray(-8000), 1000) > 1000);
  t.pass("the agent's tone came back through sipp's echo");
  await sleep(600); // let the rest of the tone play out and come back before hold

  const held = await gw.api('POST', `/v1/calls/${id}/hold`, undefined, { key: gw.liveKey });
  t.equal(held.status, 200, JSON.stringify(held.body));
  t.equal(held.body.on_hold, true);
  await bot.core.until(() => bot.events().includes('hold'));
  const heldFrom = tap.legs.get(gwPort)!.toFar.length;
  const mediaBefore = bot.events().filter((e) => e === 'media').length;
  const holdStarted = Date.now();
  agentSays(bot, 1000, 1500); // the agent talks on; the held far end must not hear it
  await sleep(2000);
  const heldAudio = tap.heardByFarEnd(gwPort, heldFrom);
  t.ok(heldAudio.length >= 160 * 25, `RTP kept flowing to the held far end (${heldAudio.length / 160} packets)`);
  t.ok(toneLevel(heldAudio, 1000) < 100 && peak(heldAudio) < 200, `the held far end hears silence (tone ${toneLevel(heldAudio, 1000).toFixed(0)}, peak ${peak(heldAudio)})`);
  t.equal(bot.events().filter((e) => e === 'media').length, mediaBefore, 'the agent hears nothing from the far end while held');
  const paused = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
  t.equal(paused.body.session?.recording?.paused, true, 'the recording is paused');

  const unheld = await gw.api('POST', `/v1/calls/${id}/unhold`, undefined, { key: gw.liveKey });
  const heldForMs = Date.now() - holdStarted;
  t.equal(unheld.body.on_hold, false);
  await bot.core.until(() => bot.events().includes('unhold'));
  const resumedFrom = tap.legs.get(gwPort)!.toFar.length;
  const heardBefore = bot.receivedAudio().length;
  agentSays(bot, 1000, 1000);
  await waitFor('the far end hears the agent again', () => toneLevel(tap.heardByFarEnd(gwPort, resumedFrom), 1000) > 1000);
  await bot.core.until(() => toneLevel(bot.receivedAudio().subarray(heardBefore), 1000) > 1000);
  t.pass('after unhold the far end hears the agent again, and the agent its echo');
  await sleep(500);

  const hung = await gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(hung.status, 200);
  t.equal(hung.body.state, 'ended');
  await bot.core.until(() => bot.core.closedWith !== undefined);
  t.pass('the agent socket is closed when the call ends');
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp saw the BYE and completed its call (${done.stderr.slice(0, 200)})`);
  t.equal(requestsIn(sippMessages(r.cwd), 'BYE').length, 1, "the BYE is in sipp's message log");

  const ended = await waitFor('recording attached', async () => {
    const d = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    return d.body.recording.available ? d.body : undefined;
  });
  t.match(ended.cdr, { end_reason: 'completed', hangup_by: 'api' });
  const recording = await fetch(`${gw.base}/v1/calls/${id}/recording`, { headers: { authorization: `Bearer ${gw.liveKey}` } });
  t.equal(recording.status, 200);
  const wav = Buffer.from(await recording.arrayBuffer());
  checkRecording(t, gw, id, wav, heldForMs, ended);
});

/** The WAV's own header against its length, and its duration against the call's and the hold's. */
function checkRecording(t: Test, gw: TestGateway, id: string, wav: Buffer, heldForMs: number, ended: ApiBody): void {
  t.equal(wav.toString('latin1', 0, 4), 'RIFF');
  t.equal(wav.readUInt16LE(22), 2, 'stereo');
  t.equal(wav.readUInt32LE(24), 8000, '8 kHz');
  t.equal(wav.readUInt16LE(34), 16, '16-bit');
  const dataBytes = wav.readUInt32LE(40);
  t.equal(dataBytes, wav.length - 44, 'the data size in the header matches the file');
  t.equal(wav.readUInt32LE(4), 36 + dataBytes, 'the RIFF size too');
  const recordedMs = (dataBytes / 32000) * 1000;
  const file = join(gw.dataDir, 'recordings', gw.tenantId, `${id}.wav`);
  t.equal(statSync(file).size, wav.length, 'the API serves the file in the data folder');
  const sidecar = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as { durationMs: number; finalized: boolean; pauses: { durationMs: number }[] };
  t.equal(sidecar.finalized, true);
  t.ok(Math.abs(sidecar.durationMs - recordedMs) < 50, `the sidecar's duration (${sidecar.durationMs} ms) is the file's (${recordedMs} ms)`);
  t.equal(sidecar.pauses.length, 1, 'one pause, for the hold');
  const pauseMs = sidecar.pauses[0]?.durationMs ?? 0;
  t.ok(Math.abs(pauseMs - heldForMs) < 1000, `the pause (${pauseMs} ms) spans the hold (${heldForMs} ms seen from here)`);
  const callMs = Date.parse(String(ended.ended_at)) - Date.parse(String(ended.answered_at));
  t.ok(recordedMs < callMs - 1500, `the recording (${recordedMs} ms) leaves the hold out of the call (${callMs} ms)`);
  t.ok(Math.abs(recordedMs + pauseMs - callMs) < 1500, 'recording plus pause make up the answered call');
}

t.test('RFC 3261 15.1.2: the callee hangs up with BYE: ended completed by the callee, the agent released', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-bye.xml');
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  await r.bot.core.until(() => r.bot.events().includes('start'));
  const ended = await callState(r.gw, placed.body.id, 'ended');
  t.equal(ended.end_reason, 'completed');
  t.equal(ended.sip_status, null);
  t.equal(ended.cdr?.hangup_by, 'callee');
  t.ok(ended.answered_at, 'answered before the BYE');
  await r.bot.core.until(() => r.bot.core.closedWith !== undefined);
  t.pass("the agent's socket is closed");
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp got 200 for its BYE (${done.stderr.slice(0, 200)})`);
});

t.test('docs/API.md "Calls": 486 from the callee ends the attempt busy, and no agent is connected', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-486.xml');
  const placed = await placeCall(r);
  const ended = await callState(r.gw, placed.body.id, 'ended');
  t.equal(ended.end_reason, 'busy');
  t.equal(ended.sip_status, 486);
  t.equal(ended.answered_at, null);
  t.equal(ended.cdr?.billable_s, 0);
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp got the ACK for its 486 (${done.stderr.slice(0, 200)})`);
  t.equal(r.bot.core.http.length, 0, 'the agent was never dialled');
});

t.test('docs/API.md "Calls": blind transfer dials the target at the carrier and bridges the far end to it', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-tap.xml', { tap: true, calls: 2 });
  const { gw, bot } = r;
  const tap = r.tap!;
  const placed = await placeCall(r);
  await callState(gw, placed.body.id, 'active');
  await bot.core.until(() => bot.events().includes('start'));
  const farLeg = await gatewayRtpPort(r, placed.body.id);

  const transferred = await gw.api('POST', '/v1/calls/transfer', { call_control_id: placed.body.call_control_id, to: '+15550142' }, { key: gw.liveKey });
  t.equal(transferred.status, 200, JSON.stringify(transferred.body));
  t.match(transferred.body.transfer, { to: '+15550142', state: 'dialing' });
  const connected = await waitFor('transfer connected', async () => {
    const d = await gw.api('GET', `/v1/calls/${placed.body.id}`, undefined, { key: gw.liveKey });
    return d.body.transfer?.state === 'connected' ? d.body : undefined;
  });
  t.equal(connected.state, 'active');
  t.same(requestsIn(sippMessages(r.cwd), 'INVITE').map((uri) => /^sip:([^@]+)@/.exec(uri)?.[1]), ['+15550199', '+15550142'], 'the second INVITE names the target in its Request-URI');
  await bot.core.until(() => bot.core.closedWith !== undefined);
  t.pass('the agent socket is closed once the target answered');

  // The far end speaks (the relay plays a tone as the far end instead of relaying its echo): the
  // bridge takes it to the target (sipp's echo), whose echo comes back through the bridge.
  const farHeardFrom = tap.legs.get(farLeg)!.toFar.length;
  const speaking = tap.inject(farLeg, mulawTone(1000, 1500));
  const targetLeg = await waitFor('RTP on the target leg', () => [...tap.legs.keys()].find((p) => p !== farLeg));
  await speaking;
  await sleep(300);
  t.ok(toneLevel(tap.heardByFarEnd(targetLeg), 1000) > 1000, "the target heard the far end's tone through the bridge");
  t.ok(toneLevel(tap.heardByFarEnd(farLeg, farHeardFrom), 1000) > 1000, "the far end heard the target's echo of it through the bridge");

  const hung = await gw.api('POST', `/v1/calls/${placed.body.id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(hung.body.state, 'ended');
  const done = await r.sipp.done;
  t.equal(done.code, 0, `both legs ended with BYE (${done.stderr.slice(0, 200)})`);
  t.equal(requestsIn(sippMessages(r.cwd), 'BYE').length, 2, 'sipp received a BYE on each leg');
});

t.test('docs/API.md "Calls": the same Idempotency-Key twice places one call at the carrier', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'uas');
  const headers = { 'idempotency-key': 'place-once-1' };
  const first = await placeCall(r, {}, headers);
  const second = await placeCall(r, {}, headers);
  t.equal(first.status, 200);
  t.equal(second.status, 200);
  t.equal(second.body.id, first.body.id, 'the second answer is the first');
  await callState(r.gw, first.body.id, 'active');
  const list = await r.gw.api('GET', '/v1/calls', undefined, { key: r.gw.liveKey });
  t.equal(list.body.data.length, 1, 'one live call');
  await r.gw.api('POST', `/v1/calls/${first.body.id}/hangup`, undefined, { key: r.gw.liveKey });
  await byeAnswered(r);
  t.equal(requestsIn(sippMessages(r.cwd), 'INVITE').length, 1, 'sipp saw one INVITE');
});

t.test('docs/API.md "Authentication": another tenant gets 404 for every command on the call, and the call goes on', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'uas');
  const { gw } = r;
  const placed = await placeCall(r, { record: true });
  await callState(gw, placed.body.id, 'active');
  const other = await gw.gateway.store.tenants.create('intruder');
  const key = (await gw.gateway.store.apiKeys.create(other.id, 'live')).apiKey;
  const id = placed.body.id;
  const transfer = (controlId: string): unknown => ({ call_control_id: controlId, to: '+15550142' });
  // Each request with this call's id, and the same with an id that does not exist.
  const attempts: [string, string, unknown, string, unknown][] = [
    ...['', '/hold', '/unhold', '/hangup', '/recording', '/transcript'].map((tail): [string, string, unknown, string, unknown] => {
      const method = tail === '' || tail === '/recording' || tail === '/transcript' ? 'GET' : 'POST';
      return [method, `/v1/calls/${id}${tail}`, undefined, `/v1/calls/call_never${tail}`, undefined];
    }),
    ['POST', '/v1/calls/transfer', transfer(placed.body.call_control_id), '/v1/calls/transfer', transfer('v1:never')],
  ];
  for (const [method, path, body, missingPath, missingBody] of attempts) {
    const res = await gw.api(method, path, body, { key });
    const missing = await gw.api(method, missingPath, missingBody, { key });
    t.equal(res.status, 404, `${method} ${path}`);
    t.same({ code: res.body.code, detail: res.body.detail }, { code: missing.body.code, detail: missing.body.detail }, 'the same answer as for one that does not exist');
  }
  const list = await gw.api('GET', '/v1/calls', undefined, { key });
  t.equal(list.body.data.length, 0, "the intruder's list is empty");
  const still = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
  t.match(still.body, { state: 'active', on_hold: false, transfer: null }, 'nothing the intruder sent touched the call');
  const hung = await gw.api('POST', `/v1/calls/${id}/hangup`, undefined, { key: gw.liveKey });
  t.equal(hung.body.state, 'ended', 'the owner still can');
  await byeAnswered(r);
});

t.test('RFC 3262 5 and RFC 6337 3.1: the far end answers in a reliable 183 and sends its 200 without SDP: the call is up and audio flows', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-100rel-answer.xml');
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  // Bounded (20 s): without the 183's answer the call would end at the 200 instead.
  const active = await callState(r.gw, placed.body.id, 'active');
  t.ok(active.answered_at, 'answered by the 200 without SDP');
  await r.bot.core.until(() => r.bot.events().includes('start'));
  agentSays(r.bot, 1000, 800);
  // sipp echoes what the gateway sends to the address of the 183's answer: the tone comes back.
  await r.bot.core.until(() => toneLevel(r.bot.receivedAudio(), 1000) > 1000);
  t.pass(`the agent hears its tone echoed (level ${toneLevel(r.bot.receivedAudio(), 1000).toFixed(0)})`);
  const ended = await callState(r.gw, placed.body.id, 'ended');
  t.match(ended.cdr, { end_reason: 'completed', hangup_by: 'callee' }, 'up until the far end hung up');
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp: PRACK, ACK and 200 for its BYE (${done.stderr.slice(0, 200)})`);
});

t.test('RFC 3261 8.1.3.4: a 302 from the carrier is followed through the carrier, best Contact first, the next after a failure, and answered there', async (t) => {
  if (!needPeer(t, 'sipp')) return;
  const r = await rig(t, 'calls-uas-302.xml', { calls: 3 });
  const placed = await placeCall(r);
  t.equal(placed.status, 200, JSON.stringify(placed.body));
  const active = await callState(r.gw, placed.body.id, 'active');
  t.ok(active.answered_at, 'answered after the redirect');
  const ended = await callState(r.gw, placed.body.id, 'ended');
  t.match(ended.cdr, { end_reason: 'completed', hangup_by: 'callee' });
  const done = await r.sipp.done;
  t.equal(done.code, 0, `sipp: 302 and 404 ACKed, the third INVITE answered, its BYE answered (${done.stderr.slice(0, 200)})`);
  const uris = requestsIn(sippMessages(r.cwd), 'INVITE');
  t.equal(uris.length, 3, 'three INVITEs reached the carrier');
  t.match(uris[1], /^sip:\+15550124@127\.0\.0\.1:\d+/, "the second to the 302's Contact with the highest q");
  t.match(uris[2], /^sip:\+15550123@127\.0\.0\.1:\d+/, 'the third, after its 404, to the other Contact');
});
