import t from 'tap';
import { ReceptionStats } from './reception-stats.js';

t.test('RFC 3550 A.1: a source is valid after MIN_SEQUENTIAL packets in sequence', (t) => {
  const s = new ReceptionStats(8000);
  t.equal(s.update(1, 500, 0, 0), false, 'first packet on probation');
  t.equal(s.update(1, 501, 160, 20), true);
  t.equal(s.snapshot().packetsReceived, 1);
  t.end();
});

t.test('RFC 3550 A.3: expected, lost and fraction lost over a report interval', (t) => {
  const s = new ReceptionStats(8000);
  for (let seq = 1000; seq < 1100; seq++) {
    if (seq % 10 === 0 && seq > 1001) continue;
    s.update(7, seq, seq * 160, seq * 20);
  }
  const snap = s.snapshot();
  t.equal(snap.packetsExpected, 99);
  t.equal(snap.packetsLost, 9);
  const block = s.reportBlock();
  t.equal(block.cumulativeLost, 9);
  t.equal(block.fractionLost, Math.floor((9 * 256) / 99));
  t.equal(block.extendedHighestSeq, 1099);
  for (let seq = 1100; seq < 1110; seq++) s.update(7, seq, seq * 160, seq * 20);
  t.equal(s.reportBlock().fractionLost, 0, 'a clean interval reports no loss');
  t.end();
});

t.test('RFC 3550 A.1: sequence wrap-around counts a cycle', (t) => {
  const s = new ReceptionStats(8000);
  for (let i = 0; i < 10; i++) s.update(3, (65530 + i) & 0xffff, i * 160, i * 20);
  const block = s.reportBlock();
  t.equal(block.extendedHighestSeq, 65536 + 3);
  t.equal(block.cumulativeLost, 0);
  t.end();
});

t.test('RFC 3550 A.1: a large jump is taken as a restart only when confirmed by the next packet', (t) => {
  const s = new ReceptionStats(8000);
  for (let seq = 10; seq < 20; seq++) s.update(3, seq, seq * 160, seq * 20);
  t.equal(s.update(3, 30000, 0, 400), false, 'one stray packet is ignored');
  t.equal(s.update(3, 30001, 160, 420), true, 'the next in sequence resyncs');
  t.equal(s.snapshot().packetsExpected, 1);
  t.end();
});

t.test('RFC 3550 A.8: constant transit gives zero jitter', (t) => {
  const s = new ReceptionStats(8000);
  for (let i = 0; i < 50; i++) s.update(1, i, i * 160, 1000 + i * 20);
  t.equal(s.reportBlock().jitter, 0);
  t.end();
});

t.test('RFC 3550 A.8: J converges to the mean deviation of transit, in timestamp units', (t) => {
  const s = new ReceptionStats(8000);
  // Every other packet arrives 10 ms (80 units) late, so |D| is 80 for each pair.
  for (let i = 0; i < 400; i++) s.update(1, i, i * 160, 1000 + i * 20 + (i % 2) * 10);
  const block = s.reportBlock();
  t.ok(block.jitter >= 79 && block.jitter <= 80, `jitter ${block.jitter}`);
  t.ok(Math.abs(s.snapshot().jitterMs - 10) < 0.2);
  t.end();
});

t.test('a new SSRC restarts the statistics', (t) => {
  const s = new ReceptionStats(8000);
  for (let i = 0; i < 10; i++) s.update(1, i, i * 160, i * 20);
  for (let i = 0; i < 5; i++) s.update(2, 900 + i, i * 160, 200 + i * 20);
  t.equal(s.ssrc, 2);
  t.equal(s.snapshot().packetsReceived, 4);
  t.end();
});
