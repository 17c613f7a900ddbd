/**
 * @module Transfers the agent asks for (docs/API.md "Transfers asked by the agent"): a REFER on a
 * sip_trunk agent's leg, or a `transfer` message on an agent's socket. Each is screened against
 * the agent's transfer policy and the operator's denied prefixes before anything is accepted, then
 * runs as an API transfer does, with the same record and CDR trail.
 */
import type { Call } from '../call.js';
import type { CallCommandFailure } from '../call-control.js';
import type { TransferProgress } from './transfer.js';
import { checkTransfer, parseTransferTarget, type TransferPolicy } from './transfer-policy.js';

/** What an agent side may ask of its call. */
export interface AgentAsks {
  /**
   * Screens a transfer to `to` (a Refer-To URI or a number): null when it may go ahead, else the
   * SIP status that refuses it (403 outside the policy, 400 for a target that is no address).
   */
  screenTransfer(to: string): Promise<number | null>;
  /** Starts a transfer that passed the screen; `progress` hears its outcome as a SIP status. */
  transfer(to: string, progress: TransferProgress): Promise<void>;
}

export interface AgentTransferDeps {
  /** Numbers no agent may transfer to, whatever its policy (`calls.transfer_denied_prefixes`). */
  deniedPrefixes: readonly string[];
  /** The agent's policy: read when asked (from storage), since the agent side is made after the asks. */
  policy(): Promise<TransferPolicy>;
  /** The call's own transfer (the API's), asked for by the agent: to `+E164` or to a SIP URI. */
  start(target: string, progress: TransferProgress): CallCommandFailure | null;
}

/** The asks of one call's agent, counting its transfers against the policy's per-call cap. */
export function agentAsks(call: Call, deps: AgentTransferDeps): AgentAsks {
  let started = 0;
  // The per-call cap is checked against `started` after the policy is read, in the same turn as
  // the transfer that passes starts and counts: two asks at once cannot both slip under it.
  const screen = async (to: string): Promise<{ target: string } | { refused: number; why: string }> => {
    const target = parseTransferTarget(to);
    if (target === null) return { refused: 400, why: 'not a phone number or SIP address' };
    const policy = await deps.policy();
    const verdict = checkTransfer(target, policy, deps.deniedPrefixes, started);
    if (!verdict.allowed) return { refused: 403, why: verdict.why };
    // A number goes over the call's carrier; a SIP address the policy allows is dialled directly (transfer-dial.ts).
    return { target: target.kind === 'number' ? target.number : target.uri };
  };
  return {
    async screenTransfer(to) {
      const outcome = await screen(to);
      if (!('refused' in outcome)) return null;
      call.log.warn({ to, status: outcome.refused, why: outcome.why }, 'agent transfer refused');
      return outcome.refused;
    },
    async transfer(to, progress) {
      let outcome: Awaited<ReturnType<typeof screen>>;
      try {
        outcome = await screen(to);
      } catch (err) {
        // The policy could not be read (storage unavailable): reported as the transfer's failure.
        call.log.warn({ err: (err as Error).message, to }, 'agent transfer not screened');
        return progress(500, 'Server Internal Error');
      }
      if ('refused' in outcome) return progress(outcome.refused, 'Forbidden');
      const failure = deps.start(outcome.target, progress);
      if (failure !== null) return progress(failure.error === 'transfer_in_progress' ? 491 : 481, failure.error);
      started += 1;
      call.log.info({ to: outcome.target }, 'agent transfer started');
    },
  };
}
