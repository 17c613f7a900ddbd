/**
 * @module Every way a call ends (docs/API.md "Calls"): `end_reason`, the SIP status when SIP said
 * so, and who hung up. Failures classify themselves from the final response.
 */

export const END_REASONS = [
  'completed', 'busy', 'no_answer', 'declined', 'not_found', 'unavailable', 'carrier_unreachable',
  'canceled', 'agent_unreachable', 'agent_error', 'media_timeout', 'transferred', 'gateway_restart',
  'gateway_shutdown', 'number_released', 'failed', 'machine_detected', 'gateway_failure',
] as const;
export type EndReasonCode = (typeof END_REASONS)[number];

export type HangupBy = 'caller' | 'callee' | 'agent' | 'api' | 'gateway';

export interface EndReason {
  reason: EndReasonCode;
  sipStatus: number | null;
  hangupBy: HangupBy;
}

/**
 * The end of an attempt that got a final non-2xx response (RFC 3261 21.4-21.6). 486/600 busy,
 * 408/480/487-after-timeout no answer, 603 declined, 404/484/604 not found, 5xx unavailable.
 */
export function endReasonForFailure(status: number): EndReason {
  const byStatus = (): EndReasonCode => {
    if (status === 486 || status === 600) return 'busy';
    if (status === 408 || status === 480) return 'no_answer';
    if (status === 603 || status === 403) return 'declined';
    if (status === 404 || status === 484 || status === 604) return 'not_found';
    if (status === 487) return 'canceled';
    if (status >= 500 && status < 600) return 'unavailable';
    return 'failed';
  };
  return { reason: byStatus(), sipStatus: status, hangupBy: 'callee' };
}
