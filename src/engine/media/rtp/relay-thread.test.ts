/**
 * The media I/O's relay thread (native/media-io/relay_thread.c): a socket whose stream the event
 * loop relayed whole moves to a thread of its own, so that relayed RTP is not held up by
 * whatever JavaScript runs; the latency target (p99 added latency under 1 ms) rests on it.
 */
import t from 'tap';
import { mediaIoAddonPath, runChild } from '../../../../test/support/child-node.js';
import { nativeMediaIo } from './native-udp.js';
import { needAvailable } from '../../../../test/support/peers.js';

const built = nativeMediaIo() !== null;

interface Seen {
  blockedMs: number;
  /** Per packet sent while the loop was blocked: ms from its send to its arrival at the far end. */
  latencies: number[];
  /** How many of them arrived before the loop was free again. */
  beforeUnblocked: number;
  records: number;
}

/**
 * In a child: the addon on the main thread relays socket a to the far end; a worker thread plays
 * the caller and the far end, so it goes on while the main thread's loop is blocked for 600 ms.
 * The caller's first packet goes through the loop (and moves the socket to the thread); ten more
 * are sent, 10 ms apart, while the loop is blocked.
 */
function script(relayThread: boolean): string {
  return `
    const io = require(${JSON.stringify(mediaIoAddonPath)});
    const { Worker } = require('node:worker_threads');
    const arena = Buffer.alloc(io.MAX_BATCH * io.SLOT_BYTES), meta = new Uint32Array(io.MAX_BATCH * io.META_STRIDE);
    const records = new Uint32Array(1 + io.MAX_RECORDS * io.RECORD_STRIDE);
    let recordCount = 0;
    io.init((count, relayed) => { recordCount += relayed; }, arena, meta, false, records, ${relayThread});
    const a = io.open(0x7f000001, 0, 1), b = io.open(0x7f000001, 0, 2);
    const worker = new Worker(\`
      const { parentPort } = require('node:worker_threads');
      const dgram = require('node:dgram');
      const caller = dgram.createSocket('udp4'), far = dgram.createSocket('udp4');
      const sentAt = new Map(), latencies = [];
      let unblocked = false, beforeUnblocked = 0;
      const rtp = (seq) => { const p = Buffer.alloc(172); p[0] = 0x80; p.writeUInt16BE(seq, 2); p.writeUInt32BE(0xabc, 8); return p; };
      far.on('message', (p) => {
        const seq = p.readUInt16BE(2);
        if (seq === 1) return parentPort.postMessage({ first: true });
        latencies.push(performance.now() - sentAt.get(seq));
        if (!unblocked) beforeUnblocked++;
      });
      parentPort.on('message', (m) => {
        if (m.port) caller.send(rtp(1), m.port, '127.0.0.1');
        if (m.blocked) {
          let seq = 2;
          const timer = setInterval(() => {
            sentAt.set(seq, performance.now());
            caller.send(rtp(seq), m.to, '127.0.0.1');
            if (++seq === 12) clearInterval(timer);
          }, 10);
        }
        if (m.unblocked) {
          unblocked = true;
          setTimeout(() => { parentPort.postMessage({ latencies, beforeUnblocked }); caller.close(); far.close(); }, 300);
        }
      });
      caller.bind(0, '127.0.0.1', () => far.bind(0, '127.0.0.1', () =>
        parentPort.postMessage({ caller: caller.address().port, far: far.address().port })));
    \`, { eval: true });
    worker.on('message', (m) => {
      if (m.caller) {
        const rule = Uint32Array.of(0x7f000001, m.caller, 0xabc, 0, b, 0x7f000001, m.far, 0x123, 0, 0, 0);
        if (io.relay(a, rule) !== 0) throw new Error('rule refused');
        worker.postMessage({ port: io.localPort(a) });
      } else if (m.first) {
        // Let the loop finish the read that relayed the first packet, then block it.
        setTimeout(() => {
          worker.postMessage({ blocked: true, to: io.localPort(a) });
          const from = performance.now();
          while (performance.now() - from < 600);
          globalThis.blockedMs = performance.now() - from;
          worker.postMessage({ unblocked: true });
        }, 50);
      } else if (m.latencies) {
        setTimeout(() => {
          console.log(JSON.stringify({ blockedMs: globalThis.blockedMs, latencies: m.latencies, beforeUnblocked: m.beforeUnblocked, records: recordCount }));
          io.close(a); io.close(b); worker.terminate();
        }, 50);
      }
    });`;
}

t.test('with the relay thread, relayed RTP flows while the event loop is blocked, and is still counted after', async (t) => {
  if (!needAvailable(t, built, 'needs the media I/O addon (npm run build:native)')) return;
  const seen = JSON.parse(await runChild(script(true), 10_000)) as Seen;
  t.ok(seen.blockedMs >= 600, 'the loop was blocked for 600 ms');
  t.equal(seen.latencies.length, 10, 'all ten packets reached the far end');
  t.equal(seen.beforeUnblocked, 10, 'while the loop was still blocked');
  const worst = Math.max(...seen.latencies);
  t.ok(worst < 200, `each within ${worst.toFixed(1)} ms of its send, not held for the block`);
  t.equal(seen.records, 11, 'and JavaScript got a record of each relayed packet, the first included, once the loop was free');
});

t.test('without it (relayThread false), the same packets wait for the loop: the test above can tell', async (t) => {
  if (!needAvailable(t, built, 'needs the media I/O addon (npm run build:native)')) return;
  const seen = JSON.parse(await runChild(script(false), 10_000)) as Seen;
  t.equal(seen.latencies.length, 10, 'all ten packets reached the far end');
  t.equal(seen.beforeUnblocked, 0, 'none while the loop was blocked');
  t.ok(Math.min(...seen.latencies) >= 200, `the earliest waited ${Math.min(...seen.latencies).toFixed(1)} ms`);
  t.equal(seen.records, 11, 'every relayed packet recorded');
});

t.test('when JavaScript falls behind by more records than the addon keeps, the relay thread waits: no record is lost or repeated', async (t) => {
  if (!needAvailable(t, built, 'needs the media I/O addon (npm run build:native)')) return;
  // The loop is blocked for 1.5 s while the caller sends 17,000 packets, at 20,000 a second: more
  // than the 16,384 records the addon keeps. The thread must stop relaying once they are full (the
  // kernel's buffer then holds, or drops, what arrives) and go on once the loop takes them. The
  // far end is a worker of its own, so that it reads as fast as the relay sends.
  const script = `
    const io = require(${JSON.stringify(mediaIoAddonPath)});
    const { Worker } = require('node:worker_threads');
    const arena = Buffer.alloc(io.MAX_BATCH * io.SLOT_BYTES), meta = new Uint32Array(io.MAX_BATCH * io.META_STRIDE);
    const records = new Uint32Array(1 + io.MAX_RECORDS * io.RECORD_STRIDE);
    let recordCount = 0, increasing = true, last = 0, largest = 0;
    io.init((count, relayed) => {
      largest = Math.max(largest, relayed);
      for (let i = 0; i < relayed; i++) {
        const seq = records[1 + i * io.RECORD_STRIDE + 1];
        if (seq <= last) increasing = false;
        last = seq;
      }
      recordCount += relayed;
    }, arena, meta, false, records, true);
    const a = io.open(0x7f000001, 0, 1), b = io.open(0x7f000001, 0, 2);
    const far = new Worker(\`
      const { parentPort } = require('node:worker_threads');
      const far = require('node:dgram').createSocket('udp4');
      let atFar = 0, afterUnblock = 0, unblocked = false;
      // What the kernel dropped at this socket, its receive buffer full while this worker waited
      // for a core: relayed, so recorded, but never read here (the last column of /proc/net/udp).
      const drops = () => {
        const port = far.address().port.toString(16).toUpperCase().padStart(4, '0');
        const line = require('node:fs').readFileSync('/proc/net/udp', 'utf8').split(String.fromCharCode(10)).find((l) => l.includes(':' + port + ' '));
        return line ? Number(line.trim().split(/ +/).at(-1)) : 0;
      };
      far.on('message', () => {
        if (++atFar === 1) parentPort.postMessage({ first: true });
        if (unblocked) afterUnblock++;
      });
      parentPort.on('message', (m) => {
        if (m.unblocked) unblocked = true;
        // Counted once the far end has been quiet for 200 ms: a loaded host may still be relaying.
        const quiet = (before) => setTimeout(() => {
          if (atFar !== before) return quiet(atFar);
          parentPort.postMessage({ atFar, afterUnblock, dropped: drops() });
          far.close();
        }, 200);
        if (m.report) quiet(atFar);
      });
      far.bind(0, '127.0.0.1', () => parentPort.postMessage({ far: far.address().port }));
    \`, { eval: true });
    const caller = new Worker(\`
      const { parentPort } = require('node:worker_threads');
      const caller = require('node:dgram').createSocket('udp4');
      const rtp = (seq) => { const p = Buffer.alloc(32); p[0] = 0x80; p.writeUInt16BE(seq, 2); p.writeUInt32BE(0xabc, 8); return p; };
      parentPort.on('message', (m) => {
        if (m.first) caller.send(rtp(1), m.to, '127.0.0.1');
        if (m.rest) {
          let seq = 2;
          const timer = setInterval(() => {
            for (let i = 0; i < 20 && seq <= 17000; i++) caller.send(rtp(seq++), m.to, '127.0.0.1');
            if (seq > 17000) { clearInterval(timer); parentPort.postMessage({ sent: true }); caller.close(); }
          }, 1);
        }
      });
      caller.bind(0, '127.0.0.1', () => parentPort.postMessage({ caller: caller.address().port }));
    \`, { eval: true });
    let farPort = 0, callerPort = 0, sentAll = false, reportDue = false;
    // The far end counts once the caller sent everything and the loop has been free a while.
    const report = () => { if (sentAll && reportDue) far.postMessage({ report: true }); };
    const ready = () => {
      if (!farPort || !callerPort) return;
      const rule = Uint32Array.of(0x7f000001, callerPort, 0xabc, 0, b, 0x7f000001, farPort, 0x123, 0, 0, 0);
      if (io.relay(a, rule) !== 0) throw new Error('rule refused');
      caller.postMessage({ first: true, to: io.localPort(a) });
    };
    caller.on('message', (m) => {
      if (m.caller) { callerPort = m.caller; ready(); }
      if (m.sent) { sentAll = true; report(); }
    });
    far.on('message', (m) => {
      if (m.far) { farPort = m.far; ready(); }
      if (m.first) {
        // The first packet went through the loop, which gave the socket to the thread; block the loop.
        setTimeout(() => {
          caller.postMessage({ rest: true, to: io.localPort(a) });
          const from = Date.now();
          while (Date.now() - from < 1500);
          far.postMessage({ unblocked: true });
          setTimeout(() => { reportDue = true; report(); }, 500);
        }, 50);
      }
      if (m.atFar !== undefined) {
        io.takeRelayed(); // (any records not yet handed over come with this call's next batch)
        setTimeout(() => {
          console.log(JSON.stringify({ atFar: m.atFar, afterUnblock: m.afterUnblock, dropped: m.dropped, recordCount, increasing, largest, sentAll }));
          io.close(a); io.close(b); caller.terminate(); far.terminate();
        }, 100);
      }
    });`;
  const seen = JSON.parse(await runChild(script, 20_000)) as { atFar: number; afterUnblock: number; dropped: number; recordCount: number; increasing: boolean; largest: number; sentAll: boolean };
  t.ok(seen.sentAll, 'the caller sent all 17,000');
  // Relayed is what reached the far end plus what its kernel dropped there (counted per socket):
  // on a loaded host the far end's receive buffer overflows, and those packets were relayed too.
  t.ok(seen.atFar + seen.dropped > 16_384, `more packets were relayed (${seen.atFar} + ${seen.dropped} dropped at the far end) than the addon keeps records`);
  t.ok(seen.afterUnblock > 0, `the thread went on relaying once the loop took the records (${seen.afterUnblock} after)`);
  t.equal(seen.recordCount, seen.atFar + seen.dropped, `one record for every packet relayed, none lost or repeated (${seen.dropped} dropped at the far end's full buffer)`);
  t.ok(seen.increasing, 'records in the order the packets arrived');
  t.ok(seen.largest <= 16_384, `no hand-over beyond the records array (${seen.largest})`);
});
