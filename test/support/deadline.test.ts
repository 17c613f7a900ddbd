/**
 * Waits in test helpers end: a condition that never comes fails the wait with a message naming
 * what was awaited, instead of hanging the run until tap's own time-out.
 */
import t from 'tap';
import { WebSocket } from 'ws';
import { withDeadline } from './deadline.js';
import { FakeWsCore } from './fake-agent-servers/fake-ws-server.js';

t.test('withDeadline settles as the promise does in time, and rejects naming the wait when it does not', async (t) => {
  t.equal(await withDeadline('a value', Promise.resolve(7), 1000), 7);
  await t.rejects(withDeadline('a failure', Promise.reject(new Error('its own error')), 1000), { message: 'its own error' });
  await t.rejects(withDeadline('the far end\'s BYE', new Promise(() => undefined), 50), { message: 'timed out after 50 ms waiting for the far end\'s BYE' });
});

t.test('the fake agent server\'s until() resolves on a real frame, and times out with the frames counted', async (t) => {
  const server = new FakeWsCore();
  const port = await server.listen();
  t.teardown(() => server.close());
  const client = new WebSocket(`ws://127.0.0.1:${port}/`);
  t.teardown(() => client.terminate());
  await new Promise((resolve, reject) => (client.once('open', resolve), client.once('error', reject)));
  client.send(JSON.stringify({ event: 'connected' }));
  await server.until(() => server.frames.length === 1, 'the connected message', 5000);
  t.equal(server.frames.length, 1, 'the frame that met the check');
  await t.rejects(server.until(() => server.frames.length > 1, 'a second message', 50), {
    message: 'fake agent server: timed out after 50 ms waiting for a second message (1 frames received)',
  });
  client.send(JSON.stringify({ event: 'start' }));
  await server.until(() => server.frames.length === 2, 'the start message', 5000);
  t.pass('a timed-out wait leaves no waiter behind to disturb later ones');
});
