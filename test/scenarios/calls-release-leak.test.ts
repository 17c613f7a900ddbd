/**
 * docs/ARCHITECTURE.md "Media ownership": releasing a call frees everything it allocated. 1,000
 * inbound media_bridge calls (a carrier of our own SIP user agent and RTP phones on loopback,
 * an ElevenLabs agent whose 16 kHz input and 24 kHz output make every call allocate a WebRTC VAD
 * detector and two Speex resamplers in WASM) end by the caller's BYE or the API's hang-up; then
 * the WASM instance counts and memory, the media sockets and the process's handles are where
 * they were before the first call. The RTP range holds 40 sessions, so a call that kept its
 * ports would soon leave the next ones none (503).
 */
import t from 'tap';

// 1,000 calls take minutes on a shared machine: longer than the suite's per-file time-out.
t.setTimeout(900_000);
import { nativeMediaIo } from '../../src/engine/media/rtp/native-udp.js';
import { resamplerWasmUsage, vadWasmUsage } from '../../src/engine/media/index.js';
import { FakeElevenLabs } from '../support/fake-agent-servers/elevenlabs-server.js';
import { json } from '../support/fake-agent-servers/fake-ws-server.js';
import { routeDidToFakeAgent, startTestGateway, waitFor } from '../support/gateway-harness.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';
import { sqliteOf } from '../support/sqlite-of.js';

const CALLS = Number(process.env.VGW_LEAK_CALLS ?? 1000);
/** Calls at once: one to the ElevenLabs agent, the others each to a custom agent of its own (a fake serves one socket). */
const CONCURRENT = 20;
const API_KEY = 'test-key-0123456789';
const CARRIERS = "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n";

/** Handles of the process by kind (sockets, timers, servers), as a sorted list of "kind: count". */
function handlesByKind(): string[] {
  const counts = new Map<string, number>();
  const active = (process as unknown as { _getActiveHandles(): object[] })._getActiveHandles();
  for (const handle of active) counts.set(handle.constructor.name, (counts.get(handle.constructor.name) ?? 0) + 1);
  return [...counts].map(([kind, n]) => `${kind}: ${n}`).sort();
}

/** Everything a call allocates that outlives a careless release. */
function footprint(): Record<string, unknown> {
  const vad = vadWasmUsage();
  const resampling = resamplerWasmUsage();
  return {
    vadDetectors: vad.detectors, vadMemoryBytes: vad.memoryBytes,
    resamplers: resampling.resamplers, resamplerMemoryBytes: resampling.memoryBytes,
    mediaSockets: nativeMediaIo()?.openSockets ?? null,
    handles: handlesByKind(),
  };
}

/** The footprint once it held still for 5 s (at most 60 s of waiting). */
async function settledFootprint(): Promise<Record<string, unknown>> {
  let last = JSON.stringify(footprint());
  for (let waited = 0; waited < 60_000; waited += 5000) {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const now = JSON.stringify(footprint());
    if (now === last) break;
    last = now;
  }
  return JSON.parse(last) as Record<string, unknown>;
}

t.test(`${CALLS} released calls leave WASM memory, media sockets and handles where they started`, { timeout: 900_000 }, async (t) => {
  const fake = await FakeElevenLabs.start({ apiKey: API_KEY, userInputAudioFormat: 'pcm_16000', agentOutputAudioFormat: 'pcm_24000' });
  t.teardown(() => fake.core.close());
  fake.core.route((req, res) => {
    if (req.method !== 'GET' || req.path !== `/v1/convai/agents/${fake.externalAgentId}`) return false;
    return json(res, 200, { agent_id: fake.externalAgentId, name: 'Front desk', conversation_config: {}, metadata: {} });
  });
  const port = new URL(fake.url).port;
  const rtpMin = 30000 + 2 * Math.floor(Math.random() * 4900);
  const gw = await startTestGateway(t, {
    carriers: CARRIERS, logLevel: 'info', rtp: { min: rtpMin, max: rtpMin + 79 },
    yaml: `calls:\n  allow_private_agent_urls: true\nproviders:\n  elevenlabs:\n    api_base_url: http://127.0.0.1:${port}\n    ws_base_url: ws://127.0.0.1:${port}`,
  });
  const did = '+15550110';
  await gw.gateway.store.numbers.add(gw.tenantId, did, 'trunk');
  const imported = await gw.api('POST', '/v1/agents/import', { provider: 'elevenlabs', external_agent_id: fake.externalAgentId, connection_mode: 'media_bridge', api_key: API_KEY, did_number: did }, { key: gw.liveKey });
  t.equal(imported.status, 200, JSON.stringify(imported.body));
  const customDids = Array.from({ length: CONCURRENT - 1 }, (_, i) => `+1555012${String(i).padStart(4, '0')}`);
  for (const [i, customDid] of customDids.entries()) await routeDidToFakeAgent(t, gw, { did: customDid, carrier: 'trunk', externalAgentId: `desk-${i}` });
  const didOf = (slot: number): string => (slot === 0 ? did : customDids[slot - 1]!);
  const carrier = await startSipPhoneUa(t);

  /** One batch of calls: all answered and joined to the agent (its WASM allocated), then all ended. */
  const batch = async (size: number, first: number): Promise<void> => {
    const vadBefore = vadWasmUsage().detectors;
    const calls = await Promise.all(Array.from({ length: size }, async (_, i) => {
      const phone = await carrier.phone();
      const call = carrier.ua.invite({ target: `sip:${didOf(i)}@127.0.0.1:${gw.gateway.sip.udpPort}`, from: `sip:+1555777${String(first + i).padStart(4, '0')}@127.0.0.1`, sdp: phone.offer });
      const { session, answer } = await answered(call);
      phone.useAnswer(answer);
      return { phone, session, sipCallId: call.callId };
    }));
    await waitFor(`the agent legs of calls ${first}..${first + size - 1} attached`, () => vadWasmUsage().detectors >= vadBefore + size, 60_000);
    await Promise.all(calls.map(async ({ phone, session }, i) => {
      // Both normal ends: the remote party's BYE, and every fourth call the API's hang-up.
      if ((first + i) % 4 === 3) {
        const live = await gw.api('GET', `/v1/calls?direction=inbound&state=active&limit=100`, undefined, { key: gw.liveKey });
        const mine = live.body.data.find((c) => c.from === `+1555777${String(first + i).padStart(4, '0')}`);
        if (mine) await gw.api('POST', `/v1/calls/${mine.id}/hangup`, undefined, { key: gw.liveKey });
        else await session.bye();
      } else {
        await session.bye();
      }
      phone.close();
    }));
    await waitFor(`calls ${first}..${first + size - 1} released`, () => vadWasmUsage().detectors === vadBefore, 30_000).catch(() => {
      throw new Error(`calls ${first}..${first + size - 1} ended, yet ${vadWasmUsage().detectors - vadBefore} of their VAD detectors are still allocated in WASM`);
    });
  };

  // One full batch first: the WASM modules load and the process's lasting handles open.
  await batch(CONCURRENT, 0);
  // Idle keep-alive connections of that batch close within seconds: the baseline is what stays.
  const before = await settledFootprint();
  t.ok((before.vadMemoryBytes as number) > 0 && (before.resamplerMemoryBytes as number) > 0, 'the call used both WASM modules');
  for (let done = CONCURRENT; done < CALLS; done += CONCURRENT) await batch(Math.min(CONCURRENT, CALLS - done), done);
  const live = await waitFor('no live call', async () => {
    const r = await gw.api('GET', '/v1/calls?state=active', undefined, { key: gw.liveKey });
    return r.body.data.length === 0 ? r.body : undefined;
  });
  t.ok(live, 'every call ended');
  // Sockets close and timers fire a little after the last call's end.
  const after = await settledFootprint();
  t.same(after, before, 'WASM instance counts and memory, media sockets and handles as before the calls');
  const ended = sqliteOf(gw.gateway.store).prepare("SELECT COUNT(*) AS n FROM calls WHERE state = 'ended'").pluck().get() as number;
  t.equal(ended, CALLS, `all ${CALLS} calls ended and were recorded`);
});
