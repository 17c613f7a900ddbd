/** @module The caller's keys from RFC 4733 events and from tones (ITU-T Q.23/Q.24), each reported once. */
import t from 'tap';
import { linearToUlaw, decodeG711, serializeRtp, telephoneEventFrames } from '../../../media/index.js';
import { CallerKeys } from './caller-keys.js';

const packetsOf = (event: number, timestamp: number): Buffer[] =>
  telephoneEventFrames(event, 100).map((f, i) => serializeRtp({ payloadType: 101, sequenceNumber: 100 + i, timestamp, ssrc: 7, marker: f.marker }, f.payload));

/** 16-bit PCM of a key's two tones for `ms` at 8 kHz, through µ-law as a carrier would send it. */
function tones(low: number, high: number, ms: number): Int16Array {
  const n = (8000 * ms) / 1000;
  const ulaw = Buffer.from(Array.from({ length: n }, (_, i) => linearToUlaw(Math.round(8000 * (Math.sin((2 * Math.PI * low * i) / 8000) + Math.sin((2 * Math.PI * high * i) / 8000))))));
  const pcm = new Int16Array(n);
  decodeG711('PCMU', ulaw, pcm);
  return pcm;
}

t.test('RFC 4733 2.5.1.4: an event sent as start, updates and the end packet three times is one key', (t) => {
  const keys: string[] = [];
  const caller = new CallerKeys(true, (k) => keys.push(k));
  for (const packet of [...packetsOf(5, 1000), ...packetsOf(11, 5000)]) t.equal(caller.receiveEvent(packet), true);
  t.same(keys, ['5', '#'], 'event 5 and event 11 (#), once each');
  t.equal(caller.receiveEvent(serializeRtp({ payloadType: 101, sequenceNumber: 1, timestamp: 9000, ssrc: 7 }, Buffer.alloc(2))), false, 'a payload under 4 octets is refused');
  t.end();
});

t.test('ITU-T Q.24: tones are listened for only on a leg without telephone-event', (t) => {
  const heard: string[] = [];
  const withoutEvents = new CallerKeys(false, (k) => heard.push(k));
  t.equal(withoutEvents.listensForTones, true);
  const key5 = tones(770, 1336, 120);
  for (let i = 0; i + 160 <= key5.length; i += 160) withoutEvents.listen(key5.subarray(i, i + 160));
  t.same(heard, ['5'], 'the tone pair of 5, 120 ms, is one key');

  const ignored: string[] = [];
  const withEvents = new CallerKeys(true, (k) => ignored.push(k));
  t.equal(withEvents.listensForTones, false);
  for (let i = 0; i + 160 <= key5.length; i += 160) withEvents.listen(key5.subarray(i, i + 160));
  t.same(ignored, [], 'a leg with telephone-event signals keys as events, so its audio is not searched');
  t.end();
});
