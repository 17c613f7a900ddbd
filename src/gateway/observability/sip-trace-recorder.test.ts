/** docs/API.md "SIP trace of a call": attribution by Call-ID, messages seen before their call, the size cap keeping the tail, and the grace after the end. */
import t from 'tap';
import { FakeClock } from '../../common/clock.js';
import type { TenantId } from '../../common/ids.js';
import { createLogger } from '../../common/logger.js';
import type { SipTraceRecord } from '../../storage/index.js';
import { SIP_TRACE_GRACE_MS, SipTraceRecorder } from './sip-trace-recorder.js';

const TENANT = 'ten_1' as TenantId;
const CALL = { tenantId: TENANT, id: 'call_1' };
const logger = createLogger({ level: 'silent' });

const message = (line: string, callId: string, pad = 0): Buffer =>
  Buffer.from(`${line}\r\nVia: SIP/2.0/UDP 192.0.2.1;branch=z9hG4bK1\r\nCall-ID: ${callId}\r\nX-Pad: ${'x'.repeat(pad)}\r\n\r\n`);

function rig(maxBytesPerCall = 262_144) {
  const clock = new FakeClock();
  const saved: { callId: string; trace: SipTraceRecord }[] = [];
  const recorder = new SipTraceRecorder({ clock, logger, maxBytesPerCall, save: (_tenant, callId, trace) => void saved.push({ callId, trace }) });
  const send = (data: Buffer, direction: 'sent' | 'received' = 'sent') => recorder.message({
    direction, at: clock.now(), protocol: 'UDP', source: { address: '127.0.0.1', port: 5060 }, destination: { address: '192.0.2.1', port: 5060 }, data,
  });
  return { clock, recorder, saved, send };
}

t.test('messages seen before their Call-ID is claimed join the call in order; other Call-IDs never do', (t) => {
  const { recorder, send } = rig();
  send(message('INVITE sip:a@b SIP/2.0', 'leg-1'), 'received');
  send(message('OPTIONS sip:a@b SIP/2.0', 'ping-1'), 'received');
  recorder.attach(CALL, 'leg-1', 'carrier');
  send(message('SIP/2.0 200 OK', 'leg-1'));
  send(message('INVITE sip:edge SIP/2.0', 'leg-2'));
  recorder.attach(CALL, 'leg-2', 'agent');
  const trace = recorder.read(TENANT, 'call_1')!;
  t.same(trace.messages.map((m) => [m.leg, m.text.split('\r\n')[0]]), [
    ['carrier', 'INVITE sip:a@b SIP/2.0'], ['carrier', 'SIP/2.0 200 OK'], ['agent', 'INVITE sip:edge SIP/2.0'],
  ]);
  t.same(trace.legs, [{ leg: 'carrier', sip_call_id: 'leg-1' }, { leg: 'agent', sip_call_id: 'leg-2' }]);
  t.equal(recorder.read('ten_other' as TenantId, 'call_1'), undefined, 'another tenant reads nothing');
  t.end();
});

t.test('past max_bytes_per_call the oldest messages are dropped and counted: the tail is kept', (t) => {
  const { recorder, send } = rig(4096);
  recorder.attach(CALL, 'leg-1', 'carrier');
  for (let i = 0; i < 10; i++) send(message(`INFO sip:a@b SIP/2.0 ${i}`, 'leg-1', 900));
  const trace = recorder.read(TENANT, 'call_1')!;
  t.ok(trace.messages.length < 10 && trace.messages.length > 0);
  t.equal(trace.dropped_messages + trace.messages.length, 10);
  t.match(trace.messages.at(-1)!.text, /^INFO sip:a@b SIP\/2\.0 9/, 'the last message is kept');
  t.ok(trace.messages.reduce((n, m) => n + m.text.length, 0) <= 4096);
  t.end();
});

t.test('the trace still takes messages for a grace time after the end (the answer to BYE), then is stored and leaves memory', (t) => {
  const { clock, recorder, saved, send } = rig();
  recorder.attach(CALL, 'leg-1', 'carrier');
  send(message('BYE sip:a@b SIP/2.0', 'leg-1'));
  recorder.finish(CALL);
  send(message('SIP/2.0 200 OK', 'leg-1'), 'received');
  t.equal(saved.length, 0);
  clock.advance(SIP_TRACE_GRACE_MS);
  t.equal(saved.length, 1);
  t.same(saved[0]!.trace.messages.map((m) => m.direction), ['sent', 'received']);
  t.equal(recorder.read(TENANT, 'call_1'), undefined);
  send(message('SIP/2.0 200 OK', 'leg-1'), 'received');
  t.equal(saved.length, 1, 'a late retransmission goes to no call');
  t.end();
});

t.test('a message that cannot be read, or a store that throws, is counted, never thrown into the SIP stack', (t) => {
  const failures: string[] = [];
  const clock = new FakeClock();
  const recorder = new SipTraceRecorder({ clock, logger, maxBytesPerCall: 4096, save: () => { throw new Error('disk full'); }, onFailure: (what) => failures.push(what) });
  recorder.attach(CALL, 'leg-1', 'carrier');
  t.doesNotThrow(() => recorder.message({ direction: 'sent', at: 0, protocol: 'UDP', source: null as never, destination: null as never, data: null as never }));
  recorder.finish(CALL);
  t.doesNotThrow(() => clock.advance(SIP_TRACE_GRACE_MS));
  t.same(failures, ['record', 'save']);
  t.end();
});
