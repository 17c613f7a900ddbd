/** @module Call applies its state machine through one transition (docs/ARCHITECTURE.md, "State machines"). */
import t from 'tap';
import { FakeClock } from '../../common/clock.js';
import { IllegalTransitionError } from '../../common/errors.js';
import type { TenantId } from '../../common/ids.js';
import { silentLogger } from '../../common/logger.js';
import { Call } from './call.js';
import type { CallRecord } from './call-record.js';
import type { CallOutcome, CallRecordStore } from './ports.js';

function newCall(): { call: Call; saves: CallRecord[]; finished: CallOutcome[]; clock: FakeClock } {
  const saves: CallRecord[] = [];
  const finished: CallOutcome[] = [];
  const store: CallRecordStore = {
    insert: () => Promise.resolve(), save: (c) => void saves.push({ ...c }), note: () => undefined, finish: (o) => void finished.push(o),
    get: () => Promise.resolve(undefined), getByControlId: () => Promise.resolve(undefined), unfinished: () => Promise.resolve([]),
  };
  const clock = new FakeClock();
  const call = new Call({
    tenantId: 'tn_1' as TenantId, direction: 'outbound', from: '+15550001', to: '+15550002', carrier: 'c', record: false,
    agent: { type: 'websocket', url: 'wss://agent.example/ws' },
  }, { clock, store, logger: silentLogger() });
  return { call, saves, finished, clock };
}

t.test('Call states: ringing then answered are written once each; a repeated 18x writes nothing', (t) => {
  const { call, saves, clock } = newCall();
  call.advance('ringing');
  call.advance('ringing');
  clock.advance(1000);
  call.advance('answered');
  t.same(saves.map((r) => r.state), ['ringing', 'active']);
  t.ok(call.snapshot().ringing_at !== null && call.snapshot().answered_at !== null);
  t.end();
});

t.test('Call states: an 18x or a second answer after the answer throws IllegalTransitionError and changes nothing', (t) => {
  const { call, saves } = newCall();
  call.advance('answered');
  for (const event of ['ringing', 'answered'] as const) {
    const err = t.throws(() => call.advance(event)) as unknown;
    t.ok(err instanceof IllegalTransitionError, `${event} after the answer`);
    t.match(err, { machine: 'Call', state: 'active', event });
  }
  t.equal(call.snapshot().state, 'active');
  t.equal(saves.length, 1);
  t.end();
});

t.test('Call states: the end goes through the machine; later signalling and ends change nothing', (t) => {
  const { call, saves, finished } = newCall();
  call.advance('ringing');
  t.equal(call.end({ reason: 'no_answer', sipStatus: 408, hangupBy: 'gateway' }), true);
  t.match(call.snapshot(), { state: 'ended', end_reason: 'no_answer', sip_status: 408, hangup_by: 'gateway' });
  t.ok(call.snapshot().ended_at);
  call.advance('ringing');
  call.advance('answered');
  t.equal(call.end({ reason: 'completed', sipStatus: null, hangupBy: 'api' }), false);
  t.equal(call.snapshot().end_reason, 'no_answer', 'the first reason is the true one');
  t.equal(call.snapshot().answered_at, null);
  t.same(saves.map((r) => r.state), ['ringing']);
  t.equal(finished.length, 1);
  t.end();
});

t.test('Call states: a transfer still dialling when the call ends is recorded as failed', (t) => {
  const { call } = newCall();
  call.advance('answered');
  call.setTransfer('+15550003', 'dialing');
  call.markEnded({ reason: 'completed', sipStatus: null, hangupBy: 'callee' });
  t.equal(call.snapshot().transfer_state, 'failed');
  t.end();
});
