/** @module Call records for tests of the read side, written through the real repository. */
import { newCallControlId, newCallId, type TenantId } from '../../src/common/ids.js';
import type { CallRecord } from '../../src/storage/index.js';

export function callRecord(tenantId: TenantId, createdAt: string, overrides: Partial<CallRecord> = {}): CallRecord {
  return {
    id: newCallId(), tenant_id: tenantId, call_control_id: newCallControlId(), direction: 'outbound', state: 'active', on_hold: false,
    from_number: '+15550100', to_number: '+15550199', carrier: 'telnyx', record: false, agent_type: 'websocket',
    agent_url: 'wss://agent.example.com/stream', agent_id: null, created_at: createdAt, ringing_at: null, answered_at: createdAt,
    ended_at: null, end_reason: null, sip_status: null, hangup_by: null, transfer_to: null, transfer_state: null,
    transfer_started_at: null, conversation_id: null, recording_path: null, caller_privacy: false, quality: null, caller_verstat: null, caller_identity_header: false, sip_headers: null,
    amd_result: null, amd_decided_after_ms: null, amd_beep_at_ms: null, ...overrides,
  };
}
