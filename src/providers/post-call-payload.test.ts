import t from 'tap';
import { parseElevenLabsWebhook } from './elevenlabs/post-call-webhook.js';
import { parseRetellWebhook } from './retell/post-call-webhook.js';
import { parseVapiWebhook } from './vapi/post-call-webhook.js';
import { checkBounds, decodeBase64Audio, mediaTypeFromUrl, POST_CALL_LIMITS, readE164, readTimestampMs } from './post-call-payload.js';

const parsers = { elevenlabs: parseElevenLabsWebhook, retell: parseRetellWebhook, vapi: parseVapiWebhook };

/** One valid ingested payload per provider, to nest things into and mutate. */
const samples = (): Record<keyof typeof parsers, Record<string, unknown>> => ({
  elevenlabs: {
    type: 'post_call_transcription',
    data: {
      agent_id: 'agent_1', conversation_id: 'conv_1',
      transcript: [{ role: 'user', message: 'hi', time_in_call_secs: 1 }],
      metadata: { start_time_unix_secs: 1739537200, call_duration_secs: 5, phone_call: { type: 'sip_trunking', direction: 'inbound', agent_number: '+14155550100', external_number: '+14155550199' } },
    },
  },
  retell: { event: 'call_ended', call: { call_id: 'c1', agent_id: 'a1', direction: 'inbound', from_number: '+14155550199', to_number: '+14155550100', transcript_object: [{ role: 'user', content: 'hi', words: [{ start: 1 }] }], recording_url: 'https://x.example/r.wav' } },
  vapi: { message: { type: 'end-of-call-report', call: { id: 'c1', type: 'inboundPhoneCall' }, customer: { number: '+14155550199' }, artifact: { messages: [{ role: 'user', message: 'hi' }], recordingUrl: 'https://storage.vapi.ai/r.wav' } } },
});

function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { x: value };
  return value;
}

t.test('docs/WEBHOOKS.md "Post-call webhooks" hostile input: nesting beyond the depth limit is invalid for every provider', (t) => {
  for (const [name, parse] of Object.entries(parsers)) {
    const body = samples()[name as keyof typeof parsers];
    body.extra = nested(100_000);
    const r = parse(body);
    t.equal(r.kind, 'invalid', name);
    if (r.kind === 'invalid') t.match(r.reason, /nested too deeply/);
    const shallow = samples()[name as keyof typeof parsers];
    shallow.extra = nested(POST_CALL_LIMITS.maxDepth - 4);
    t.equal(parse(shallow).kind, 'post_call', `${name}: nesting within the limit is fine`);
  }
  t.end();
});

t.test('docs/WEBHOOKS.md "Post-call webhooks" hostile input: huge strings are cut or refused, never copied whole into turns', (t) => {
  const huge = 'a'.repeat(5_000_000);
  const el = samples().elevenlabs;
  (el.data as { transcript: unknown[] }).transcript = [{ role: 'agent', message: huge }];
  (el.data as Record<string, unknown>).conversation_id = huge;
  t.equal(parseElevenLabsWebhook(el).kind, 'invalid', 'an over-long id is refused');
  (el.data as Record<string, unknown>).conversation_id = 'conv';
  const r = parseElevenLabsWebhook(el);
  if (r.kind !== 'post_call') return t.fail(r.kind);
  t.equal(r.turns[0]!.text.length, POST_CALL_LIMITS.maxTurnText);
  const vapi = samples().vapi;
  (vapi.message as Record<string, unknown>).artifact = { transcript: `User: ${huge}\n`.repeat(3), recordingUrl: `https://storage.vapi.ai/${huge}` };
  const v = parseVapiWebhook(vapi);
  if (v.kind !== 'post_call') return t.fail(v.kind);
  t.equal(v.turns.length, 3);
  t.ok(v.turns.every((turn) => turn.text.length <= POST_CALL_LIMITS.maxTurnText));
  t.equal(v.recording, null, 'an over-long URL is not passed on');
  t.end();
});

t.test('docs/WEBHOOKS.md "Post-call webhooks" hostile input: every field replaced by every JSON type never throws', (t) => {
  const junk: unknown[] = [null, true, 0, -1, 1e308, '', 'x', '+1', [], [null], {}, { a: 1 }, '__proto__'];
  let runs = 0;
  for (const [name, parse] of Object.entries(parsers)) {
    // Replace each value reachable in the sample, one at a time, by each junk value.
    const paths: string[][] = [];
    const walk = (v: unknown, path: string[]): void => {
      if (path.length > 0) paths.push(path);
      if (typeof v === 'object' && v !== null) for (const [k, c] of Object.entries(v)) walk(c, [...path, k]);
    };
    walk(samples()[name as keyof typeof parsers], []);
    for (const path of paths) {
      for (const value of junk) {
        const body = samples()[name as keyof typeof parsers];
        const parent = path.slice(0, -1).reduce<Record<string, unknown>>((v, k) => v[k] as Record<string, unknown>, body);
        parent[path[path.length - 1]!] = value;
        const r = parse(JSON.parse(JSON.stringify(body)));
        t.ok(['post_call', 'ignored', 'invalid'].includes(r.kind));
        runs++;
      }
    }
    for (const value of junk) t.ok(['ignored', 'invalid'].includes(parse(value).kind), `${name}: top-level ${JSON.stringify(value)}`);
  }
  t.ok(runs > 100, `${runs} mutated payloads`);
  t.end();
});

t.test('own properties only: a __proto__ key in JSON does not reach Object.prototype', (t) => {
  const body = JSON.parse('{"type":"post_call_transcription","data":{"__proto__":{"conversation_id":"x","agent_id":"y"}}}');
  t.equal(parseElevenLabsWebhook(body).kind, 'invalid');
  t.end();
});

t.test('readers', (t) => {
  t.equal(readE164('+1 (415) 555-0100'), '+14155550100');
  t.equal(readE164('4155550100'), null, 'national numbers are not guessed');
  t.equal(readE164('+0123'), null);
  t.equal(readTimestampMs('not a date'), null);
  t.equal(readTimestampMs(-5), null);
  t.equal(mediaTypeFromUrl('https://x/a.MP3?sig=1'), 'audio/mpeg');
  t.equal(mediaTypeFromUrl('https://x/a'), 'application/octet-stream');
  t.equal(typeof decodeBase64Audio('\n'.repeat(100_000) + '!'), 'string', 'rejected in linear time');
  t.equal(checkBounds(Array.from({ length: 10 }, () => nested(10))), null);
  t.end();
});
