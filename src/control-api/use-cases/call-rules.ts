/**
 * @module The rules of the call commands (docs/API.md "Errors" and docs/API.md "Calls"): the sandbox rule, the agent
 * address rule, and how each command failure maps to its problem code.
 */
import { isIP } from 'node:net';
import { isNonPublicHost, stripBrackets } from '../../common/address-policy.js';
import { resolveChecked, type OutboundAddressPolicy, type ResolvedAddress } from '../../common/outbound-policy.js';
import type { Clock } from '../../common/clock.js';
import { ApiError, assertNever } from '../../common/errors.js';
import type { CallCommandFailure, PlaceCallRequest } from '../../engine/calls/call-control.js';
import type { Principal } from '../api-state.js';
import type { HostResolver } from '../ports.js';
import { problems } from '../problem.js';

/** The built-in simulated carrier: the only one sandbox keys may use, and one live keys may not. */
export const SANDBOX_CARRIER = 'sandbox';

/** Longest wait for the agent host's name resolution before the request is refused. */
export const AGENT_LOOKUP_TIMEOUT_MS = 5_000;

/** The problem a command failure is answered with. */
export function failureError(failure: CallCommandFailure): ApiError {
  switch (failure.error) {
    case 'not_found': return problems.notFound('call');
    case 'call_not_active': return new ApiError(409, 'call_not_active', 'The call is not in a state that allows this action.');
    case 'transfer_in_progress': return new ApiError(409, 'transfer_in_progress', 'A transfer of this call is already under way.');
    case 'concurrency_limit':
      return new ApiError(429, 'concurrency_limit', 'The concurrent-call limit is reached; retry later.', {
        headers: { 'Retry-After': String(Math.max(1, Math.ceil(failure.retryAfterSeconds))) },
      });
    case 'unknown_carrier': return unknownCarrier();
    case 'caller_id_not_allowed':
      return new ApiError(400, 'caller_id_not_allowed', 'The tenant may not present that calling number on this carrier.', {
        errors: [{ path: '/from', message: 'is not a number the tenant may present on this carrier (its caller_id_policy: a number held there, or a verified caller ID)' }],
      });
    case 'carrier_unavailable': return new ApiError(502, 'carrier_unavailable', 'The carrier cannot be reached.', { cause: failure.detail });
    case 'unavailable': return new ApiError(503, 'unavailable', 'The gateway is unavailable.', { cause: failure.detail });
    default: return assertNever(failure, 'call command failure');
  }
}

export function unknownCarrier(): ApiError {
  return new ApiError(400, 'unknown_carrier', 'No carrier with that name.', { errors: [{ path: '/carrier', message: 'is not a configured carrier' }] });
}

/** The engine is not running in this process (docs/API.md "Errors": 503 `unavailable`). */
export function engineUnavailable(): ApiError {
  return new ApiError(503, 'unavailable', 'The call engine is not running.');
}

/** docs/API.md "Errors": a sandbox key places calls on the sandbox carrier only, a live key never there. */
export function checkSandboxRule(principal: Principal, carrier: string): void {
  const sandboxKey = principal.keyKind === 'sandbox';
  if (sandboxKey === (carrier === SANDBOX_CARRIER)) return;
  throw new ApiError(403, 'sandbox_mismatch', sandboxKey
    ? 'A sandbox key may only place calls on the sandbox carrier.'
    : 'The sandbox carrier takes sandbox keys only; use a live carrier with a live key.');
}

function refused(message: string): ApiError {
  return problems.validation([{ path: '/agent_ws_url', message }], 'The agent address is not allowed.');
}

/** `resolve(host)`, rejected after {@link AGENT_LOOKUP_TIMEOUT_MS}. */
export async function resolveWithin(resolve: HostResolver, host: string, clock: Clock): Promise<readonly ResolvedAddress[]> {
  let timer: { cancel(): void } | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = clock.setTimeout(() => reject(new Error('lookup timed out')), AGENT_LOOKUP_TIMEOUT_MS);
  });
  try {
    return await Promise.race([resolve(host), timeout]);
  } finally {
    timer?.cancel();
  }
}

export interface AgentUrlPolicy {
  /** The outbound-address policy of agent URLs (docs/SECURITY.md, "Outbound addresses"). */
  policy: OutboundAddressPolicy;
  resolve: HostResolver;
  clock: Clock;
}

/**
 * docs/API.md "Calls": `ws://` or `wss://` only; the host must neither be nor resolve to an address the
 * outbound-address policy refuses (every address of the name is checked, so one private A record
 * among public ones is refused), and must resolve. The engine connects later; it checks the
 * address it connects to again, since a name may resolve differently by then.
 */
export async function checkAgentUrl(value: string, policy: AgentUrlPolicy): Promise<void> {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw refused('is not a valid URL');
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') throw refused('must be a ws:// or wss:// URL');
  if (url.hostname === '') throw refused('has no host');
  const resolver = (host: string) => resolveWithin(policy.resolve, host, policy.clock);
  const checked = await resolveChecked(url.hostname, policy.policy, resolver);
  if (checked.ok) return;
  const host = stripBrackets(url.hostname);
  if (checked.reason === 'unresolved') throw refused(`host ${host} does not resolve`);
  throw refused(isIP(host) !== 0 || isNonPublicHost(host)
    ? 'must not point at a loopback, private, link-local or otherwise non-public address'
    : `host ${host} resolves to a loopback, private, link-local or otherwise non-public address`);
}

/**
 * docs/API.md "Answering-machine detection": `on_machine` and `wait_for_beep` belong to
 * `hold_until_result` (with `async` the agent is connected at the answer whatever answered), and
 * `wait_for_beep` to `on_machine: connect` (a machine hung up waits for nothing). The defaults of
 * a `hold_until_result` call filled in: `hangup`, no beep wait.
 */
export function amdHoldOptions(input: { machine_detection?: string; on_machine?: 'hangup' | 'connect'; wait_for_beep?: boolean }): Pick<PlaceCallRequest, 'onMachine' | 'waitForBeep'> {
  const mismatch = (path: string, message: string) => new ApiError(400, 'machine_detection_mismatch', 'These answering-machine detection options do not go together.', { errors: [{ path, message }] });
  if (input.machine_detection !== 'hold_until_result') {
    if (input.on_machine !== undefined) throw mismatch('/on_machine', 'is only taken with machine_detection: hold_until_result');
    if (input.wait_for_beep !== undefined) throw mismatch('/wait_for_beep', 'is only taken with machine_detection: hold_until_result');
    return {};
  }
  const onMachine = input.on_machine ?? 'hangup';
  if (input.wait_for_beep === true && onMachine !== 'connect') throw mismatch('/wait_for_beep', 'is only taken with on_machine: connect');
  return { onMachine, waitForBeep: input.wait_for_beep ?? false };
}
