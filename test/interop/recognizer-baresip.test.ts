/**
 * Real-peer transcription: baresip calls a DID routed to a media_bridge `custom` agent and plays
 * a flite "hello world" WAV as its microphone, then hangs up when the file ends. With
 * `transcription.engine: pocketsphinx`, the gateway's own recognizer hears the caller, and after
 * the hang-up `GET /v1/calls/{id}/transcript` holds a caller turn with those words (docs/API.md
 * "Calls": transcription).
 */
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { startBaresip, type BaresipPeer } from '../support/baresip-peer.js';
import { routeDidToFakeAgent, startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { needPeer, tempWorkdir } from '../support/peers.js';

const CARRIERS = `carriers:
  - name: trunk
    inbound:
      sources: ['127.0.0.1']
`;
const YAML = [
  'calls:\n  allow_private_agent_urls: true\n  allow_private_sip_targets: true\n  record_inbound: false',
  'transcription:\n  engine: pocketsphinx\n  channels: [caller, agent]',
].join('\n');

interface Transcript {
  call_id: string;
  source: string;
  turns: { role: string; text: string; offset_s: number }[];
}

/** The gateway with transcription on, a media_bridge agent on +15550100, and baresip calling it with `played` as its microphone. */
async function callWithSpeech(t: Test, dir: string, played: string): Promise<{ gw: TestGateway; caller: BaresipPeer }> {
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  await routeDidToFakeAgent(t, gw, { did: '+15550100', carrier: 'trunk', externalAgentId: 'listener' });
  const phoneDir = join(dir, 'caller');
  mkdirSync(phoneDir);
  const rtpBase = 32000 + 200 * Math.floor(Math.random() * 4);
  const caller = await startBaresip(t, {
    dir: phoneDir, sourceWav: played, user: '+15557770001', autoAnswer: false,
    rtpPorts: `${rtpBase}-${rtpBase + 99}`,
  });
  await caller.command('dial', `sip:+15550100@127.0.0.1:${gw.gateway.sip.udpPort}`);
  await caller.waitFor(/established/i, 15_000);
  return { gw, caller };
}

/** flite's words as an 8 kHz WAV with `before` seconds of silence ahead and a second after. */
function speechWav(dir: string, text: string, before: number): string {
  execFileSync('flite', ['-t', text, '-o', join(dir, 'flite.wav')]);
  const played = join(dir, 'played.wav');
  execFileSync('sox', [join(dir, 'flite.wav'), '-r', '8000', '-c', '1', '-b', '16', played, 'pad', String(before), '1']);
  return played;
}

async function inboundCall(gw: TestGateway, state: string): Promise<ApiBody> {
  return waitFor(`the inbound call (${state})`, async () => {
    const r = await gw.api('GET', `/v1/calls?direction=inbound&state=${state}`, undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.to === '+15550100');
  });
}

t.test('docs/API.md "Calls", gateway transcript: pocketsphinx hears "hello" and "world" (case-insensitive) in a caller turn of a baresip call to a media_bridge agent', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox', 'pocketsphinx_continuous')) return;
  const dir = tempWorkdir(t, 'vgw-recognizer-');
  // Silence first, so the agent link is up (the media leg takes audio from then on) before the words; after, so the decoder's VAD sees them end.
  const { gw, caller } = await callWithSpeech(t, dir, speechWav(dir, 'hello world', 2));
  // baresip's aufile source ends the call when its file runs out.
  await caller.waitFor(/terminated|closed/i, 20_000);
  await caller.stop();
  const call = await inboundCall(gw, 'ended');
  // The recognizer finishes after the hang-up: the transcript appears once it has.
  const transcript = await waitFor('the gateway transcript', async () => {
    const r = await gw.api('GET', `/v1/calls/${call.id}/transcript`, undefined, { key: gw.liveKey });
    return r.status === 200 ? (r.body as unknown as Transcript) : undefined;
  }, 45_000).catch((err: Error) => {
    const related = gw.logs.filter((l) => /transcri|pocketsphinx|recogni/i.test(String(l.msg)) || l.role !== undefined);
    throw new Error(`${err.message}; gateway log:\n${related.map((l) => JSON.stringify(l)).join('\n')}`);
  });
  t.equal(transcript.source, 'gateway', 'the custom agent reported no transcript: the source is the gateway');
  const callerText = transcript.turns.filter((turn) => turn.role === 'caller').map((turn) => turn.text).join(' ');
  t.match(callerText, /hello/i, `a caller turn has "hello" (heard: ${JSON.stringify(transcript.turns)})`);
  t.match(callerText, /world/i, 'and "world"');
  const offsets = transcript.turns.map((turn) => turn.offset_s);
  t.same(offsets, [...offsets].sort((a, b) => a - b), 'turns are ordered by offset_s');
  const detail = await gw.api('GET', `/v1/calls/${call.id}`, undefined, { key: gw.liveKey });
  t.same(detail.body.transcript, { available: true, source: 'gateway' }, 'the call detail says a gateway transcript is available');
});

t.test('docs/API.md "Calls", hold pauses transcription: words the caller says while held are not transcribed', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox', 'pocketsphinx_continuous')) return;
  const dir = tempWorkdir(t, 'vgw-recognizer-');
  // Four seconds of silence leave time to hold the call before the words.
  const { gw, caller } = await callWithSpeech(t, dir, speechWav(dir, 'hello world', 4));
  const live = await inboundCall(gw, 'active');
  const held = await gw.api('POST', `/v1/calls/${live.id}/hold`, undefined, { key: gw.liveKey });
  t.equal(held.body.on_hold, true);
  const detail = await gw.api('GET', `/v1/calls/${live.id}`, undefined, { key: gw.liveKey });
  t.same(detail.body.session?.transcription, { engine: 'pocketsphinx', paused: true }, 'the session shows transcription paused');
  await caller.waitFor(/terminated|closed/i, 20_000);
  await caller.stop();
  await inboundCall(gw, 'ended');
  await waitFor('the recognizer to finish', () => gw.logs.some((l) => l.msg === 'gateway transcript done'), 30_000);
  const transcript = await gw.api('GET', `/v1/calls/${live.id}/transcript`, undefined, { key: gw.liveKey });
  t.equal(transcript.status, 404, `nothing was transcribed (${JSON.stringify(transcript.body)})`);
});

t.test('docs/API.md "Calls", gateway transcript on sip_trunk: the agent edge (baresip) says "hello world" and an agent turn has "hello" and "world" (case-insensitive)', async (t) => {
  if (!needPeer(t, 'baresip', 'flite', 'sox', 'pocketsphinx_continuous')) return;
  const dir = tempWorkdir(t, 'vgw-recognizer-');
  const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: YAML });
  const [edgeDir, callerDir] = [join(dir, 'edge'), join(dir, 'caller')];
  mkdirSync(edgeDir);
  mkdirSync(callerDir);
  const rtpBase = 33000 + 200 * Math.floor(Math.random() * 4);
  // The agent's SIP edge answers and speaks; it hangs up when its file ends.
  const edge = await startBaresip(t, {
    dir: edgeDir, sourceWav: speechWav(dir, 'hello world', 2), user: 'bot', autoAnswer: true,
    rtpPorts: `${rtpBase}-${rtpBase + 99}`,
  });
  const silence = join(dir, 'silence.wav');
  execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', silence, 'trim', '0', '60']);
  const caller = await startBaresip(t, {
    dir: callerDir, sourceWav: silence, user: '+15557770002', autoAnswer: false,
    rtpPorts: `${rtpBase + 100}-${rtpBase + 199}`,
  });
  await gw.gateway.store.numbers.add(gw.tenantId, '+15550101', 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', {
    provider: 'custom', external_agent_id: 'trunk-bot', connection_mode: 'sip_trunk', sip_uri: `sip:bot@127.0.0.1:${edge.sipPort}`, sip_transport: 'udp',
    did_number: '+15550101',
  }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  await caller.command('dial', `sip:+15550101@127.0.0.1:${gw.gateway.sip.udpPort}`);
  await caller.waitFor(/established/i, 15_000);
  await caller.waitFor(/terminated|closed/i, 30_000);
  await Promise.all([caller.stop(), edge.stop()]);
  const call = await waitFor('the inbound call', async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound&state=ended', undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.to === '+15550101');
  });
  const transcript = await waitFor('the gateway transcript', async () => {
    const r = await gw.api('GET', `/v1/calls/${call.id}/transcript`, undefined, { key: gw.liveKey });
    return r.status === 200 ? (r.body as unknown as Transcript) : undefined;
  }, 45_000);
  const agentText = transcript.turns.filter((turn) => turn.role === 'agent').map((turn) => turn.text).join(' ');
  t.match(agentText, /hello/i, `an agent turn has "hello" (heard: ${JSON.stringify(transcript.turns)})`);
  t.match(agentText, /world/i, 'and "world"');
});
