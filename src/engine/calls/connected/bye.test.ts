/** docs/RELIABILITY.md "Ending a call": a BYE that fails logs exactly one line, with the call's id. */
import t from 'tap';
import { createLogger } from '../../../common/logger.js';
import { sendBye } from './bye.js';

function callLog(): { log: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const root = createLogger({ level: 'debug', destination: { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>); } } });
  // As Call.log: a child carrying the call's id.
  return { log: root.child({ call_id: 'call_test01' }), lines };
}

t.test('RFC 3261 15.1.1: a BYE that cannot be sent logs one warning with the call id, and never rejects', async (t) => {
  const { log, lines } = callLog();
  await sendBye({ isEnded: false, bye: () => Promise.reject(new Error('transport closed')) }, log, 'test');
  t.equal(lines.length, 1, 'exactly one line');
  t.match(lines[0], { level: 'warn', call_id: 'call_test01', why: 'test', msg: 'BYE could not be sent' });
});

t.test('RFC 3261 15.1.1: a BYE answered with a failure (a local 408 when nothing answered) logs one warning with the call id', async (t) => {
  const { log, lines } = callLog();
  await sendBye({ isEnded: false, bye: () => Promise.resolve(408) }, log, 'test');
  t.equal(lines.length, 1);
  t.match(lines[0], { level: 'warn', call_id: 'call_test01', status: 408 });
});

t.test('a BYE answered 200, or a dialog already ended, logs nothing', async (t) => {
  const { log, lines } = callLog();
  let sent = 0;
  await sendBye({ isEnded: false, bye: () => Promise.resolve(200) }, log, 'test');
  await sendBye({ isEnded: true, bye: () => { sent++; return Promise.resolve(200); } }, log, 'test');
  t.equal(lines.length, 0);
  t.equal(sent, 0, 'no BYE on an ended dialog');
});
