/**
 * @module The events a change of a call record causes (docs/EVENTS.md "Event types"), derived from
 * the record before and after the change, so the outbox is written in the transaction that
 * persists it (docs/DECISIONS.md "Call events: the outbox"). A change written twice (a journal
 * replay, a retried write) finds the record already changed and causes nothing twice.
 */
import { callDetailRecord, callView, type CallRecord } from '../engine/calls/call-record.js';
import type { CallHappening } from '../engine/calls/ports.js';
import type { NewEvent } from './event-repository.js';

/** End reasons that mean the agent could not be reached or broke the call (docs/API.md "End reasons"). */
const AGENT_FAILURES: ReadonlySet<string> = new Set(['agent_unreachable', 'agent_error']);

/**
 * `data.call`: the Call of `GET /v1/calls/{id}` without the live `session` (and without
 * `transcript`, which `call.transcript.ready` announces), with its CDR once ended.
 */
export function callPayload(c: CallRecord): Record<string, unknown> {
  return { ...callView(c), sip_headers: c.sip_headers, cdr: callDetailRecord(c), recording: { available: c.recording_path !== null } };
}

/**
 * The events of the change from `before` (undefined: the call is new) to `after`, in the order
 * they happened. `transcriptSources` are the transcripts written with the final record.
 */
export function callEvents(before: CallRecord | undefined, after: CallRecord, transcriptSources: readonly string[] = []): NewEvent[] {
  const events: NewEvent[] = [];
  const call = callPayload(after);
  const add = (type: NewEvent['type'], extra: Record<string, unknown> = {}): void => {
    events.push({ type, callId: after.id, data: { call, ...extra } });
  };
  if (before === undefined) add('call.initiated');
  const was = before ?? { ...after, state: 'initiated', ringing_at: null, answered_at: null, on_hold: false, transfer_state: null, transfer_started_at: null, conversation_id: null, recording_path: null };
  if (was.ringing_at === null && after.ringing_at !== null && was.state === 'initiated') add('call.ringing');
  if (was.answered_at === null && after.answered_at !== null) add('call.answered');
  if (was.conversation_id === null && after.conversation_id !== null) add('call.agent.connected', { conversation_id: after.conversation_id });
  if (was.state !== 'ended' && after.state !== 'ended' && was.on_hold !== after.on_hold) add(after.on_hold ? 'call.hold' : 'call.unhold');
  const newTransfer = after.transfer_started_at !== null && after.transfer_started_at !== was.transfer_started_at;
  if (newTransfer) add('call.transfer.started', { transfer_to: after.transfer_to });
  if (after.transfer_state !== null && (newTransfer || after.transfer_state !== was.transfer_state)) {
    if (after.transfer_state === 'connected') add('call.transfer.connected', { transfer_to: after.transfer_to });
    if (after.transfer_state === 'failed') add('call.transfer.failed', { transfer_to: after.transfer_to });
  }
  if (was.state !== 'ended' && after.state === 'ended') {
    if (after.end_reason !== null && AGENT_FAILURES.has(after.end_reason)) add('call.agent.failed', { reason: after.end_reason });
    add('call.ended');
  }
  if (after.state === 'ended' && after.recording_path !== null && (was.state !== 'ended' || was.recording_path === null)) add('call.recording.ready');
  if (after.state === 'ended' && transcriptSources.length > 0) add('call.transcript.ready', { sources: [...transcriptSources] });
  return events;
}

/** The event of something that happened to a live call without changing its record. */
export function happeningEvent(call: CallRecord, happening: CallHappening): NewEvent {
  const extra = happening.type === 'call.dtmf' ? { digit: happening.digit } : { conversation_id: null };
  return { type: happening.type, callId: call.id, data: { call: callPayload(call), ...extra } };
}
