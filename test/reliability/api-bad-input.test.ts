/**
 * @module Hostile input to every operation of the OpenAPI document, over real HTTP (RFC 9457 and
 * contract section 2): never a 5xx, every 4xx problem+json with a documented `code`, rejected
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

t.test('RFC 9457 / contract 2: hostile input to every operation never gets a 5xx, always a documented problem+json, and changes nothing', async (t) => {
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
