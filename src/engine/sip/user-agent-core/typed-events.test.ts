/** docs/RELIABILITY.md "Ending a call": a listener that throws is reported with its event and contained. */
import t from 'tap';
import { reportListenerErrors, TypedEvents } from './typed-events.js';

t.test('a throwing listener is reported once with the event name; the other listeners still run and nothing escapes', async (t) => {
  const reported: { event: string; message: string }[] = [];
  const restore = reportListenerErrors((event, err) => reported.push({ event, message: (err as Error).message }));
  t.teardown(restore);
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => { uncaught.push(err); };
  process.on('uncaughtException', onUncaught);
  t.teardown(() => process.off('uncaughtException', onUncaught));
  const events = new TypedEvents<{ bye: [number] }>();
  const heard: number[] = [];
  events.on('bye', () => { throw new Error('listener bug'); });
  events.on('bye', (n) => heard.push(n));
  events.emit('bye', 7);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(heard, [7], 'the next listener ran');
  t.same(reported, [{ event: 'bye', message: 'listener bug' }], 'reported with the event name');
  t.same(uncaught, [], 'nothing was re-thrown to the process');
});

t.test('a reporter that throws is contained too', (t) => {
  const restore = reportListenerErrors(() => { throw new Error('log stream closed'); });
  t.teardown(restore);
  const events = new TypedEvents<{ x: [] }>();
  events.on('x', () => { throw new Error('listener bug'); });
  t.doesNotThrow(() => events.emit('x'));
  t.end();
});
