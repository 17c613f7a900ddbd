import t from 'tap';
import type { TenantId } from '../common/ids.js';
import type { AttributionCandidate } from '../storage/index.js';
import { closestCall } from './attribution.js';
import { recordingRef } from './delivery-audit.js';
import { deliveryKey, toStoredTurns } from './ingest.js';
import { normalizeMediaType, providerRecordingPath } from './recording-archive.js';
import type { PostCallEvent } from './post-call-ports.js';

const tenant = 'ten_a' as TenantId;
const candidate = (callId: string, endedAt: string): AttributionCandidate => ({ tenant_id: tenant, call_id: callId, ended_at: endedAt, conversation_id: null });

t.test('docs/WEBHOOKS.md "Post-call webhooks": several matching calls → the end closest to the payload end; newest without an end time', (t) => {
  const calls = [candidate('call_new', '2026-11-22T10:50:00.000Z'), candidate('call_mid', '2026-11-22T10:20:00.000Z'), candidate('call_old', '2026-11-22T09:00:00.000Z')];
  t.equal(closestCall(calls, Date.parse('2026-11-22T10:18:00.000Z'))?.call_id, 'call_mid');
  t.equal(closestCall(calls, Date.parse('2026-11-22T08:00:00.000Z'))?.call_id, 'call_old');
  t.equal(closestCall(calls, null)?.call_id, 'call_new');
  t.equal(closestCall([], 0), undefined);
  t.end();
});

const payload = (over: Partial<PostCallEvent>): PostCallEvent => ({
  kind: 'post_call', provider: 'retell', event: 'call_ended', conversationId: 'c1', agentId: null, agentNumber: null, remoteNumber: null,
  direction: null, startedAt: null, endedAt: null, turns: [], recording: null, failureReason: null, raw: {}, ...over,
});

t.test('docs/WEBHOOKS.md "Post-call webhooks": the duplicate key is provider + event + conversation id, else the body hash', (t) => {
  t.equal(deliveryKey(payload({}), 'ab'), 'retell:call_ended:c1');
  t.not(deliveryKey(payload({ event: 'call_analyzed' }), 'ab'), deliveryKey(payload({}), 'ab'), 'another event of the same call');
  t.equal(deliveryKey(payload({ conversationId: '' }), 'ab'), 'retell:sha256:ab');
  t.end();
});

t.test('stored turns: an unknown offset repeats the previous one, 0 at the start', (t) => {
  t.same(toStoredTurns([
    { role: 'agent', text: 'a', offsetS: null },
    { role: 'caller', text: 'b', offsetS: 2.5 },
    { role: 'agent', text: 'c', offsetS: null },
  ]), [
    { role: 'agent', text: 'a', offset_s: 0 },
    { role: 'caller', text: 'b', offset_s: 2.5 },
    { role: 'agent', text: 'c', offset_s: 2.5 },
  ]);
  t.end();
});

t.test('recording paths: media types normalized, only the gateway ids become paths', (t) => {
  t.equal(normalizeMediaType('Audio/WAV; codecs=1'), 'audio/wav');
  t.equal(normalizeMediaType('not a type'), 'application/octet-stream');
  t.equal(normalizeMediaType(''), 'application/octet-stream');
  t.equal(providerRecordingPath(tenant, 'call_1', 'audio/mpeg'), 'ten_a/call_1.provider.mp3');
  t.equal(providerRecordingPath(tenant, 'call_1', 'application/octet-stream'), 'ten_a/call_1.provider.bin');
  t.throws(() => providerRecordingPath('../x' as TenantId, 'call_1', 'audio/mpeg'));
  t.throws(() => providerRecordingPath(tenant, 'call_1/../../etc', 'audio/mpeg'));
  t.end();
});

t.test('WEBHOOKS first attribution wins: recordings compare by audio checksum, or by URL origin and path (not the signed query)', (t) => {
  const url = (u: string) => recordingRef({ url: u, mediaType: 'audio/wav' });
  t.equal(url('https://storage.vapi.ai/r/1.wav?sig=a&exp=1'), url('https://storage.vapi.ai/r/1.wav?sig=b&exp=2'), 'another signature, same recording');
  t.not(url('https://storage.vapi.ai/r/1.wav'), url('https://storage.vapi.ai/r/2.wav'));
  t.not(url('https://storage.vapi.ai/r/1.wav'), url('https://evil.example/r/1.wav'));
  t.notMatch(url('https://storage.vapi.ai/r/1.wav?sig=secret') ?? '', /secret|storage/, 'the URL itself is not kept');
  const inline = (b: Buffer) => recordingRef({ inline: b, mediaType: 'audio/mpeg' });
  t.equal(inline(Buffer.from('abc')), inline(Buffer.from('abc')));
  t.not(inline(Buffer.from('abc')), inline(Buffer.from('abd')));
  t.equal(recordingRef(null), null);
  t.end();
});
