/** docs/WEBHOOKS.md "Post-call webhooks" under hostile input: body limits, odd JSON, recording URLs aimed inside, signatures. */
import t, { type Test } from 'tap';
import { createHash, createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import wavefile from 'wavefile';
import type { ResolvedAddress } from '../../src/providers/index.js';
import { isoTime } from '../../src/common/time.js';
import { buildApp, type AppHarness, type BuildAppOverrides } from '../support/build-app.js';
import { callRecord } from '../support/call-records.js';
import { startHttpsFixture } from '../support/https-fixture.js';
import { sqliteOf } from '../support/sqlite-of.js';

const DID = '+12137771235';
const CALLER = '+12137771234';
const RETELL_AGENT = 'oBeDLoLOeuAbiuaMFXRtDOLriTJ5tSxD';
/** A real WAV file (8-bit, 8 kHz): recordings are served by the format their bytes hold. */
const wav = (samples: number[]): Buffer => {
  const file = new wavefile.WaveFile();
  file.fromScratch(1, 8000, '8', samples);
  return Buffer.from(file.toBuffer());
};
const AUDIO = wav(Array.from({ length: 5000 }, (_, i) => (i * 31) & 255));

/** Acme's DID routed to its Retell agent an hour ago, and one inbound call from CALLER that ended a minute ago. */
async function seed(h: AppHarness) {
  const acme = await h.createTenant('Acme');
  const now = h.clock.now();
  const agent = await h.store.agents.insert(acme.tenant.id, {
    provider: 'retell', external_agent_id: RETELL_AGENT, apiKey: null, verifiedAt: null,
    settings: { name: null, connection_mode: 'sip_trunk', region: 'us', sip_credential_id: null, sip_uri: null, sip_transport: null, sip_region: null, websocket_url: null },
  });
  const route = await h.store.routes.insert(acme.tenant.id, { didNumber: DID, carrier: 'sandbox', agentId: agent.id });
  sqliteOf(h.store).prepare('UPDATE routes SET created_at = ? WHERE id = ?').run(isoTime(now - 3_600_000), route.id);
  const call = callRecord(acme.tenant.id, isoTime(now - 90_000), {
    direction: 'inbound', state: 'ended', from_number: CALLER, to_number: DID, ended_at: isoTime(now - 60_000), end_reason: 'completed',
  });
  await h.store.calls.insert(call);
  return { acme, call, endMs: now - 60_000 };
}

/** A Retell `call_ended` for the seeded call (or another caller's); `id` keeps deliveries distinct. */
function callEnded(endMs: number, id: string, recordingUrl?: string, caller = CALLER) {
  return {
    event: 'call_ended',
    call: {
      call_id: id, agent_id: RETELL_AGENT, direction: 'inbound', from_number: caller, to_number: DID,
      start_timestamp: endMs - 30_000, end_timestamp: endMs, disconnection_reason: 'user_hangup',
      transcript_object: [{ role: 'agent', content: 'Hi, this is the front desk.', words: [{ word: 'Hi', start: 0.4, end: 0.6 }] }],
      ...(recordingUrl ? { recording_url: recordingUrl } : {}),
    },
  };
}

const post = (h: AppHarness, provider: string, body: string, headers: Record<string, string> = {}) =>
  h.request({ method: 'POST', url: `/v1/webhooks/${provider}`, payload: body, headers: { 'content-type': 'application/json', ...headers } });

t.test('docs/WEBHOOKS.md "Post-call webhooks": body limit, malformed and odd JSON, media type, unknown provider; never a 5xx', async (t) => {
  const h = await buildApp(t, { webhooks: { bodyLimitBytes: 64 * 1024 } });
  await seed(h);
  const big = await post(h, 'retell', JSON.stringify({ event: 'call_ended', pad: 'x'.repeat(70 * 1024) }));
  t.equal(big.statusCode, 413);
  t.equal(JSON.parse(big.body).code, 'payload_too_large');

  const malformed = await post(h, 'retell', '{"event": "call_ended",');
  t.equal(malformed.statusCode, 400);
  t.equal(JSON.parse(malformed.body).code, 'validation_failed');
  t.equal((await post(h, 'retell', 'event=x', { 'content-type': 'application/x-www-form-urlencoded' })).statusCode, 415);
  t.equal((await post(h, 'twilio', '{}')).statusCode, 404, 'unknown provider segment');

  const deep = '['.repeat(20_000) + ']'.repeat(20_000);
  const odd = [
    deep, '42', 'null', '"text"', '[]', '{}', '{"event": 42, "call": "nope"}', '{"event": "call_ended", "call": []}',
    '{"event": "call_ended", "call": {"call_id": {"a": 1}, "from_number": 5, "to_number": [1]}}',
    JSON.stringify({ message: { type: 'end-of-call-report', call: { id: 7.5 }, artifact: { messages: 'no' } } }),
  ];
  for (const body of odd) {
    for (const provider of ['elevenlabs', 'retell', 'vapi']) {
      const res = await post(h, provider, body);
      t.equal(res.statusCode, 200, `${provider} ${body.slice(0, 40)}`);
      t.same(JSON.parse(res.body), { status: 'ignored' });
    }
  }
  t.equal(sqliteOf(h.store).prepare('SELECT count(*) FROM webhook_deliveries').pluck().get(), 0, 'nothing stored');
});

/** Names the fake DNS answers: a provider host standing in on 127.0.0.1 and hosts that point inside. */
const DNS: Record<string, ResolvedAddress[]> = {
  'media.recordings.test': [{ address: '127.0.0.1', family: 4 }],
  'meta.recordings.test': [{ address: '169.254.169.254', family: 4 }],
  'private.recordings.test': [{ address: '10.1.2.3', family: 4 }],
  'mapped.recordings.test': [{ address: '::ffff:10.0.0.1', family: 6 }],
  'loop.recordings.test': [{ address: '127.0.0.1', family: 4 }],
  'media.other.test': [{ address: '127.0.0.1', family: 4 }],
};

async function downloadHarness(t: Test) {
  const fx = await startHttpsFixture(t, (req, res) => {
    if (req.url === '/ok.wav') res.writeHead(200, { 'content-type': 'audio/wav', 'content-length': AUDIO.length }).end(AUDIO);
    else res.writeHead(404).end();
  });
  const overrides: BuildAppOverrides = {
    webhooks: { recordingHosts: { elevenlabs: [], vapi: [], retell: ['*.recordings.test', '127.0.0.1', '169.254.169.254', '10.0.0.1', '::ffff:a00:1'] } },
    recordingDownload: {
      ca: fx.ca,
      resolver: (host) => (DNS[host] ? Promise.resolve(DNS[host]) : Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' }))),
      // Only the stand-in name may reach the fixture on loopback; every other rule still applies.
      unsafeAllowAddressForTests: (host, address) => host === 'media.recordings.test' && address === '127.0.0.1',
    },
  };
  const h = await buildApp(t, overrides);
  return { fx, h, ...(await seed(h)) };
}

t.test('docs/WEBHOOKS.md "Post-call webhooks": recording URLs aimed at internal addresses or off the allow-list: nothing fetched, transcript kept', async (t) => {
  const { fx, h, acme, call, endMs } = await downloadHarness(t);
  const hostile = [
    fx.url('/ok.wav', '127.0.0.1'),
    'https://169.254.169.254/latest/meta-data/iam/security-credentials/',
    fx.url('/ok.wav', 'meta.recordings.test'),
    fx.url('/ok.wav', 'private.recordings.test'),
    'https://10.0.0.1/ok.wav',
    fx.url('/ok.wav', 'mapped.recordings.test'),
    'https://[::ffff:a00:1]/ok.wav',
    fx.url('/ok.wav', 'loop.recordings.test'),
    fx.url('/ok.wav', 'media.other.test'),
    fx.url('/ok.wav').replace('https:', 'http:'),
  ];
  // One call per URL: the first delivery of a call is the one applied (docs/WEBHOOKS.md "First attribution wins").
  const calls = [call, ...await Promise.all(hostile.slice(1).map(async (_, i) => {
    const other = callRecord(acme.tenant.id, isoTime(endMs - 30_000), {
      direction: 'inbound', state: 'ended', from_number: `+1213777${2000 + i}`, to_number: DID, ended_at: isoTime(endMs), end_reason: 'completed',
    });
    await h.store.calls.insert(other);
    return other;
  }))];
  for (const [i, url] of hostile.entries()) {
    const res = await post(h, 'retell', JSON.stringify(callEnded(endMs, `hostile-${i}`, url, calls[i]!.from_number)));
    t.equal(res.statusCode, 200, url);
    t.same(JSON.parse(res.body), { status: 'accepted' }, `${url}: the transcript is still accepted`);
  }
  t.same(fx.requests, [], 'no request reached the server');
  for (const c of calls) {
    t.equal(await h.store.recordings.get(acme.tenant.id, c.id, 'provider'), undefined, 'no recording archived');
    t.same(await h.store.transcripts.sources(acme.tenant.id, c.id), ['provider']);
  }
  const detail = JSON.parse((await h.request({ method: 'GET', url: `/v1/calls/${call.id}`, headers: acme.auth })).body);
  t.same(detail.recording, { available: false });
  t.equal((await h.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, headers: acme.auth })).statusCode, 404);
  t.ok(h.logLines.some((l) => l.includes('address_refused') && l.includes(call.id)), 'refusals are logged with the call id');
  t.notOk(h.logLines.some((l) => l.includes('security-credentials')), 'URL paths (often signed) are not logged');
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": a recording on an allow-listed HTTPS host is downloaded, archived with checksum and served', async (t) => {
  const { fx, h, acme, call, endMs } = await downloadHarness(t);
  const res = await post(h, 'retell', JSON.stringify(callEnded(endMs, 'good-1', fx.url('/ok.wav'))));
  t.same(JSON.parse(res.body), { status: 'accepted' });
  t.equal(fx.requests.length, 1);
  const row = await h.store.recordings.get(acme.tenant.id, call.id, 'provider');
  t.match(row, { media_type: 'audio/wav', bytes: AUDIO.length, origin: 'download', path: `${acme.tenant.id}/${call.id}.provider.wav` });
  t.equal(row?.sha256, createHash('sha256').update(AUDIO).digest('hex'));
  const rec = await h.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, headers: acme.auth });
  t.equal(rec.statusCode, 200);
  t.equal(rec.headers['content-type'], 'audio/wav');
  t.equal(rec.headers['content-length'], String(AUDIO.length));
  t.ok(rec.rawPayload.equals(AUDIO));
});

t.test(`docs/WEBHOOKS.md "Post-call webhooks": the gateway's own recording is served before the provider's copy`, async (t) => {
  const { fx, h, acme, call, endMs } = await downloadHarness(t);
  const own = wav([128, 130, 126, 128]);
  writeFileSync(join(h.dataDir, 'own.wav'), own);
  sqliteOf(h.store).prepare('UPDATE calls SET recording_path = ? WHERE id = ?').run(join(h.dataDir, 'own.wav'), call.id);
  t.same(JSON.parse((await post(h, 'retell', JSON.stringify(callEnded(endMs, 'good-2', fx.url('/ok.wav'))))).body), { status: 'accepted' });
  t.ok(await h.store.recordings.get(acme.tenant.id, call.id, 'provider'), 'the provider copy is archived');
  const rec = await h.request({ method: 'GET', url: `/v1/calls/${call.id}/recording`, headers: acme.auth });
  t.ok(rec.rawPayload.equals(own), "the gateway's recording wins");
  t.equal(rec.headers['content-type'], 'audio/wav');
});

const elevenLabsHeader = (body: string, secret: string, tS: number) =>
  `t=${tS},v0=${createHmac('sha256', secret).update(`${tS}.${body}`).digest('hex')}`;
const retellHeader = (body: string, secret: string, tMs: number) =>
  `v=${tMs},d=${createHmac('sha256', secret).update(body + String(tMs)).digest('hex')}`;

t.test('docs/WEBHOOKS.md "Post-call webhooks": with a secret configured, a missing, wrong or stale signature is 401; a right one is checked first', async (t) => {
  const h = await buildApp(t, { webhooks: { secrets: { elevenlabs: 'whsec_el', retell: 'key_retell' } } });
  const { endMs } = await seed(h);
  const body = JSON.stringify(callEnded(endMs, 'signed-1'));
  const now = h.clock.now();
  const cases: [string, Record<string, string>, number][] = [
    ['missing', {}, 401],
    ['wrong key', { 'x-retell-signature': retellHeader(body, 'other', now) }, 401],
    ['stale', { 'x-retell-signature': retellHeader(body, 'key_retell', now - 10 * 60_000) }, 401],
    ['garbage', { 'x-retell-signature': 'v=abc,d=zz' }, 401],
    ['right', { 'x-retell-signature': retellHeader(body, 'key_retell', now) }, 200],
  ];
  for (const [name, headers, status] of cases) {
    const res = await post(h, 'retell', body, headers);
    t.equal(res.statusCode, status, name);
    if (status === 401) {
      t.equal(JSON.parse(res.body).code, 'unauthorized');
      t.match(res.headers['content-type'], /application\/problem\+json/);
    }
  }
  const el = JSON.stringify({ type: 'post_call_transcription', data: { conversation_id: 'c1', agent_id: 'a1' } });
  const nowS = Math.floor(now / 1000);
  t.equal((await post(h, 'elevenlabs', el, { 'elevenlabs-signature': elevenLabsHeader(el, 'whsec_el', nowS) })).statusCode, 200);
  t.equal((await post(h, 'elevenlabs', el, { 'elevenlabs-signature': elevenLabsHeader(el, 'whsec_el', nowS - 3600) })).statusCode, 401, 'stale');
  t.equal((await post(h, 'elevenlabs', el, { 'elevenlabs-signature': elevenLabsHeader(`${el} `, 'whsec_el', nowS) })).statusCode, 401, 'other bytes');
  t.equal((await post(h, 'vapi', '{}')).statusCode, 200, 'no secret for vapi: not checked');
});
