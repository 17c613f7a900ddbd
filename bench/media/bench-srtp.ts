/**
 * @module What SRTP costs per packet (RFC 3711, src/engine/media/srtp): protect and unprotect of a
 * 20 ms G.711 packet, 172 octets (12 header + 160 payload), for each suite, as every leg with
 * SDES-keyed media pays twice per packet relayed (unprotect on the way in, protect on the way out).
 *
 * The anchor, measured in the same run on the same packets, is what the relay does to a plain
 * packet anyway: a copy (`Buffer.from`) and `rtpPayloadOffset`. A second part measures the two ways
 * to build each primitive with node:crypto that srtp/aes-cm.ts and srtp/session-context.ts chose
 * between: AES-CM as a createCipheriv('aes-*-ctr') per packet or one long-lived 'aes-*-ecb' fed
 * counter blocks, and HMAC-SHA1 as a createHmac per packet or RFC 2104 inner and outer hashes keyed
 * once and cloned with hash.copy(). Figures are thread CPU time per packet, median of 7 runs of
 * 50,000 packets. Run: `npx tsx bench/media/bench-srtp.ts`.
 */
import { createCipheriv, createHash, createHmac, createSecretKey, randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import type * as AesCmModule from '../../src/engine/media/srtp/aes-cm.js';
import type * as PacketModule from '../../src/engine/media/rtp/packet.js';
import type * as ReceiverModule from '../../src/engine/media/srtp/srtp-receiver.js';
import type * as SenderModule from '../../src/engine/media/srtp/srtp-sender.js';
import type * as SuiteModule from '../../src/engine/media/srtp/srtp-suite.js';
import { compiled } from '../compiled.js';

// The SRTP contexts and AES-CM are internal to the media engine: loaded from their own modules in the build.
const { rtpPayloadOffset, serializeRtp } = await compiled<typeof PacketModule>('engine/media/rtp/packet.js');
const { SRTP_SUITES, generateMasterKey } = await compiled<typeof SuiteModule>('engine/media/srtp/srtp-suite.js');
const { SrtpSender } = await compiled<typeof SenderModule>('engine/media/srtp/srtp-sender.js');
const { SrtpReceiver } = await compiled<typeof ReceiverModule>('engine/media/srtp/srtp-receiver.js');
const { AesCm } = await compiled<typeof AesCmModule>('engine/media/srtp/aes-cm.js');

const PACKETS_PER_RUN = 50_000;
const RUNS = 7;
const PAYLOAD = 160;

/** µs of CPU per packet for `work` over PACKETS_PER_RUN packets; `work` gets the packet number. */
function timed(work: (i: number) => void): number {
  const start = process.cpuUsage();
  for (let i = 0; i < PACKETS_PER_RUN; i++) work(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / PACKETS_PER_RUN;
}

const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;

/** Warms each path up, then RUNS rounds of all of them interleaved, so load drifts hit all alike. */
function measure(paths: Record<string, (i: number) => void>): Record<string, number> {
  for (const work of Object.values(paths)) timed(work);
  const runs: Record<string, number[]> = Object.fromEntries(Object.keys(paths).map((k) => [k, []]));
  for (let run = 0; run < RUNS; run++) for (const [name, work] of Object.entries(paths)) runs[name]!.push(timed(work));
  return Object.fromEntries(Object.entries(runs).map(([k, v]) => [k, median(v)]));
}

const voice = randomBytes(PAYLOAD);
const packet = serializeRtp({ payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: 0x5eed }, voice);
/** The packet with sequence number i mod 2^16: the SEQ wraps, and with it the ROC, every 65536 packets. */
const withSeq = (i: number): Buffer => {
  packet.writeUInt16BE(i & 0xffff, 2);
  return packet;
};

let sink = 0;
let rejected = 0;
const paths: Record<string, (i: number) => void> = {
  anchor: (i) => {
    const copy = Buffer.from(withSeq(i));
    sink ^= rtpPayloadOffset(copy);
  },
};
for (const suite of SRTP_SUITES) {
  const master = generateMasterKey(suite);
  const sender = new SrtpSender(master);
  const protectOnly = new SrtpSender(master);
  const receiver = new SrtpReceiver(master);
  // The pair has its own sender and a sequence number that goes on across runs, so its receiver
  // sees every packet once and in order; the protect-only sender restarts at SEQ 0 each run (a wrap).
  let next = 0;
  paths[`${suite.name} protect`] = (i) => void (sink ^= protectOnly.protectRtp(withSeq(i))[20]!);
  paths[`${suite.name} protect+unprotect`] = () => {
    if (receiver.unprotectRtp(sender.protectRtp(withSeq(next++))) === null) rejected++;
  };
}

// The primitives, each way, on a 160-octet payload (AES) and a 176-octet M (HMAC: packet + ROC).
const iv = Buffer.alloc(16);
const out = Buffer.alloc(PAYLOAD);
const authKey = randomBytes(20);
const authKeyObject = createSecretKey(authKey);
const m = randomBytes(176);
const [ipad, opad] = [0x36, 0x5c].map((pad) => createHash('sha1').update(Buffer.alloc(64, pad).map((b, k) => (k < 20 ? b ^ authKey[k]! : b))));
for (const keyLength of [16, 32]) {
  const key = randomBytes(keyLength);
  const cm = new AesCm(key, randomBytes(14));
  const alg = keyLength === 32 ? 'aes-256-ctr' : 'aes-128-ctr';
  paths[`AES-${keyLength * 8}-CM createCipheriv ctr per packet`] = (i) => {
    // CTR mode's update() is the whole of AES-CM here (no carry out of the low 16 bits): no XOR loop.
    iv.writeUInt32BE(i, 8);
    createCipheriv(alg, key, iv).update(voice).copy(out);
  };
  paths[`AES-${keyLength * 8}-CM long-lived ecb (AesCm)`] = (i) => cm.xor(0x5eed, i, voice, out, 0, PAYLOAD);
}
paths['HMAC-SHA1 createHmac(Buffer key)'] = () => void (sink ^= createHmac('sha1', authKey).update(m).digest()[0]!);
paths['HMAC-SHA1 createHmac(KeyObject)'] = () => void (sink ^= createHmac('sha1', authKeyObject).update(m).digest()[0]!);
paths['HMAC-SHA1 ipad/opad hash.copy()'] = () => {
  const inner = ipad!.copy().update(m).digest();
  sink ^= opad!.copy().update(inner).digest()[0]!;
};

const result = measure(paths);
const anchor = result.anchor!;
console.log(`anchor (Buffer.from + rtpPayloadOffset of a ${packet.length}-octet packet): ${anchor.toFixed(2)} µs`);
for (const suite of SRTP_SUITES) {
  const protect = result[`${suite.name} protect`]!;
  const both = result[`${suite.name} protect+unprotect`]!;
  console.log(
    `${suite.name.padEnd(24)} protect ${protect.toFixed(2)} µs, unprotect ${(both - protect).toFixed(2)} µs, both ${both.toFixed(2)} µs (${(both / anchor).toFixed(1)} times the anchor)`,
  );
}
console.log('two ways, per packet:');
for (const [name, us] of Object.entries(result)) if (!name.startsWith('AES_') && name !== 'anchor') console.log(`  ${name.padEnd(44)} ${us.toFixed(2)} µs`);
console.log(`rejected by the receiver: ${rejected} (must be 0); checksum ${sink & 0xff}`);
console.log(`${cpus()[0]?.model ?? 'cpu'} x${cpus().length}, Node ${process.version}, load ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`);
