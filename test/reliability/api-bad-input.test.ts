/**
 * @module Hostile input to every operation of the OpenAPI document, over real HTTP (RFC 9457 and
 * docs/API.md "Errors"): never a 5xx, every 4xx problem+json with a documented `code`, rejected
 * requests change no stored data, and the server keeps answering.
 */
import t from 'tap';
import fc from 'fast-check';
import { testApiOptions } from '../support/build-app.js';
import { scaled, LONG_RUN } from './scale.js';
import { fillPath, startApiWorld, type ApiWorld } from './support/api-world.js';
import { badRequests } from './support/api-mutations.js';
import { documentedCodes, operationsOf, problemFaults, type Operation } from './support/api-operations.js';

const RUNS = scaled(30, 2000);

/** GET of every list and every seeded resource, as the owner: what a tenant can see. */
async function visibleSnapshot(world: ApiWorld, ops: Operation[]): Promise<string> {
  const gets = ops.filter((op) => op.method === 'GET' && op.secured && !op.path.endsWith('/recording'));
  const texts = await Promise.all(gets.map(async (op) => (await world.send({ method: 'GET', path: `${fillPath(op.path, world.owner.ids)}${op.parameters.some((p) => p.name === 'limit') ? '?limit=500' : ''}`, headers: world.owner.auth })).text));
  return texts.map((text) => text.replace(/"request_id":"[^"]*"/, '')).join('\n');
}

function bodyLimitOf(world: ApiWorld, op: Operation): number {
  return world.h.api.routes.find((r) => r.method === op.method && r.path === op.path)?.bodyLimitBytes ?? testApiOptions.bodyLimitBytes;
}

interface Tally { sent: number; byStatus: Map<number, number>; accepted: number; kinds: Set<string> }

t.test('RFC 9457 / docs/API.md "Errors": hostile input to every operation never gets a 5xx, always a documented problem+json, and changes nothing', async (t) => {
  const world = await startApiWorld(t);
  const ops = operationsOf(world.document);
  const codes = documentedCodes();
  t.ok(ops.length >= 30, `the document lists ${ops.length} operations`);
  t.ok(codes.has('validation_failed') && codes.has('not_found'), `docs/API.md documents ${codes.size} codes`);
  const page = await world.send({ method: 'GET', path: '/v1/calls?limit=1', headers: world.owner.auth });
  const realCursor = String((page.json as { next_cursor: string | null }).next_cursor);
  t.not(realCursor, 'null', 'a real cursor to tamper with');
  const totals: string[] = [];
  for (const op of ops) {
    const tally: Tally = { sent: 0, byStatus: new Map(), accepted: 0, kinds: new Set() };
    const headers = op.secured ? world.owner.auth : {};
    const arbitrary = badRequests(op, { path: fillPath(op.path, world.owner.ids), headers, bodyLimit: bodyLimitOf(world, op), realCursor });
    const visibleBefore = await visibleSnapshot(world, ops);
    await t.test(`${op.method} ${op.path}`, async (t) => {
      await fc.assert(fc.asyncProperty(arbitrary, async (c) => {
        const before = world.storeSnapshot();
        const answer = await world.send(c.request);
        tally.sent++;
        tally.kinds.add(c.kind);
        tally.byStatus.set(answer.status, (tally.byStatus.get(answer.status) ?? 0) + 1);
        const faults = problemFaults(answer, codes);
        if (c.mustReject && answer.status < 400) faults.push(`a ${answer.status} for input the schema refuses`);
        if (answer.status < 400) tally.accepted++;
        else if (world.storeSnapshot() !== before) faults.push('a rejected request changed stored data');
        if (faults.length > 0) throw new Error(`${c.kind}: ${faults.join('; ')} (answer ${answer.status} ${answer.text.slice(0, 200)})`);
      }), { numRuns: RUNS, endOnFailure: !LONG_RUN });
      if (tally.accepted === 0) t.equal(await visibleSnapshot(world, ops), visibleBefore, 'every list and resource reads the same as before');
      t.pass(`${tally.sent} requests, ${tally.kinds.size} kinds of input`);
    });
    const statuses = [...tally.byStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}×${n}`).join(' ');
    totals.push(`${op.method} ${op.path}: ${tally.sent} inputs, ${tally.kinds.size} kinds; ${statuses}`);
  }
  const health = await world.send({ method: 'GET', path: '/healthz' });
  t.equal(health.status, 200, 'the server still answers');
  t.comment(`bad input per operation (${RUNS} runs each):\n${totals.join('\n')}`);
});

/** The signature headers each provider's webhook reads when a secret is configured. */
const SIGNATURE_HEADERS: Record<string, string[]> = {
  elevenlabs: ['elevenlabs-signature'], retell: ['x-retell-signature'], vapi: ['x-signature', 'x-timestamp'],
};

/** Header values a client can put on the wire: printable ASCII and Latin-1, signature-like or not. */
const headerValue = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 80 }),
  fc.tuple(fc.constantFrom('t', 'v', 'v0', 'd', ''), fc.oneof(fc.bigInt().map(String), fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), maxLength: 64 }), fc.constantFrom('1e400', '-1', 'NaN', '0x10', '')), fc.nat(3))
    .map(([k, v, n]) => Array.from({ length: n + 1 }, () => `${k}=${v}`).join(',')),
  // Up to 7 KiB each: beyond Node's 16 KiB limit on all headers its parser answers 431 before the app.
  fc.nat({ max: 3_500 }).map((n) => 'a,'.repeat(n)),
);

t.test('docs/WEBHOOKS.md "Post-call webhooks": with webhook secrets configured, hostile signature headers get 401 unauthorized problem+json and store nothing', async (t) => {
  const world = await startApiWorld(t, {}, { elevenlabs: 'whsec_el', retell: 'key_retell', vapi: 'vapi_secret' });
  const codes = documentedCodes();
  const webhooks = operationsOf(world.document).filter((op) => op.path.startsWith('/v1/webhooks/'));
  t.ok(webhooks.length >= 3, `${webhooks.length} webhook operations`);
  for (const op of webhooks) {
    const names = SIGNATURE_HEADERS[op.path.slice('/v1/webhooks/'.length)] ?? ['x-signature'];
    const before = world.storeSnapshot();
    const statuses = new Map<number, number>();
    await fc.assert(fc.asyncProperty(fc.jsonValue({ maxDepth: 3 }), fc.array(headerValue, { minLength: names.length, maxLength: names.length }), async (payload, values) => {
      // A `__proto__` member is refused by the JSON parser (400) before any signature is read.
      fc.pre(!JSON.stringify(payload).includes('"__proto__"'));
      const headers = Object.fromEntries(names.map((n, i) => [n, values[i]!]));
      const answer = await world.send({ method: op.method, path: op.path, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(payload) });
      statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
      const faults = problemFaults(answer, codes);
      if (answer.status !== 401) faults.push(`a ${answer.status}`);
      if (faults.length > 0) throw new Error(`${faults.join('; ')} (answer ${answer.text.slice(0, 200)})`);
    }), { numRuns: RUNS, endOnFailure: !LONG_RUN });
    t.equal(world.storeSnapshot(), before, `${op.path}: nothing stored`);
    t.comment(`${op.method} ${op.path} with hostile signatures: ${[...statuses].map(([s, n]) => `${s}×${n}`).join(' ')}`);
  }
});
