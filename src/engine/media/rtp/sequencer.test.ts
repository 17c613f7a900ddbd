import t from 'tap';
import { parseRtpHeader, serializeRtp, type RtpHeader } from './packet.js';
import { RtpSequencer } from './sequencer.js';

const packet = (seq: number, ts: number, ssrc: number): Buffer =>
  serializeRtp({ payloadType: 0, sequenceNumber: seq, timestamp: ts, ssrc }, Buffer.alloc(160));
const header = (buf: Buffer): RtpHeader => parseRtpHeader(buf) as RtpHeader;

t.test('RFC 3550 5.1: one SSRC and consecutive sequence numbers across a source switch', (t) => {
  const seq = new RtpSequencer({ clockRate: 8000, samplesPerPacket: 160, ssrc: 0xabc });
  const out: RtpHeader[] = [];
  for (let i = 0; i < 3; i++) {
    const p = packet(1000 + i, 50000 + i * 160, 111);
    seq.rewrite(p, 111, i * 20);
    out.push(header(p));
  }
  // The agent is swapped: a new SSRC with unrelated sequence and timestamp, 100 ms later.
  for (let i = 0; i < 2; i++) {
    const p = packet(7 + i, 900 + i * 160, 222);
    seq.rewrite(p, 222, 140 + i * 20);
    out.push(header(p));
  }
  t.same(out.map((h) => h.ssrc), [0xabc, 0xabc, 0xabc, 0xabc, 0xabc]);
  for (let i = 1; i < out.length; i++) t.equal((out[i]!.sequenceNumber - out[i - 1]!.sequenceNumber) & 0xffff, 1, `seq step ${i}`);
  t.equal((out[1]!.timestamp - out[0]!.timestamp) >>> 0, 160, 'source timestamp deltas kept');
  t.equal((out[3]!.timestamp - out[2]!.timestamp) >>> 0, 800, '100 ms gap becomes 800 timestamp units');
  t.equal((out[4]!.timestamp - out[3]!.timestamp) >>> 0, 160);
  t.equal(out[3]!.marker, true, 'RFC 3551 4.1: marker on the first packet after the switch');
  t.equal(out[4]!.marker, false);
  t.equal(seq.switches, 2);
  t.end();
});

t.test('RFC 3550 5.1: loss and reordering within one source stay visible', (t) => {
  const seq = new RtpSequencer({ clockRate: 8000, samplesPerPacket: 160 });
  const a = packet(10, 1600, 5);
  const b = packet(12, 1920, 5);
  const late = packet(11, 1760, 5);
  seq.rewrite(a, 5, 0);
  seq.rewrite(b, 5, 40);
  seq.rewrite(late, 5, 41);
  t.equal((header(b).sequenceNumber - header(a).sequenceNumber) & 0xffff, 2, 'gap kept');
  t.equal((header(late).sequenceNumber - header(a).sequenceNumber) & 0xffff, 1, 'late packet keeps its place');
  // A switch after the late packet continues from the highest sequence number, not the late one.
  const next = packet(0, 0, 6);
  seq.rewrite(next, 6, 60);
  t.equal((header(next).sequenceNumber - header(b).sequenceNumber) & 0xffff, 1);
  t.end();
});

t.test('sequence numbers wrap at 2^16 and timestamps at 2^32', (t) => {
  const seq = new RtpSequencer({ clockRate: 8000, samplesPerPacket: 160 });
  const p1 = packet(65535, 0xffffff00, 9);
  const p2 = packet(0, 0x60, 9);
  seq.rewrite(p1, 9, 0);
  seq.rewrite(p2, 9, 20);
  t.equal((header(p2).sequenceNumber - header(p1).sequenceNumber) & 0xffff, 1);
  t.equal((header(p2).timestamp - header(p1).timestamp) >>> 0, 0x160);
  t.end();
});

t.test('RFC 4733 2.5.1.1: event packets that repeat a timestamp do not move the clock', (t) => {
  const seq = new RtpSequencer({ clockRate: 8000, samplesPerPacket: 160 });
  const audio = packet(1, 0, 1);
  seq.rewrite(audio, 1, 0);
  const events = [0, 1, 2].map((i) => packet(i, 0, 0));
  events.forEach((e, i) => seq.rewrite(e, -2, 20 + i * 20, i === 0));
  const after = packet(2, 160, 1);
  seq.rewrite(after, 1, 200);
  t.equal(header(events[2]!).timestamp, header(events[0]!).timestamp, 'one event timestamp');
  t.equal((header(after).timestamp - header(events[0]!).timestamp) >>> 0, 1440, 'audio resumes 180 ms after the event start');
  t.end();
});
