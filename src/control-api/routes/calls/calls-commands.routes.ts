/**
 * @module Call commands (docs/API.md "Calls"): place a call (with Idempotency-Key), hold, unhold,
 * hang up and transfer. Each handler parses the request, has it checked (use-cases/) and hands it
 * to one CallControl command.
 */
import type { CallCommandResult, CallControl } from '../../../engine/calls/call-control.js';
import { isCallFailure } from '../../../engine/calls/call-control.js';
import type { CallRepository, IdempotencyRepository } from '../../../storage/index.js';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER, idempotencyKeyOf, runIdempotent } from '../../idempotency.js';
import { defineRoute, type AnyRoute, type RouteResult } from '../../route.js';
import { IdParams } from '../agents/agents.schemas.js';
import { engineUnavailable, failureError } from '../../use-cases/call-rules.js';
import { admitCall, type AdmittedCall, type PlaceCallDeps } from '../../use-cases/place-call.js';
import { CallSchema, DtmfBody, NoBody, PlaceCallBody, TransferBody, presentCall } from './calls.schemas.js';
import { callInScope } from './key-scope.js';

export interface CallCommandDeps extends PlaceCallDeps {
  /** The engine's commands; absent when the engine is not running here (every command is a 503). */
  calls: CallControl | undefined;
  /** The stored calls, read to hold each command to the key's scope before the engine acts. */
  records: Pick<CallRepository, 'get' | 'getByControlId'>;
  idempotency: Pick<IdempotencyRepository, 'reserve' | 'complete' | 'release'>;
}

const CALL_RESPONSE = { 200: { description: 'The call.', schema: CallSchema } };
const ENGINE_DOWN = 'The call engine is not running, the gateway is draining, or it is out of media ports (`unavailable`).';
const COMMAND_ERRORS = {
  404: 'No such call for this tenant, or one outside the key\'s scope: sandbox keys command sandbox calls only, live keys live calls only (`not_found`).',
  409: 'The call is not active (`call_not_active`), or, for a transfer, one is already under way (`transfer_in_progress`).',
  503: ENGINE_DOWN,
};

function answer(result: CallCommandResult): RouteResult {
  if (isCallFailure(result)) throw failureError(result);
  return { status: 200, body: presentCall(result.call) };
}

/** The body an Idempotency-Key is bound to, in the API's names (as stored since keys were introduced). */
function idempotencyBody({ request }: AdmittedCall) {
  const hold = request.onMachine !== undefined ? { on_machine: request.onMachine, wait_for_beep: request.waitForBeep } : {};
  return {
    from: request.from, to: request.to, carrier: request.carrier, agent_ws_url: request.agentUrl, agent_id: request.agentId, record: request.record,
    machine_detection: request.machineDetection, ...hold, sip_headers: request.sipHeaders, custom_parameters: request.customParameters,
  };
}

function engine(deps: CallCommandDeps): CallControl {
  if (!deps.calls) throw engineUnavailable();
  return deps.calls;
}

type Command = 'hold' | 'unhold' | 'hangup';

const COMMANDS: Record<Command, { operationId: string; summary: string; description: string }> = {
  hold: {
    operationId: 'holdCall', summary: 'Put an active call on hold',
    description: 'Both legs are muted, recording and transcription pause, and the agent receives no caller audio. The call stays `active` with `on_hold: true`. Holding a held call changes nothing.',
  },
  unhold: {
    operationId: 'unholdCall', summary: 'Take a call off hold',
    description: 'Reverses hold: audio, recording and transcription resume. Unholding a call not on hold changes nothing.',
  },
  hangup: {
    operationId: 'hangupCall', summary: 'Hang up a call',
    description: 'Ends the call: CANCEL while it rings, BYE once answered. Answers with the ended call.',
  },
};

function commandRoute(deps: CallCommandDeps, command: Command): AnyRoute {
  return defineRoute({
    method: 'POST', path: `/v1/calls/{id}/${command}`, tags: ['calls'], auth: 'tenant', ...COMMANDS[command],
    params: IdParams,
    body: NoBody,
    bodyOptional: true,
    responses: CALL_RESPONSE,
    errors: COMMAND_ERRORS,
    async handle({ params, principal }) {
      const calls = engine(deps);
      callInScope(principal, await deps.records.get(principal.tenantId, params.id));
      return answer(await calls[command](principal.tenantId, params.id));
    },
  });
}

function placeRoute(deps: CallCommandDeps): AnyRoute {
  return defineRoute({
    method: 'POST', path: '/v1/calls', operationId: 'placeCall', tags: ['calls'], auth: 'tenant',
    summary: 'Place an outbound call over a carrier and connect it to an agent WebSocket or an imported agent',
    description: `Answers at once with the call in state \`initiated\`. Send an \`${IDEMPOTENCY_KEY_HEADER}\` header (1 to 255 visible ASCII characters) to make retries safe: the same key and body within 24 hours replays the first response with \`${IDEMPOTENT_REPLAYED_HEADER}: true\` and places no second call.`,
    body: PlaceCallBody,
    requestHeaders: { [IDEMPOTENCY_KEY_HEADER]: { description: 'Makes retries safe: the same key and body within 24 hours replays the first response and places no second call.', pattern: '^[\\x21-\\x7e]{1,255}$' } },
    responses: {
      200: {
        ...CALL_RESPONSE[200],
        description: 'The call, state `initiated`.',
        headers: { [IDEMPOTENT_REPLAYED_HEADER]: { description: '`true` when this is the stored response of an earlier request with the same Idempotency-Key.' } },
      },
    },
    errors: {
      400: 'Validation (`validation_failed`, also for a refused `agent_ws_url`, neither or both of `agent_ws_url` and `agent_id`, or a malformed Idempotency-Key), `unknown_carrier`, `caller_id_not_allowed`, a refused header (`sip_header_not_allowed`) or custom parameter (`custom_parameter_not_allowed`), or `machine_detection_mismatch` (`on_machine` or `wait_for_beep` without `machine_detection: hold_until_result`, or `wait_for_beep` without `on_machine: connect`).',
      403: 'CSRF check failed (`csrf_rejected`), or a sandbox key on a live carrier or a live key on the sandbox carrier (`sandbox_mismatch`).',
      404: 'No agent with that `agent_id` for this tenant (`not_found`).',
      409: 'The Idempotency-Key was used with another body, or its first request is still running (`idempotency_conflict`).',
      429: 'Rate limited (`rate_limited`) or at the concurrent-call limit (`concurrency_limit`); see Retry-After.',
      502: 'The carrier cannot be reached (`carrier_unavailable`).',
      503: ENGINE_DOWN,
    },
    async handle({ body, principal, ctx }) {
      const key = idempotencyKeyOf(ctx.headers['idempotency-key']);
      const admitted = await admitCall(deps, engine(deps), principal, body);
      return runIdempotent(deps.idempotency, { tenantId: principal.tenantId, key, scope: 'POST /v1/calls', body: idempotencyBody(admitted) }, async () => answer(await admitted.place()));
    },
  });
}

function transferRoute(deps: CallCommandDeps): AnyRoute {
  return defineRoute({
    method: 'POST', path: '/v1/calls/transfer', operationId: 'transferCall', tags: ['calls'], auth: 'tenant',
    summary: 'Blind-transfer the remote party of an active call to another number',
    description: 'The remote party (the callee of an outbound call, the caller of an inbound one) is sent to `to` over the call\'s carrier; the agent leg is released once the target answers, or once the carrier accepts a REFER where it is configured for REFER. The answer carries `transfer` `{to, state, started_at}`.',
    body: TransferBody,
    responses: { 200: { description: 'The call, with `transfer` set.', schema: CallSchema } },
    errors: {
      ...COMMAND_ERRORS, 404: 'No call with that call_control_id for this tenant, or one outside the key\'s scope (`not_found`).',
      502: 'The carrier cannot be reached (`carrier_unavailable`).',
    },
    async handle({ body, principal }) {
      const calls = engine(deps);
      callInScope(principal, await deps.records.getByControlId(principal.tenantId, body.call_control_id));
      return answer(await calls.transfer(principal.tenantId, body.call_control_id, body.to));
    },
  });
}

function dtmfRoute(deps: CallCommandDeps): AnyRoute {
  return defineRoute({
    method: 'POST', path: '/v1/calls/{id}/dtmf', operationId: 'sendCallDtmf', tags: ['calls'], auth: 'tenant',
    summary: 'Send digits toward the remote party of an active call',
    description: 'Queued after digits sent before: RFC 4733 events when the carrier leg negotiated telephone-event, in-band tones otherwise, SIP INFO where the carrier is configured for it (docs/API.md, "Digits toward the callee"). Answers once queued.',
    params: IdParams,
    body: DtmfBody,
    responses: CALL_RESPONSE,
    errors: { ...COMMAND_ERRORS, 409: 'The call is not active (`call_not_active`).' },
    async handle({ params, principal, body }) {
      const calls = engine(deps);
      callInScope(principal, await deps.records.get(principal.tenantId, params.id));
      return answer(await calls.sendDigits(principal.tenantId, params.id, body.digits));
    },
  });
}

export function callCommandRoutes(deps: CallCommandDeps): AnyRoute[] {
  // Hang-up last: it ends the call that the commands before it act on.
  return [placeRoute(deps), transferRoute(deps), commandRoute(deps, 'hold'), commandRoute(deps, 'unhold'), dtmfRoute(deps), commandRoute(deps, 'hangup')];
}
