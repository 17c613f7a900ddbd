import t from 'tap';
import { join } from 'node:path';
import { FakeClock } from '../../../common/clock.js';
import { Heartbeat, HEARTBEAT_INTERVAL_MS, lastHeartbeatMs } from './heartbeat.js';

t.test('restart safety: the heartbeat file dates the last moment the engine was alive', (t) => {
  const dir = t.testdir({});
  const clock = new FakeClock(Date.parse('2026-01-01T11:00:00.000Z'));
  t.equal(lastHeartbeatMs(dir), null, 'no engine ran here yet');
  const errors: Error[] = [];
  const heartbeat = new Heartbeat(dir, clock, (err) => errors.push(err));
  heartbeat.start();
  t.equal(lastHeartbeatMs(dir), Date.parse('2026-01-01T11:00:00.000Z'));
  clock.advance(3 * HEARTBEAT_INTERVAL_MS);
  t.equal(lastHeartbeatMs(dir), Date.parse('2026-01-01T11:00:15.000Z'), 'moved forward every interval');
  heartbeat.stop();
  clock.advance(60_000);
  t.equal(lastHeartbeatMs(dir), Date.parse('2026-01-01T11:00:15.000Z'), 'stopped: the file keeps the last beat');
  t.same(errors, []);
  t.end();
});

t.test('restart safety: a heartbeat that cannot be written is reported once and never throws', (t) => {
  // A folder that does not exist (permissions would not stop a test running as root).
  const dir = join(t.testdir({}), 'missing');
  const clock = new FakeClock(0);
  const errors: Error[] = [];
  const heartbeat = new Heartbeat(dir, clock, (err) => errors.push(err));
  t.doesNotThrow(() => heartbeat.start());
  clock.advance(5 * HEARTBEAT_INTERVAL_MS);
  t.equal(errors.length, 1, 'one report, not one per beat');
  heartbeat.stop();
  t.end();
});
