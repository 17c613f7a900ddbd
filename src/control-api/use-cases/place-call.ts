/**
 * @module Placing an outbound call (docs/API.md "Calls"): the carrier must exist, the key's kind
 * must match it (the sandbox rule), the agent is exactly one of an address that passes the
 * outbound-address policy and an imported agent of the tenant, and the headers and parameters
 * are safe to carry, all before the request counts against its Idempotency-Key.
 */
import type { Clock } from '../../common/clock.js';
import type { OutboundAddressPolicy } from '../../common/outbound-policy.js';
import type { CallControl, CallCommandResult, PlaceCallRequest } from '../../engine/calls/call-control.js';
import type { AgentRecord } from '../../storage/index.js';
import type { Principal } from '../api-state.js';
import { problems } from '../problem.js';
import { checkCustomParameters, checkSipHeaders } from './call-headers.js';
import type { HostResolver } from '../ports.js';
import { amdHoldOptions, checkAgentUrl, checkSandboxRule, unknownCarrier } from './call-rules.js';

export interface PlaceCallDeps {
  resolveHost: HostResolver;
  clock: Clock;
  /** The outbound-address policy of agent URLs (docs/SECURITY.md, "Outbound addresses"). */
  agentUrls: OutboundAddressPolicy;
  /** The tenant's imported agents, for `agent_id`. */
  agents: { get(tenantId: Principal['tenantId'], id: string): Promise<AgentRecord | undefined> };
}

export interface PlaceCallInput {
  from: string;
  to: string;
  carrier: string;
  agent_ws_url?: string;
  agent_id?: string;
  record?: boolean;
  machine_detection?: PlaceCallRequest['machineDetection'];
  on_machine?: PlaceCallRequest['onMachine'];
  wait_for_beep?: boolean;
  sip_headers?: Record<string, string>;
  custom_parameters?: Record<string, string>;
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
  const agent = await admitAgent(deps, principal, input);
  const sipHeaders = checkSipHeaders(input.sip_headers);
  const customParameters = checkCustomParameters(input.custom_parameters);
  const request = {
    from: input.from, to: input.to, carrier: input.carrier, ...agent, record: input.record ?? false, machineDetection: input.machine_detection ?? 'off', ...amdHold,
    ...(sipHeaders ? { sipHeaders } : {}), ...(customParameters ? { customParameters } : {}),
  } as const;
  return { request, place: () => calls.place({ tenantId: principal.tenantId, ...request }) };
}

/**
 * docs/API.md "Calls": exactly one of `agent_ws_url` and `agent_id`; an `agent_id` names an agent
 * of this tenant (another tenant's reads as unknown, 404), connected in its connection mode.
 */
async function admitAgent(deps: PlaceCallDeps, principal: Principal, input: PlaceCallInput): Promise<Pick<PlaceCallRequest, 'agentUrl' | 'agentId' | 'agentMode'>> {
  if ((input.agent_ws_url === undefined) === (input.agent_id === undefined)) {
    throw problems.validation([{ path: input.agent_id === undefined ? '/agent_ws_url' : '/agent_id', message: 'give exactly one of agent_ws_url and agent_id' }], 'Say which agent takes the call.');
  }
  if (input.agent_ws_url !== undefined) {
    await checkAgentUrl(input.agent_ws_url, { policy: deps.agentUrls, resolve: deps.resolveHost, clock: deps.clock });
    return { agentUrl: input.agent_ws_url };
  }
  const agent = await deps.agents.get(principal.tenantId, input.agent_id!);
  if (!agent) throw problems.notFound('agent');
  // docs/API.md "Outbound calls to imported agents": the detector listens on a streaming agent's media leg; a sip_trunk edge bridges it instead.
  if (agent.connection_mode === 'sip_trunk' && (input.machine_detection ?? 'off') !== 'off') {
    throw problems.validation([{ path: '/machine_detection', message: 'answering-machine detection runs for streaming agents only, not sip_trunk agents' }]);
  }
  return { agentId: agent.id, agentMode: agent.connection_mode };
}
