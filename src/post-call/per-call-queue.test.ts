/**
 * docs/WEBHOOKS.md "First attribution wins" depends on a call's deliveries being stored one at a
 * time: the queue runs one call's tasks in order without overlap, other calls' tasks beside them,
 * and a failed task neither blocks the next nor stays in the map.
 */
import t from 'tap';
import { PerCallQueue } from './per-call-queue.js';

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => { resolve = r; });
  return { promise, resolve };
};

t.test('tasks of one call run in order and never overlap; another call\'s task runs meanwhile', async (t) => {
  const queue = new PerCallQueue();
  const log: string[] = [];
  const gate = deferred();
  const first = queue.run('ten/call_a', async () => { log.push('a1 start'); await gate.promise; log.push('a1 end'); return 1; });
  const second = queue.run('ten/call_a', () => { log.push('a2'); return 2; });
  const other = queue.run('ten/call_b', () => { log.push('b1'); return 3; });
  t.equal(await other, 3);
  t.same(log, ['a1 start', 'b1'], 'call_b did not wait for call_a; a2 waits for a1');
  gate.resolve();
  t.same(await Promise.all([first, second]), [1, 2]);
  t.same(log, ['a1 start', 'b1', 'a1 end', 'a2']);
  await new Promise((r) => setImmediate(r));
  t.equal(queue.size, 0, 'nothing is kept once every task settled');
});

t.test('a failed task rejects for its caller only; the next one runs', async (t) => {
  const queue = new PerCallQueue();
  const failing = queue.run('k', () => { throw new Error('disk full'); });
  const next = queue.run('k', () => 'ran');
  await t.rejects(failing, /disk full/);
  t.equal(await next, 'ran');
  await new Promise((r) => setImmediate(r));
  t.equal(queue.size, 0);
});
