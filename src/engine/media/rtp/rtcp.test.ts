import t from 'tap';
import { buildCompoundReport, ntpMiddle32, parseRtcpReports, RTCP_RR, RTCP_SDES, RTCP_SR } from './rtcp.js';

const block = { ssrc: 0x1234, fractionLost: 25, cumulativeLost: 9, extendedHighestSeq: 70000, jitter: 80, lastSr: 0xaabbccdd, delaySinceLastSr: 65536 };

t.test('RFC 3550 6.4.1: a sender report round-trips sender info and report blocks', (t) => {
  const buf = buildCompoundReport({
    ssrc: 0xcafe,
    cname: 'vgw@127.0.0.1',
    senderInfo: { ntpMs: Date.UTC(2026, 0, 1, 12, 0, 0, 500), rtpTimestamp: 123456, packetCount: 50, octetCount: 8000 },
    reports: [block],
  });
  t.equal(buf.length % 4, 0, 'compound packet is word aligned');
  t.equal(buf[1], RTCP_SR);
  const [sr] = parseRtcpReports(buf);
  t.equal(sr!.ssrc, 0xcafe);
  t.equal(sr!.senderInfo!.packetCount, 50);
  t.equal(sr!.senderInfo!.octetCount, 8000);
  t.equal(sr!.senderInfo!.rtpTimestamp, 123456);
  t.ok(Math.abs(sr!.senderInfo!.ntpMs - Date.UTC(2026, 0, 1, 12, 0, 0, 500)) < 1);
  t.same(sr!.reports, [block]);
  t.end();
});

t.test('RFC 3550 6.4.2: without sent data the report is an RR; cumulative lost is signed 24-bit', (t) => {
  const buf = buildCompoundReport({ ssrc: 1, cname: 'x', senderInfo: null, reports: [{ ...block, cumulativeLost: -3 }] });
  t.equal(buf[1], RTCP_RR);
  t.equal(buf[0]! & 0x1f, 1, 'RC');
  const [rr] = parseRtcpReports(buf);
  t.equal(rr!.packetType, RTCP_RR);
  t.equal(rr!.senderInfo, null);
  t.equal(rr!.reports[0]!.cumulativeLost, -3);
  t.end();
});

t.test('RFC 3550 6.1 and 6.5: SDES CNAME follows the report in the compound packet', (t) => {
  const buf = buildCompoundReport({ ssrc: 77, cname: 'abc', senderInfo: null, reports: [] });
  const rrLength = (buf.readUInt16BE(2) + 1) * 4;
  t.equal(rrLength, 8, 'an RR with no blocks is two words');
  t.equal(buf[rrLength + 1], RTCP_SDES);
  t.equal(buf.readUInt32BE(rrLength + 4), 77);
  t.equal(buf[rrLength + 8], 1, 'CNAME item');
  t.equal(buf.toString('utf8', rrLength + 10, rrLength + 13), 'abc');
  t.equal(buf[rrLength + 13], 0, 'chunk ends with a null octet');
  t.end();
});

t.test('truncated or foreign packets end the walk without throwing', (t) => {
  t.same(parseRtcpReports(Buffer.from([0x80, 200, 0x00, 0x10, 0, 0])), []);
  t.same(parseRtcpReports(Buffer.from([0x00, 0x00])), []);
  t.end();
});

t.test('RFC 3550 6.4.1: an SR or RR whose length field is shorter than its fixed part ends the walk without throwing', (t) => {
  t.same(parseRtcpReports(Buffer.from([0x80, RTCP_SR, 0, 0])), [], 'SR of one word');
  t.same(parseRtcpReports(Buffer.from([0x80, RTCP_RR, 0, 0])), [], 'RR of one word');
  t.same(parseRtcpReports(Buffer.from([0x80, RTCP_SR, 0, 1, 0, 0, 0, 1])), [], 'SR without its sender info');
  t.same(parseRtcpReports(Buffer.from([0x81, RTCP_SR, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0])), [], 'SR claiming a block it lacks');
  const rr = parseRtcpReports(Buffer.from([0x81, RTCP_RR, 0, 1, 0, 0, 0, 7]));
  t.same(rr.map((r) => [r.ssrc, r.reports.length]), [[7, 0]], 'RR claiming one block in two words: its SSRC, no block');
  t.end();
});

t.test('RFC 3550 6.4.1: LSR is the middle 32 bits of the NTP timestamp', (t) => {
  const ms = Date.UTC(2026, 0, 1);
  const a = ntpMiddle32(ms);
  const b = ntpMiddle32(ms + 1000);
  t.equal((b - a) >>> 0, 65536, 'one second is 65536 units');
  t.end();
});
