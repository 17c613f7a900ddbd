/** The HEP3 export (sipcapture HEP3 specification), read back by a UDP receiver on loopback that parses the chunks. */
import { createSocket } from 'node:dgram';
import t from 'tap';
import { parseHep3 } from '../../../test/support/hep3.js';
import { HEP_CHUNK, HepExporter } from './hep-exporter.js';

t.test('HEP3: each SIP message goes to the collector as one datagram with addresses, ports, time, capture id and the masked message', async (t) => {
  const collector = createSocket('udp4');
  await new Promise<void>((resolve) => collector.bind(0, '127.0.0.1', resolve));
  t.teardown(() => collector.close());
  const received = new Promise<Buffer>((resolve) => collector.once('message', resolve));
  const failures: number[] = [];
  const exporter = new HepExporter({ host: '127.0.0.1', port: collector.address().port, id: 2001, onFailure: () => failures.push(1) });
  t.teardown(() => exporter.close());
  const sip = 'INVITE sip:+15550100@gw SIP/2.0\r\nCall-ID: abc\r\nProxy-Authorization: Digest username="u", response="0123456789abcdef"\r\n\r\n';
  const at = Date.UTC(2026, 10, 26, 10, 0, 0, 123);
  exporter.message({ direction: 'sent', at, protocol: 'UDP', source: { address: '192.0.2.10', port: 5060 }, destination: { address: '198.51.100.7', port: 5080 }, data: Buffer.from(sip) });
  const chunks = parseHep3(await received);
  t.same([...chunks.get(HEP_CHUNK.ipFamily)!], [2], 'AF_INET');
  t.same([...chunks.get(HEP_CHUNK.ipProtocol)!], [17], 'UDP');
  t.same([...chunks.get(HEP_CHUNK.srcIp4)!], [192, 0, 2, 10]);
  t.same([...chunks.get(HEP_CHUNK.dstIp4)!], [198, 51, 100, 7]);
  t.equal(chunks.get(HEP_CHUNK.srcPort)!.readUInt16BE(0), 5060);
  t.equal(chunks.get(HEP_CHUNK.dstPort)!.readUInt16BE(0), 5080);
  t.equal(chunks.get(HEP_CHUNK.timeSeconds)!.readUInt32BE(0), Math.floor(at / 1000));
  t.equal(chunks.get(HEP_CHUNK.timeMicros)!.readUInt32BE(0), 123_000);
  t.same([...chunks.get(HEP_CHUNK.protocolType)!], [1], 'SIP');
  t.equal(chunks.get(HEP_CHUNK.captureId)!.readUInt32BE(0), 2001);
  const payload = chunks.get(HEP_CHUNK.payload)!.toString('utf8');
  t.match(payload, /^INVITE sip:\+15550100@gw SIP\/2\.0\r\n/);
  t.notMatch(payload, '0123456789abcdef', 'the digest response is masked as in the stored trace');
  t.same(failures, []);
});
