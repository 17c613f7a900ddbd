/**
 * @module Placing an outbound call (docs/API.md "Calls"): the carrier must exist, the key's kind
 * must match it (the sandbox rule), and the agent address must pass the outbound-address policy,
 * all before the request counts against its Idempotency-Key.
 */
import type { Clock } from '../../common/clock.js';
import type { OutboundAddressPolicy } from '../../common/outbound-policy.js';
import type { CallControl, CallCommandResult, PlaceCallRequest } from '../../engine/calls/call-control.js';
import type { Principal } from '../api-state.js';
import type { HostResolver } from '../ports.js';
import { amdHoldOptions, checkAgentUrl, checkSandboxRule, unknownCarrier } from './call-rules.js';

export interface PlaceCallDeps {
  resolveHost: HostResolver;
  clock: Clock;
  /** The outbound-address policy of agent URLs (docs/SECURITY.md, "Outbound addresses"). */
  agentUrls: OutboundAddressPolicy;
}

export interface PlaceCallInput {
  from: string;
  to: string;
  carrier: string;
  agent_ws_url: string;
  record?: boolean;
  machine_detection?: PlaceCallRequest['machineDetection'];
  on_machine?: PlaceCallRequest['onMachine'];
  wait_for_beep?: boolean;
}

/** A call that passed every rule: what identifies it for idempotency, and the command that places it. */
export interface AdmittedCall {
  /** The request as placed, defaults filled: the Idempotency-Key's body. */
  request: Omit<PlaceCallRequest, 'tenantId'>;
  place(): Promise<CallCommandResult>;
}

/** Checks a call against the placement rules; throws the problem of the first one it breaks. */
export async function admitCall(deps: PlaceCallDeps, calls: CallControl, principal: Principal, input: PlaceCallInput): Promise<AdmittedCall> {
  // Part of the body's own checks: before anything is looked up.
  const amdHold = amdHoldOptions(input);
  if (!(await calls.carrierNames()).includes(input.carrier)) throw unknownCarrier();
  checkSandboxRule(principal, input.carrier);
  await checkAgentUrl(input.agent_ws_url, { policy: deps.agentUrls, resolve: deps.resolveHost, clock: deps.clock });
  const request = {
    from: input.from, to: input.to, carrier: input.carrier, agentUrl: input.agent_ws_url, record: input.record ?? false,
    machineDetection: input.machine_detection ?? 'off', ...amdHold,
  };
  return { request, place: () => calls.place({ tenantId: principal.tenantId, ...request }) };
}
