import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import t from 'tap';
import { mediaIoAddonPath, runChild } from '../../../../test/support/child-node.js';
import type { MediaSocket } from './media-socket.js';
import { ipv4ToUint32, nativeMediaIo, uint32ToIpv4, type NativeMediaIo } from './native-udp.js';
import { needAvailable } from '../../../../test/support/peers.js';
import { timedOut } from '../../../../test/support/deadline.js';

interface Received {
  data: Buffer;
  address: string;
  port: number;
}

async function dgramPeer(t: { teardown(fn: () => void): void }): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  t.teardown(() => socket.close());
  return socket;
}

function collect(socket: MediaSocket): Received[] {
  const got: Received[] = [];
  socket.onDatagram = (data, address, port) => got.push({ data, address, port });
  return got;
}

async function until(check: () => boolean, ms = 2000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw timedOut(check.toString(), ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const io = nativeMediaIo();
const addonPath = mediaIoAddonPath;

t.test('the media I/O addon is built and loads on Linux (npm run build:native)', (t) => {
  if (!needAvailable(t, process.platform === 'linux', 'needs Linux: the media I/O addon is Linux only')) return;
  t.ok(io, 'nativeMediaIo() returns the addon');
  t.end();
});

t.test('IPv4 literals convert both ways; anything else is refused', (t) => {
  t.equal(ipv4ToUint32('127.0.0.1'), 0x7f000001);
  t.equal(ipv4ToUint32('255.255.255.255'), 0xffffffff);
  t.equal(ipv4ToUint32('0.0.0.0'), 0);
  for (const bad of ['256.0.0.1', '1.2.3', '1.2.3.4.5', ' 1.2.3.4', '1.2.3.-4', '1..2.3', '::1', 'localhost', '1.2.3.4 ', '1e2.0.0.1']) {
    t.equal(ipv4ToUint32(bad), -1, bad);
  }
  t.equal(uint32ToIpv4(0x7f000001), '127.0.0.1');
  t.equal(uint32ToIpv4(0xc0a80a01), '192.168.10.1');
  t.end();
});

t.test('native sockets', (t) => {
  if (!needAvailable(t, io, 'needs the media I/O addon (npm run build:native)')) return;
  const media = io as NativeMediaIo;
  const open = (port = 0): MediaSocket => {
    const socket = media.open('127.0.0.1', port);
    t.teardown(() => socket.close());
    return socket;
  };

  t.test('a datagram arrives with its source, and a send reaches the peer', async (t) => {
    const socket = open();
    const peer = await dgramPeer(t);
    const got = collect(socket);
    peer.send(Buffer.from('hello'), socket.port, '127.0.0.1');
    await until(() => got.length === 1);
    t.equal(got[0]!.data.toString(), 'hello');
    t.equal(got[0]!.address, '127.0.0.1');
    t.equal(got[0]!.port, peer.address().port);
    const back = new Promise<Buffer>((resolve) => peer.once('message', resolve));
    socket.send(Buffer.from('world'), peer.address().port, '127.0.0.1');
    t.equal((await back).toString(), 'world');
  });

  t.test('bursts larger than one batch arrive whole and in order, each datagram in its own buffer', async (t) => {
    // 150 each: more than one socket may take per wake-up (32), and 300 in all, more than a batch
    // holds (256); each stays within what a default receive buffer queues (about 256 small datagrams).
    const sockets = [open(), open()];
    const peer = await dgramPeer(t);
    const got = sockets.map(collect);
    for (let i = 0; i < 150; i++) for (const socket of sockets) peer.send(Buffer.from([i >> 8, i & 255]), socket.port, '127.0.0.1');
    await until(() => got[0]!.length === 150 && got[1]!.length === 150);
    for (const received of got) t.same(received.map((r) => r.data.readUInt16BE(0)), Array.from({ length: 150 }, (_, i) => i));
    got[0]![0]!.data[1] = 0xaa;
    t.equal(got[0]![1]!.data.readUInt16BE(0), 1, 'buffers do not share bytes');
  });

  t.test('every datagram arrives whole, up to the largest UDP allows', async (t) => {
    const socket = open();
    const peer = await dgramPeer(t);
    const got = collect(socket);
    peer.send(Buffer.alloc(65_000, 1), socket.port, '127.0.0.1');
    peer.send(Buffer.alloc(0), socket.port, '127.0.0.1');
    peer.send(Buffer.from('after'), socket.port, '127.0.0.1');
    await until(() => got.length === 3);
    t.equal(got[0]!.data.length, 65_000);
    t.ok(got[0]!.data.every((b) => b === 1));
    t.equal(got[1]!.data.length, 0, 'an empty datagram is a datagram');
    t.equal(got[2]!.data.toString(), 'after');
  });

  t.test('a bound port fails with EADDRINUSE, a non-literal with EINVAL, and a closed port can be bound again', async (t) => {
    const taken = await dgramPeer(t);
    t.throws(() => media.open('127.0.0.1', taken.address().port), { code: 'EADDRINUSE', syscall: 'bind' });
    t.throws(() => media.open('localhost', 0), { code: 'EINVAL' });
    const socket = media.open('127.0.0.1', 0);
    const port = socket.port;
    t.ok(port > 0, 'port 0 reports the port the kernel chose');
    socket.close();
    socket.close();
    const again = open(port);
    t.equal(again.port, port);
  });

  t.test('a socket closed by another socket handler in the same batch gets nothing more', async (t) => {
    const first = open();
    const second = open();
    const peer = await dgramPeer(t);
    let secondCalls = 0;
    second.onDatagram = () => secondCalls++;
    const got = collect(first);
    first.onDatagram = (data, address, port) => {
      got.push({ data, address, port });
      second.close();
    };
    peer.send(Buffer.from('a'), first.port, '127.0.0.1');
    peer.send(Buffer.from('b'), second.port, '127.0.0.1');
    peer.send(Buffer.from('c'), first.port, '127.0.0.1');
    await until(() => got.length === 2);
    await new Promise((resolve) => setTimeout(resolve, 20));
    t.equal(secondCalls, 0);
    const before = media.openSockets;
    second.send(Buffer.from('x'), peer.address().port, '127.0.0.1');
    t.equal(media.openSockets, before, 'a send on a closed socket is a no-op');
  });
  t.end();
});

t.test('an open socket keeps the process alive; closing the last one lets it exit', async (t) => {
  if (!needAvailable(t, io, 'needs the media I/O addon (npm run build:native)')) return;
  const addon = addonPath;
  // Plain JavaScript in a child: the addon alone, no timers, so only the socket can hold the loop.
  const script = `
    const io = require(${JSON.stringify(addon)});
    const arena = Buffer.alloc(io.MAX_BATCH * io.SLOT_BYTES), meta = new Uint32Array(io.MAX_BATCH * io.META_STRIDE);
    const records = new Uint32Array(1 + io.MAX_RECORDS * io.RECORD_STRIDE);
    let fd;
    io.init((count) => { console.log('received ' + count); io.close(fd); }, arena, meta, false, records);
    fd = io.open(0x7f000001, 0, 7);
    setImmediate(() => io.send(fd, Buffer.from('x'), 0x7f000001, io.localPort(fd)));`;
  const child = spawn(process.execPath, ['-e', script]);
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => {
    const timer = setTimeout(() => child.kill(), 5000);
    child.on('exit', (exitCode) => {
      clearTimeout(timer);
      resolve(exitCode);
    });
  });
  t.equal(out.trim(), 'received 1', 'the loop waited for the datagram');
  t.equal(code, 0, 'and ended once the socket closed');
});

t.test('receive timestamps: each datagram carries how long it waited after the kernel received it', async (t) => {
  if (!needAvailable(t, io, 'needs the media I/O addon (npm run build:native)')) return;
  // In a child, since the addon is set up once per thread: a datagram that arrives while the
  // thread is busy for 50 ms must report an age of at least that, and NO_AGE is never reported.
  const script = `
    const io = require(${JSON.stringify(addonPath)});
    const arena = Buffer.alloc(io.MAX_BATCH * io.SLOT_BYTES), meta = new Uint32Array(io.MAX_BATCH * io.META_STRIDE);
    const records = new Uint32Array(1 + io.MAX_RECORDS * io.RECORD_STRIDE);
    let fd;
    // The kernel turns receive stamping on shortly after the first socket asks (a deferred static
    // key, enabled from a work queue: later on a busy machine); until then it stamps at read time.
    // Media sockets are open long before media flows, so probes wait for it: a probe sent 5 ms
    // before the loop can read it shows an age of 5 ms once stamping is on.
    let probes = 0;
    const sendAfterBusy = (ms) => {
      io.send(fd, Buffer.from(ms === 50 ? 'stamp' : 'probe'), 0x7f000001, io.localPort(fd));
      const until = Date.now() + ms;
      while (Date.now() < until);
    };
    io.init((count) => {
      if (meta[1] === 5 && Buffer.from(arena.subarray(0, 5)).toString() === 'probe') {
        probes++;
        if (meta[4] >= 4e6 || probes >= 200) setTimeout(() => sendAfterBusy(50), 20);
        else setTimeout(() => sendAfterBusy(5), 20);
        return;
      }
      console.log(JSON.stringify({ count, ageNs: meta[4], length: meta[1], probes }));
      io.close(fd);
    }, arena, meta, true, records);
    fd = io.open(0x7f000001, 0, 9);
    setTimeout(() => sendAfterBusy(5), 20);`;
  const out = await runChild(script);
  const seen = JSON.parse(out.trim()) as { count: number; ageNs: number; length: number; probes: number };
  t.comment(`receive stamping on after ${seen.probes} probe(s)`);
  t.equal(seen.count, 1);
  t.equal(seen.length, 5);
  t.ok(seen.ageNs >= 45e6 && seen.ageNs < 5e9, `age ${seen.ageNs} ns covers the 50 ms the thread was busy`);
});

t.test('relay rules: qualifying RTP is rewritten and sent on the other socket, anything else reaches JavaScript whole', async (t) => {
  if (!needAvailable(t, io, 'needs the media I/O addon (npm run build:native)')) return;
  const peer = await dgramPeer(t);
  const stranger = await dgramPeer(t);
  const far = await dgramPeer(t);
  const atFar: Buffer[] = [];
  far.on('message', (data) => atFar.push(data));
  const a = io!.open('127.0.0.1', 0);
  const b = io!.open('127.0.0.1', 0);
  t.teardown(() => (a.close(), b.close()));
  const toJs = collect(a);
  const relayed: number[][] = [];
  const ages: number[] = [];
  a.onRelayed = (seq, ts, ssrc, length, ageMs) => (relayed.push([seq, ts, ssrc, length]), ages.push(ageMs));
  const rule = {
    peer: { address: '127.0.0.1', port: peer.address().port }, ssrc: 0xabcdef01, payloadType: 0,
    destination: { address: '127.0.0.1', port: far.address().port }, outSsrc: 0x12345678, sequenceOffset: 10, timestampOffset: 0xfffffff0, outPayloadType: 8,
  };
  t.ok(a.relay(rule, b), 'the rule is accepted');
  const rtp = (options: { seq?: number; ssrc?: number; b0?: number; b1?: number; payload?: number; tail?: Buffer } = {}): Buffer => {
    const head = Buffer.alloc(12);
    head[0] = options.b0 ?? 0x80;
    head[1] = options.b1 ?? 0x80; // marker set, PCMU
    head.writeUInt16BE(options.seq ?? 65530, 2);
    head.writeUInt32BE(0x100, 4);
    head.writeUInt32BE(options.ssrc ?? 0xabcdef01, 8);
    return Buffer.concat([head, options.tail ?? Buffer.alloc(0), Buffer.alloc(options.payload ?? 160, 0x55)]);
  };
  const send = (from: Socket, data: Buffer): Promise<void> => new Promise((resolve) => from.send(data, a.port, '127.0.0.1', () => resolve()));

  await send(peer, rtp());
  await until(() => atFar.length === 1);
  const out = atFar[0]!;
  t.equal(out[1], 0x80 | 8, 'payload type rewritten, marker kept');
  t.equal(out.readUInt16BE(2), (65530 + 10) & 0xffff, 'sequence number offset, modulo 2^16');
  t.equal(out.readUInt32BE(4), (0x100 + 0xfffffff0) >>> 0, 'timestamp offset, modulo 2^32');
  t.equal(out.readUInt32BE(8), 0x12345678, 'SSRC rewritten');
  t.ok(out.subarray(12).equals(Buffer.alloc(160, 0x55)), 'payload untouched');
  await until(() => relayed.length === 1);
  t.same(relayed[0], [65530, 0x100, 0xabcdef01, 172], 'JavaScript learns the header as it arrived');
  t.ok(ages[0]! >= 0 && ages[0]! < 1000, `and how long ago it arrived (${ages[0]} ms)`);
  t.equal(toJs.length, 0, 'and does not get the datagram itself');

  const refused: [string, Socket, Buffer][] = [
    ['another SSRC', peer, rtp({ ssrc: 7 })],
    ['another payload type', peer, rtp({ b1: 0x08 })],
    ['RTCP on the RTP port (RFC 5761 4)', peer, rtp({ b1: 200 })],
    ['RTP version 1', peer, rtp({ b0: 0x40 })],
    ['another source address', stranger, rtp()],
    ['a payload beyond an Ethernet MTU', peer, rtp({ payload: 1501 })],
    ['padding longer than the packet', peer, rtp({ b0: 0xa0, payload: 0, tail: Buffer.from([0xff]) })],
    ['an extension header that overruns the packet', peer, rtp({ b0: 0x90, payload: 0, tail: Buffer.from([0, 0, 0, 9]) })],
    ['a header shorter than 12 octets', peer, Buffer.from([0x80, 0x00, 0x01])],
  ];
  for (const [, from, data] of refused) await send(from, data);
  await until(() => toJs.length === refused.length);
  refused.forEach(([why, , data], i) => t.ok(toJs[i]!.data.equals(data), `${why}: to JavaScript, unchanged`));
  t.equal(atFar.length, 1, 'none of them relayed');

  t.ok(a.relay(null), 'the rule is removed');
  await send(peer, rtp({ seq: 1 }));
  await until(() => toJs.length === refused.length + 1);
  t.equal(atFar.length, 1, 'without a rule a qualifying packet goes to JavaScript');

  t.ok(a.relay(rule, b));
  b.close();
  t.notOk(a.relay(rule, b), 'no rule through a closed socket');
  const c = io!.open('127.0.0.1', 0); // likely the descriptor b had
  t.teardown(() => c.close());
  await send(peer, rtp({ seq: 2 }));
  await until(() => toJs.length === refused.length + 2);
  t.equal(atFar.length, 1, 'a rule whose socket closed is dead, even if the descriptor is reused');
});

t.test('relayed datagrams are reported in bulk: a read that only relays calls no JavaScript, and records come before later datagrams', async (t) => {
  if (!needAvailable(t, io, 'needs the media I/O addon (npm run build:native)')) return;
  // In a child, with the addon alone, so that every call into JavaScript is seen.
  const script = `
    const io = require(${JSON.stringify(addonPath)});
    const dgram = require('node:dgram');
    const arena = Buffer.alloc(io.MAX_BATCH * io.SLOT_BYTES), meta = new Uint32Array(io.MAX_BATCH * io.META_STRIDE);
    const records = new Uint32Array(1 + io.MAX_RECORDS * io.RECORD_STRIDE);
    const events = [];
    let sentAt = 0, firstCallAfterMs = -1;
    io.init((count, relayed) => {
      if (firstCallAfterMs < 0) firstCallAfterMs = Date.now() - sentAt;
      for (let i = 0; i < relayed; i++) events.push('record ' + records[1 + i * io.RECORD_STRIDE + 1]);
      for (let i = 0; i < count; i++) if (meta[i * io.META_STRIDE + 1] < 0x80000000) events.push('datagram ' + meta[i * io.META_STRIDE + 1]);
    }, arena, meta, false, records);
    const a = io.open(0x7f000001, 0, 1), b = io.open(0x7f000001, 0, 2);
    const peer = dgram.createSocket('udp4'), far = dgram.createSocket('udp4');
    let atFar = 0;
    far.on('message', () => atFar++);
    const rtp = (seq, ssrc) => {
      const p = Buffer.alloc(172);
      p[0] = 0x80; p.writeUInt16BE(seq, 2); p.writeUInt32BE(ssrc, 8);
      return p;
    };
    peer.bind(0, '127.0.0.1', () => far.bind(0, '127.0.0.1', () => {
      const rule = Uint32Array.of(0x7f000001, peer.address().port, 0xabc, 0, b, 0x7f000001, far.address().port, 0x123, 0, 0, 0);
      if (io.relay(a, rule) !== 0) throw new Error('rule refused');
      sentAt = Date.now();
      for (let seq = 1; seq <= 10; seq++) peer.send(rtp(seq, 0xabc), io.localPort(a), '127.0.0.1');
      setTimeout(() => {
        events.push('-');
        for (let seq = 11; seq <= 13; seq++) peer.send(rtp(seq, 0xabc), io.localPort(a), '127.0.0.1');
        peer.send(rtp(14, 0xdef), io.localPort(a), '127.0.0.1');
        setTimeout(() => {
          console.log(JSON.stringify({ events, firstCallAfterMs, atFar }));
          io.close(a); io.close(b); peer.close(); far.close();
        }, 300);
      }, 300);
    }));`;
  const out = await runChild(script);
  const seen = JSON.parse(out.trim()) as { events: string[]; firstCallAfterMs: number; atFar: number };
  t.equal(seen.atFar, 13, 'thirteen datagrams relayed');
  const first = seen.events.slice(0, seen.events.indexOf('-'));
  t.same(first, Array.from({ length: 10 }, (_, i) => `record ${i + 1}`), 'the first ten reach JavaScript as records only, in order');
  t.ok(seen.firstCallAfterMs >= 15, `and only when the records were due (${seen.firstCallAfterMs} ms after they were sent; they wait up to 20 ms)`);
  t.same(seen.events.slice(first.length + 1), ['record 11', 'record 12', 'record 13', 'datagram 172'], 'records of earlier datagrams come before a datagram for JavaScript');
});

t.test('catchUp reports every relayed datagram at once (MediaSocket.catchUp)', async (t) => {
  if (!needAvailable(t, io, 'needs the media I/O addon (npm run build:native)')) return;
  const peer = await dgramPeer(t);
  const far = await dgramPeer(t);
  let atFar = 0;
  far.on('message', () => atFar++);
  const a = io!.open('127.0.0.1', 0);
  const b = io!.open('127.0.0.1', 0);
  t.teardown(() => (a.close(), b.close()));
  let reported = 0;
  a.onRelayed = () => reported++;
  const rule = {
    peer: { address: '127.0.0.1', port: peer.address().port }, ssrc: 0x55, payloadType: 0,
    destination: { address: '127.0.0.1', port: far.address().port }, outSsrc: 0x66, sequenceOffset: 0, timestampOffset: 0, outPayloadType: 0,
  };
  t.ok(a.relay(rule, b));
  for (let round = 1; round <= 5; round++) {
    const packet = Buffer.alloc(172);
    packet[0] = 0x80;
    packet.writeUInt16BE(round, 2);
    packet.writeUInt32BE(0x55, 8);
    peer.send(packet, a.port, '127.0.0.1');
    await until(() => atFar === round, 2000);
    a.catchUp();
    t.equal(reported, round, `round ${round}: reported as soon as it was relayed and caught up`);
  }
});
