/** @module What dialling a sip_trunk agent edge comes to, and what the caller is told when it fails (sip-trunk-side.ts). */
import type { EndReason } from '../ending/end-reason.js';

export type TrunkDialOutcome = { kind: 'answered' } | { kind: 'failed'; callerStatus: number; reason: EndReason };

export interface TrunkHooks {
  /** The agent's leg is alerting (180), or sent early media (183 with SDP, already bridged). */
  onRinging(earlyMedia: boolean): void;
}

/**
 * What the caller is told when the agent's leg fails (RFC 3261 16.7 style: the best final
 * response, not every internal detail). Busy, not found, no answer and decline pass through; no
 * answer at all or a server error at the platform is our 503, so the carrier may try elsewhere.
 */
export function callerStatusFor(status: number, answered: boolean): number {
  if (!answered) return 503;
  if ([404, 480, 486, 487, 600, 603, 604].includes(status)) return status;
  if (status === 408) return 480;
  return status >= 500 ? 503 : 480;
}
