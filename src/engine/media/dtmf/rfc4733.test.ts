import t from 'tap';
import { dtmfDigit, parseTelephoneEvent, TelephoneEventReceiver, telephoneEventFrames, writeTelephoneEvent } from './rfc4733.js';

t.test('RFC 4733 2.3: event, E bit, volume and duration from their bit positions', (t) => {
  const ev = parseTelephoneEvent(Buffer.from([0x0b, 0x8a, 0x03, 0x20]));
  t.same(ev, { event: 11, end: true, volume: 10, duration: 800 });
  t.equal(parseTelephoneEvent(Buffer.from([1, 2, 3])), null, 'short payload');
  const out = Buffer.alloc(4);
  writeTelephoneEvent(out, 0, { event: 5, end: false, volume: 63, duration: 70000 });
  t.same(parseTelephoneEvent(out), { event: 5, end: false, volume: 63, duration: 0xffff }, 'duration saturates');
  t.equal(dtmfDigit(10), '*');
  t.equal(dtmfDigit(11), '#');
  t.equal(dtmfDigit(16), null, 'flash is not a digit');
  t.end();
});

t.test('RFC 4733 2.5.1.4: the three end packets of one event report one digit', (t) => {
  const rx = new TelephoneEventReceiver();
  const got: number[] = [];
  const feed = (ts: number, event: number, end: boolean, duration: number): void => {
    for (const done of rx.receive(ts, { event, end, volume: 10, duration })) got.push(done.event);
  };
  feed(1000, 1, false, 160);
  feed(1000, 1, false, 320);
  feed(1000, 1, true, 800);
  feed(1000, 1, true, 800);
  feed(1000, 1, true, 800);
  t.same(got, [1]);
  feed(5000, 1, false, 160);
  feed(5000, 1, true, 400);
  t.same(got, [1, 1], 'the same digit again is a new event (new timestamp)');
  t.end();
});

t.test('RFC 4733 2.5.1.2: a digit whose end packets were all lost is reported when the next begins', (t) => {
  const rx = new TelephoneEventReceiver();
  const got: { event: number; duration: number }[] = [];
  got.push(...rx.receive(100, { event: 4, end: false, volume: 10, duration: 160 }));
  got.push(...rx.receive(900, { event: 7, end: true, volume: 10, duration: 800 }));
  t.same(got, [{ event: 4, duration: 0 }, { event: 7, duration: 800 }]);
  t.end();
});

t.test('RFC 4733 2.5.1: generated events start with the marker, update, and end three times', (t) => {
  const frames = telephoneEventFrames(5, 100);
  t.equal(frames.length, 4 + 3, '100 ms at 20 ms: 4 updates then 3 ends');
  t.equal(frames[0]!.marker, true);
  t.ok(frames.slice(1).every((f) => !f.marker));
  const parsed = frames.map((f) => parseTelephoneEvent(f.payload)!);
  t.same(parsed.map((p) => p.duration), [160, 320, 480, 640, 800, 800, 800]);
  t.same(parsed.map((p) => p.end), [false, false, false, false, true, true, true]);
  t.ok(parsed.every((p) => p.event === 5));
  t.equal(telephoneEventFrames(1, 0).length, 3, 'a minimal event is its three end packets');
  t.end();
});
