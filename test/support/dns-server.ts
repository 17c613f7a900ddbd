/**
 * A DNS server on loopback UDP for tests (RFC 1035 §4): answers A and AAAA questions from a table
 * the test changes as it goes, NXDOMAIN for names it does not know, and nothing at all for names
 * marked silent; counts the questions it got per name and type.
 */
import { createSocket } from 'node:dgram';
import type { Test } from 'tap';

export type DnsRecord = { type: 'A' | 'AAAA'; address: string; ttl: number };

const TYPES = { 1: 'A', 28: 'AAAA' } as const;

export async function startDnsServer(t: Test) {
  const records = new Map<string, DnsRecord[]>();
  const silent = new Set<string>();
  const asked = new Map<string, number>();
  const socket = createSocket('udp4');
  socket.on('message', (query, peer) => {
    let at = 12;
    const labels: string[] = [];
    while (query[at]! > 0) {
      labels.push(query.toString('latin1', at + 1, at + 1 + query[at]!));
      at += 1 + query[at]!;
    }
    const questionEnd = at + 5;
    const name = labels.join('.').toLowerCase();
    const type = TYPES[query.readUInt16BE(at + 1) as keyof typeof TYPES];
    asked.set(`${name} ${type}`, (asked.get(`${name} ${type}`) ?? 0) + 1);
    if (silent.has(name)) return;
    const known = records.get(name);
    const answers = (known ?? []).filter((r) => r.type === type).map((r) => {
      const data = r.type === 'A' ? Buffer.from(r.address.split('.').map(Number)) : ipv6Bytes(r.address);
      const head = Buffer.alloc(12);
      head.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      head.writeUInt16BE(r.type === 'A' ? 1 : 28, 2);
      head.writeUInt16BE(1, 4); // IN
      head.writeUInt32BE(r.ttl, 6);
      head.writeUInt16BE(data.length, 10);
      return Buffer.concat([head, data]);
    });
    const header = Buffer.alloc(12);
    query.copy(header, 0, 0, 2); // the id
    header.writeUInt16BE(known ? 0x8180 : 0x8183, 2); // a response, recursion desired and available; NOERROR or NXDOMAIN
    header.writeUInt16BE(1, 4);
    header.writeUInt16BE(answers.length, 6);
    socket.send(Buffer.concat([header, query.subarray(12, questionEnd), ...answers]), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => socket.close());
  return { server: `127.0.0.1:${socket.address().port}`, records, silent, asked: (name: string, type: 'A' | 'AAAA') => asked.get(`${name} ${type}`) ?? 0 };
}

function ipv6Bytes(address: string): Buffer {
  const [head, tail = ''] = address.split('::');
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const words = [...groups(head!), ...Array<string>(8 - groups(head!).length - groups(tail).length).fill('0'), ...groups(tail)];
  const bytes = Buffer.alloc(16);
  words.forEach((word, i) => bytes.writeUInt16BE(parseInt(word, 16), i * 2));
  return bytes;
}
