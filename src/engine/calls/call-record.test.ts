/** docs/DECISIONS.md "Calls", CDR arithmetic: what an ended call's detail record says, from its stored times. */
import t from 'tap';
import type { CallId, TenantId } from '../../common/ids.js';
import { callDetailRecord, type CallRecord } from './call-record.js';

const call = (over: Partial<CallRecord>): CallRecord => ({
  id: 'call_1' as CallId, tenant_id: 'ten_1' as TenantId, call_control_id: 'cc_1', direction: 'outbound', state: 'ended', on_hold: false,
  from_number: '+15550100', caller_privacy: false, to_number: '+15550199', carrier: 'telnyx', record: false, agent_type: 'websocket',
  agent_url: 'wss://agent.example.com', agent_id: null, created_at: '2026-11-22T10:00:00.000Z', ringing_at: null,
  answered_at: '2026-11-22T10:00:02.500Z', ended_at: '2026-11-22T10:00:12.501Z', end_reason: 'completed', sip_status: null,
  hangup_by: 'callee', transfer_to: null, transfer_state: null, transfer_started_at: null, conversation_id: null, recording_path: null, quality: null, caller_verstat: null, caller_identity_header: false, sip_headers: null,
  amd_result: null, amd_decided_after_ms: null, amd_beep_at_ms: null, ...over,
});

t.test('CDR: duration from creation to end in ms precision; billable from answer to end, a started second billed whole', (t) => {
  t.same(callDetailRecord(call({})), {
    started_at: '2026-11-22T10:00:00.000Z', answered_at: '2026-11-22T10:00:02.500Z', ended_at: '2026-11-22T10:00:12.501Z',
    duration_s: 12.501, billable_s: 11, end_reason: 'completed', sip_status: null, hangup_by: 'callee', quality: null,
  });
  t.equal(callDetailRecord(call({ ended_at: '2026-11-22T10:00:12.500Z' }))?.billable_s, 10, 'exactly ten seconds answered: 10');
  t.end();
});

t.test('CDR: a call never answered bills 0; a failed call without a reason reads failed', (t) => {
  t.match(callDetailRecord(call({ answered_at: null, end_reason: null, sip_status: 486 })), { billable_s: 0, end_reason: 'failed', sip_status: 486 });
  t.end();
});

t.test('CDR: never negative, when the end was stamped before the answer or the start (a clock step)', (t) => {
  t.match(callDetailRecord(call({ ended_at: '2026-11-22T09:59:59.000Z' })), { duration_s: 0, billable_s: 0 });
  t.end();
});

t.test('CDR: none while the call is live', (t) => {
  t.equal(callDetailRecord(call({ state: 'active', ended_at: null })), null);
  t.equal(callDetailRecord(call({ state: 'ringing', ended_at: null })), null);
  t.end();
});
