/**
 * Inbound media_bridge calls to each platform with a streaming adapter (docs/DECISIONS.md "Calls",
 * part b): a carrier phone on loopback calls a DID routed to an imported agent whose platform is
 * a fake server faithful to its documented protocol (ElevenLabs, OpenAI Realtime, Vapi, custom).
 * The caller's tone must reach the fake in the format the platform declared, the fake's tone must
 * reach the caller, the platform's barge-in must flush playout, and its transcript and
 * conversation id must be stored.
 */
import t, { type Test } from 'tap';
import { FakeCustomAgent } from '../support/fake-agent-servers/custom-agent-server.js';
import { FakeElevenLabs } from '../support/fake-agent-servers/elevenlabs-server.js';
import { json, type FakeAgentServer } from '../support/fake-agent-servers/fake-ws-server.js';
import { FakeOpenAiRealtime } from '../support/fake-agent-servers/openai-realtime-server.js';
import { FakeVapi } from '../support/fake-agent-servers/vapi-server.js';
import { mulawTone, toneLevel } from '../support/audio-probe.js';
import { startTestGateway, waitFor, type ApiBody, type TestGateway } from '../support/gateway-harness.js';
import { mulawPeak, pcm16Tone, pcm16ToneLevel } from '../support/inbound-pcm-audio.js';
import { answered, startSipPhoneUa } from '../support/sip-phone.js';

const CARRIERS = "carriers:\n  - name: trunk\n    inbound:\n      sources: ['127.0.0.1']\n";
const CALLS_YAML = 'calls:\n  allow_private_agent_urls: true\n  ring_timeout_seconds: 5';
const CALLER_HZ = 1000;
const AGENT_HZ = 440;
/** A µ-law packet of our 8000-amplitude tone peaks near 8000; comfort silence is 0. */
const SILENT_PEAK = 200;

interface Format {
  encoding: 'mulaw' | 'pcm16';
  rate: number;
}

/** One platform: its fake, how the gateway is pointed at it, and how its audio is framed. */
interface ProviderCase {
  provider: string;
  /** What the platform declares it takes from the caller, and what it sends. */
  input: Format;
  output: Format;
  /** Starts the fake; gives the gateway's `providers:` YAML and the import body. */
  start(): Promise<{ fake: FakeAgentServer; providersYaml: string; importBody: Record<string, unknown> }>;
  /** Checks that the format the session declared on the wire is `input`. */
  declared(t: Test, fake: FakeAgentServer): void;
  /** Sends `audio` as agent speech in the platform's framing (one turn). */
  speak(fake: FakeAgentServer, audio: Buffer): void;
  /** The protocol carries transcripts. */
  transcripts: boolean;
}

const API_KEY = 'test-key-0123456789';

/** YAML that points `provider`'s REST and WebSocket bases at a fake on `port`. */
function endpointsYaml(provider: string, port: string, ws: boolean): string {
  return `providers:\n  ${provider}:\n    api_base_url: http://127.0.0.1:${port}${ws ? `\n    ws_base_url: ws://127.0.0.1:${port}` : ''}`;
}

const portOf = (url: string): string => new URL(url).port;

/** Sends `audio` in 100 ms chunks through `send`. */
function inChunks(audio: Buffer, format: Format, send: (chunk: Buffer) => void): void {
  const bytes = ((format.encoding === 'mulaw' ? 1 : 2) * format.rate) / 10;
  for (let i = 0; i < audio.length; i += bytes) send(audio.subarray(i, i + bytes));
}

const CASES: ProviderCase[] = [
  {
    provider: 'elevenlabs',
    // The agent's own formats, announced in conversation_initiation_metadata; 16 kHz in and
    // 24 kHz out make the gateway resample both ways.
    input: { encoding: 'pcm16', rate: 16000 },
    output: { encoding: 'pcm16', rate: 24000 },
    async start() {
      const fake = await FakeElevenLabs.start({ apiKey: API_KEY, userInputAudioFormat: 'pcm_16000', agentOutputAudioFormat: 'pcm_24000' });
      // GET /v1/convai/agents/{agent_id} with xi-api-key: the import's verification.
      fake.core.route((req, res) => {
        if (req.method !== 'GET' || req.path !== `/v1/convai/agents/${fake.externalAgentId}`) return false;
        if (req.headers['xi-api-key'] !== API_KEY) return json(res, 401, { detail: { status: 'invalid_api_key', message: 'Invalid API key' } });
        return json(res, 200, { agent_id: fake.externalAgentId, name: 'Front desk', conversation_config: {}, metadata: {} });
      });
      return {
        fake,
        providersYaml: endpointsYaml('elevenlabs', portOf(fake.url), true),
        importBody: { provider: 'elevenlabs', external_agent_id: fake.externalAgentId, connection_mode: 'media_bridge', api_key: API_KEY },
      };
    },
    declared(t, fake) {
      t.ok(fake.core.http.some((r) => r.path.includes('conversation_signature=')), 'the private agent was reached through a signed URL');
      t.ok(fake.core.jsonMessages().some((m) => m.type === 'conversation_initiation_client_data'), 'the session opened with conversation_initiation_client_data');
    },
    speak(fake, audio) {
      const el = fake as FakeElevenLabs;
      let id: number | undefined;
      inChunks(audio, { encoding: 'pcm16', rate: 24000 }, (chunk) => {
        el.sendAudio(chunk, id);
        id = el.lastEventId;
      });
    },
    transcripts: true,
  },
  {
    provider: 'openai',
    input: { encoding: 'mulaw', rate: 8000 },
    output: { encoding: 'mulaw', rate: 8000 },
    async start() {
      const fake = await FakeOpenAiRealtime.start({ apiKey: API_KEY });
      // GET /v1/models/{model} with a Bearer key: the import's verification.
      fake.core.route((req, res) => {
        if (req.method !== 'GET' || req.path !== `/v1/models/${fake.externalAgentId}`) return false;
        if (req.headers.authorization !== `Bearer ${API_KEY}`) return json(res, 401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
        return json(res, 200, { id: fake.externalAgentId, object: 'model', created: 1, owned_by: 'system' });
      });
      return {
        fake,
        providersYaml: endpointsYaml('openai', portOf(fake.url), true),
        importBody: { provider: 'openai', external_agent_id: fake.externalAgentId, connection_mode: 'media_bridge', api_key: API_KEY },
      };
    },
    declared(t, fake) {
      const session = (fake as FakeOpenAiRealtime).sessionUpdate() as { audio?: { input?: { format?: unknown }; output?: { format?: unknown } } } | undefined;
      t.same(session?.audio?.input?.format, { type: 'audio/pcmu' }, 'session.update declares G.711 µ-law input');
      t.same(session?.audio?.output?.format, { type: 'audio/pcmu' }, 'and µ-law output');
    },
    speak(fake, audio) {
      inChunks(audio, { encoding: 'mulaw', rate: 8000 }, (chunk) => fake.sendAudio(chunk));
    },
    transcripts: true,
  },
  {
    provider: 'vapi',
    input: { encoding: 'mulaw', rate: 8000 },
    output: { encoding: 'mulaw', rate: 8000 },
    async start() {
      const fake = await FakeVapi.start(API_KEY);
      // GET /assistant/{id} with a Bearer private key: the import's verification.
      fake.core.route((req, res) => {
        if (req.method !== 'GET' || req.path !== `/assistant/${fake.externalAgentId}`) return false;
        if (req.headers.authorization !== `Bearer ${API_KEY}`) return json(res, 401, { message: 'Invalid Key.', statusCode: 401 });
        return json(res, 200, { id: fake.externalAgentId, name: 'Front desk' });
      });
      return {
        fake,
        providersYaml: endpointsYaml('vapi', portOf(fake.url), false),
        importBody: { provider: 'vapi', external_agent_id: fake.externalAgentId, connection_mode: 'media_bridge', api_key: API_KEY },
      };
    },
    declared(t, fake) {
      const transport = (fake as FakeVapi).createBody?.transport as { provider?: string; audioFormat?: unknown } | undefined;
      t.equal(transport?.provider, 'vapi.websocket', 'POST /call asks for the WebSocket transport');
      t.same(transport?.audioFormat, { format: 'mulaw', container: 'raw', sampleRate: 8000 }, 'declaring raw µ-law at 8 kHz');
    },
    speak(fake, audio) {
      inChunks(audio, { encoding: 'mulaw', rate: 8000 }, (chunk) => fake.sendAudio(chunk));
    },
    transcripts: true,
  },
  {
    provider: 'custom',
    input: { encoding: 'mulaw', rate: 8000 },
    output: { encoding: 'mulaw', rate: 8000 },
    async start() {
      const fake = await FakeCustomAgent.start();
      return {
        fake,
        providersYaml: '',
        importBody: { provider: 'custom', external_agent_id: 'front-desk', connection_mode: 'media_bridge', websocket_url: fake.url },
      };
    },
    declared(t, fake) {
      const start = fake.core.jsonMessages().find((m) => m.event === 'start') as { start?: { mediaFormat?: unknown } } | undefined;
      t.same(start?.start?.mediaFormat, { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 }, 'start declares µ-law at 8 kHz (docs/API.md "Agent WebSocket protocol")');
    },
    speak(fake, audio) {
      // Twilio Media Streams frames are 20 ms.
      for (let i = 0; i < audio.length; i += 160) fake.sendAudio(audio.subarray(i, i + 160));
    },
    transcripts: false,
  },
];

/** `hz` at the strength it has in audio of `format`. */
function levelIn(audio: Buffer, hz: number, format: Format): number {
  return format.encoding === 'mulaw' ? toneLevel(audio, hz) : pcm16ToneLevel(audio, hz, format.rate);
}

function toneIn(hz: number, ms: number, format: Format): Buffer {
  return format.encoding === 'mulaw' ? mulawTone(hz, ms) : pcm16Tone(hz, ms, format.rate);
}

/** Bytes of the last `ms` of audio in `format`. */
const lastMs = (audio: Buffer, ms: number, format: Format): Buffer =>
  audio.subarray(-(((format.encoding === 'mulaw' ? 1 : 2) * format.rate * ms) / 1000));

async function inboundCall(gw: TestGateway, did: string): Promise<ApiBody> {
  return waitFor(`inbound call to ${did}`, async () => {
    const r = await gw.api('GET', '/v1/calls?direction=inbound', undefined, { key: gw.liveKey });
    return r.body.data.find((c) => c.to === did);
  });
}

async function endedCall(gw: TestGateway, id: string): Promise<ApiBody> {
  return waitFor(`call ${id} ended`, async () => {
    const r = await gw.api('GET', `/v1/calls/${id}`, undefined, { key: gw.liveKey });
    return r.body.state === 'ended' ? r.body : undefined;
  });
}

for (const c of CASES) {
  t.test(`${c.provider} media_bridge: caller audio in the declared format, agent audio back, barge-in flushes playout, transcript and conversation id stored`, async (t) => {
    const { fake, providersYaml, importBody } = await c.start();
    t.teardown(() => fake.core.close());
    const gw = await startTestGateway(t, { carriers: CARRIERS, yaml: `${CALLS_YAML}\n${providersYaml}` });
    const did = '+15550110';
    await gw.gateway.store.numbers.add(gw.tenantId, did, 'trunk');
    const imported = await gw.api('POST', '/v1/agents/import', { ...importBody, did_number: did }, { key: gw.liveKey });
    t.equal(imported.status, 200, JSON.stringify(imported.body));

    const carrier = await startSipPhoneUa(t);
    const phone = await carrier.phone();
    const call = carrier.ua.invite({ target: `sip:${did}@127.0.0.1:${gw.gateway.sip.udpPort}`, from: 'sip:+15557770010@127.0.0.1', sdp: phone.offer });
    const { session, answer } = await answered(call);
    phone.useAnswer(answer);
    phone.startSending(mulawTone(CALLER_HZ, 1000));

    // Caller audio at the platform, decoded as the platform declared it. A tone read at the
    // wrong rate would show up at another frequency, so the level also checks the rate.
    await waitFor(`caller tone at ${c.provider}`, () => levelIn(lastMs(fake.receivedAudio(), 500, c.input), CALLER_HZ, c.input) > 1000);
    t.pass(`the caller's ${CALLER_HZ} Hz tone reaches ${c.provider} as ${c.input.encoding} at ${c.input.rate} Hz`);
    c.declared(t, fake);
    // The caller now listens (silence): only the platform's own barge-in may cut the agent off.
    phone.startSending(mulawTone(CALLER_HZ, 1000, 0));

    // Transcripts first: they travel on the same socket as the audio that follows, so they are
    // with the gateway before the caller hears that audio.
    if (c.transcripts) {
      fake.sendTranscript?.('caller', 'I would like to book a table');
      fake.sendTranscript?.('agent', 'For how many people?');
    }

    c.speak(fake, toneIn(AGENT_HZ, 3000, c.output));
    await waitFor('agent tone at the caller', () => toneLevel(phone.audio().subarray(-1600), AGENT_HZ) > 1000);
    // Interrupt well into the turn: 300 ms of it (15 packets) heard, 2.7 s still queued.
    await waitFor('15 packets of agent tone', () => phone.received.filter((p) => mulawPeak(p) > 1000).length >= 15);
    t.pass(`${c.provider}'s ${AGENT_HZ} Hz tone reaches the caller`);

    const live = await inboundCall(gw, did);
    t.equal(live.direction, 'inbound');

    // Barge-in: everything queued is flushed at once, so the first packet the gateway builds after
    // the interruption is silence and so is every later one. Packets built before it reached the
    // gateway may still arrive: a short run of agent audio right after the mark (at most five, the
    // pacer's catch-up after a stall of this busy process), never audio after the silence began.
    const mark = phone.received.length;
    t.ok(phone.received.slice(-3).every((p) => mulawPeak(p) > 1000), 'the agent was still talking when interrupted');
    fake.interrupt();
    if (c.provider === 'elevenlabs') {
      // Audio of the interrupted turn arriving late is stale (event_id <= the interruption's).
      const el = fake as FakeElevenLabs;
      inChunks(pcm16Tone(AGENT_HZ, 500, 24000), c.output, (chunk) => el.sendAudio(chunk, el.lastEventId));
    }
    await waitFor('30 packets after the barge-in', () => phone.received.length >= mark + 30);
    const after = phone.received.slice(mark, mark + 30).map(mulawPeak);
    const firstSilent = after.findIndex((peak) => peak <= SILENT_PEAK);
    t.ok(firstSilent >= 0 && firstSilent <= 5, `silence starts within the packets already in flight (first silent: ${firstSilent})`);
    const loud = after.slice(Math.max(firstSilent, 0)).filter((peak) => peak > SILENT_PEAK).length;
    t.equal(loud, 0, `once silent, the caller hears no more of the interrupted turn (loud packets: ${loud}, peaks ${after.slice(0, 8).join(', ')})`);

    const stored = await gw.gateway.store.calls.get(gw.tenantId, live.id);
    t.equal(stored?.conversation_id ?? null, fake.conversationId ?? null, `the platform's conversation id is stored (${fake.conversationId ?? 'none for custom'})`);

    await session.bye();
    const ended = await endedCall(gw, live.id);
    t.equal(ended.cdr?.hangup_by, 'caller');
    t.equal(ended.cdr?.end_reason, 'completed');
    await fake.core.until(() => fake.core.closedWith !== undefined);
    t.pass("the platform's socket is closed when the caller hangs up");

    const transcript = await gw.api('GET', `/v1/calls/${live.id}/transcript`, undefined, { key: gw.liveKey });
    if (!c.transcripts) {
      t.equal(transcript.status, 404, 'no transcript from a protocol that carries none');
      return;
    }
    t.equal(transcript.status, 200, JSON.stringify(transcript.body));
    t.equal(transcript.body.source, 'provider');
    const turns = (transcript.body.turns as { role: string; text: string }[]).map((turn) => ({ role: turn.role, text: turn.text }));
    t.same(turns, [{ role: 'caller', text: 'I would like to book a table' }, { role: 'agent', text: 'For how many people?' }], "the platform's transcript, in order");
    const detail = await gw.api('GET', `/v1/calls/${live.id}`, undefined, { key: gw.liveKey });
    t.same(detail.body.transcript, { available: true, source: 'provider' }, 'the detail says a provider transcript is available');
  });
}
