/**
 * @module Mutated RFC 4475 / RFC 5118 messages (seeded, reproducible) through parseMessage and the
 * stream framer: nothing throws, nothing hangs, and whatever is accepted is safe to use.
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { parseMessage, SipStreamFramer } from '../../src/engine/sip/messages/parse.js';
import { serializeMessage } from '../../src/engine/sip/messages/serialize.js';
import { createResponse } from '../../src/engine/sip/messages/response.js';
import type { SipMessage } from '../../src/engine/sip/messages/sip-message.js';

const DATA = new URL('../../../shared/testdata/', import.meta.url);
const SEEDS = readdirSync(new URL('rfc4475/', DATA)).filter((f) => f.endsWith('.dat')).map((f) => readFileSync(new URL(`rfc4475/${f}`, DATA)))
  .concat(readdirSync(new URL('rfc5118/', DATA)).filter((f) => f.endsWith('.dat')).map((f) => readFileSync(new URL(`rfc5118/${f}`, DATA))));

/** mulberry32: a small seeded PRNG so a failure can be replayed. */
function prng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const TOKENS = [';', ',', '"', '<', '>', '\\', '\r\n', '\r\n ', ' ', ':', '=', '@', '[', ']', '%', '\x00', '\xff', 'SIP/2.0', '99999999999'];

function mutate(seed: Buffer, rand: () => number): Buffer {
  let b = Buffer.from(seed);
  const edits = 1 + Math.floor(rand() * 4);
  for (let e = 0; e < edits; e++) {
    const at = Math.floor(rand() * b.length);
    const kind = Math.floor(rand() * 4);
    if (kind === 0) b[at] = Math.floor(rand() * 256);
    else if (kind === 1) b = Buffer.concat([b.subarray(0, at), Buffer.from(TOKENS[Math.floor(rand() * TOKENS.length)]!, 'latin1'), b.subarray(at)]);
    else if (kind === 2) b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + Math.floor(rand() * 20)))]);
    else b = b.subarray(0, at);
  }
  return b;
}

/** Everything a layer above may touch on an accepted message. */
function useAll(m: SipMessage): void {
  void [m.callId, m.cseq, m.from, m.to, m.topVia, m.vias, m.maxForwards, m.contacts];
  for (const [name] of m.headers.entries()) m.headers.getAll(name);
  const again = parseMessage(serializeMessage(m));
  if (!again.ok) throw new Error(`accepted message does not survive serialization: ${again.error.reason}`);
}

t.test('mutated torture messages: parseMessage returns an outcome, accepted ones are usable', (t) => {
  const rand = prng(4475);
  let accepted = 0;
  let answered = 0;
  for (let round = 0; round < 60; round++) {
    for (const seed of SEEDS) {
      const input = mutate(seed, rand);
      const outcome = parseMessage(input);
      if (outcome.ok) {
        accepted++;
        useAll(outcome.message);
      } else if (outcome.request) {
        answered++;
        serializeMessage(createResponse(outcome.request, outcome.error.status));
      }
    }
  }
  t.ok(accepted > 0 && answered > 0, `accepted ${accepted}, answered ${answered}`);
  t.end();
});

t.test('mutated streams: the framer never throws and always makes progress', (t) => {
  const rand = prng(5118);
  for (let round = 0; round < 40; round++) {
    const stream = Buffer.concat(SEEDS.slice(0, 10).map((s) => mutate(s, rand)));
    let failed = false;
    const framer = new SipStreamFramer({
      maxMessageSize: 4096,
      onMessage: (o) => void (o.ok && useAll(o.message)),
      onError: () => { failed = true; },
    });
    for (let i = 0; i < stream.length;) {
      const n = 1 + Math.floor(rand() * 300);
      framer.push(stream.subarray(i, i + n));
      i += n;
    }
    t.ok(failed || framer.buffered <= stream.length, `round ${round}`);
  }
  t.end();
});
