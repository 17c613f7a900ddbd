/** @module Reading calls: the live list and the detail of a live or completed call (docs/API.md "Calls"). */
import { Type } from '@sinclair/typebox';
import type { Clock } from '../../../common/clock.js';
import type { CallControl } from '../../../engine/calls/call-control.js';
import type { CallRepository, TranscriptRepository } from '../../../storage/index.js';
import { DEFAULT_LIMIT, decodeCursor, envelope, pageEnvelope } from '../../pagination.js';
import { problems } from '../../problem.js';
import { defineRoute, SerializedJson, type AnyRoute } from '../../route.js';
import { IdParams } from '../agents/agents.schemas.js';
import { callDetailRecord } from '../../../engine/calls/call-record.js';
import { historyFilter } from './call-history.js';
import { presentSession } from './call-session.schemas.js';
import { CallDetailSchema, CallSchema, ListCallsQuery, presentCall } from './calls.schemas.js';
import { callInScope, carrierScopeOf, isInKeyScope } from './key-scope.js';
import type { LiveListCache } from './live-list-cache.js';

export interface CallRouteDeps {
  calls: Pick<CallRepository, 'list' | 'get'>;
  transcripts: Pick<TranscriptRepository, 'sources' | 'get'>;
  /** Live media state of calls in progress (the engine); null for every call when it is not running. */
  sessions: Pick<CallControl, 'sessionOf'> | undefined;
  clock: Clock;
  /** How long ended calls stay in `state=ended` lists. */
  liveWindowMs: number;
  /**
   * Pages of the live list (no `state`) served again for a short time, as serialised: an `api`
   * process's; every request reads without it.
   */
  liveList?: LiveListCache<SerializedJson> | undefined;
}

const TurnSchema = Type.Object({ role: Type.Union([Type.Literal('caller'), Type.Literal('agent')]), text: Type.String(), offset_s: Type.Number() });

export function callReadRoutes(deps: CallRouteDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/calls', operationId: 'listCalls', tags: ['calls'], auth: 'tenant',
      summary: "The tenant's live calls, newest first",
      description: 'Without `state`: calls not yet ended. `state=ended`: calls that ended within the live window (15 minutes by default), '
        + 'or, with the history filters (`number`, `ended_after`, `ended_before`, `end_reason`, `carrier`), any ended call they select. '
        + 'A sandbox key lists only calls on the sandbox carrier, a live key only calls on the other carriers.',
      query: ListCallsQuery,
      responses: { 200: { description: 'A page of calls.', schema: pageEnvelope(CallSchema) } },
      async handle({ query, principal }) {
        const history = historyFilter(query, deps.clock.now() - deps.liveWindowMs);
        const filter = { state: query.state, direction: query.direction, ...history, carrier: carrierScopeOf(principal) };
        const request = { limit: query.limit ?? DEFAULT_LIMIT, after: decodeCursor(query.cursor) };
        const read = async (): Promise<ReturnType<typeof envelope>> => {
          const page = await deps.calls.list(principal.tenantId, filter, request);
          return envelope(page.items.map(presentCall), page.next);
        };
        // Without `state` there are no history filters either (historyFilter refuses them): the
        // page is the key's scope, the direction and the paging alone.
        const body = deps.liveList && query.state === undefined
          ? await deps.liveList.page(principal.tenantId, JSON.stringify([filter.carrier, filter.direction ?? null, request.limit, request.after ?? null]), async () => SerializedJson.of(await read()))
          : await read();
        return { status: 200, body };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/calls/{id}', operationId: 'getCall', tags: ['calls'], auth: 'tenant',
      summary: 'A live or completed call: session state, CDR, transcript and recording presence',
      description: 'A call reads as `ended` only once its CDR, recording and transcripts are final: they are written with the `ended` state, so polling until `ended` and then fetching the recording or transcript finds them (docs/API.md, "When a call reads as ended").',
      params: IdParams,
      responses: { 200: { description: 'The call detail.', schema: CallDetailSchema } },
      errors: { 404: 'No such call for this tenant, or one outside the key\'s scope (`not_found`).' },
      async handle({ params, principal }) {
        const call = callInScope(principal, await deps.calls.get(principal.tenantId, params.id));
        const sources = await deps.transcripts.sources(principal.tenantId, call.id);
        const session = call.state === 'ended' ? null : await deps.sessions?.sessionOf(principal.tenantId, call.id);
        return {
          status: 200,
          body: {
            ...presentCall(call),
            sip_headers: call.sip_headers,
            session: session ? presentSession(session) : null,
            cdr: callDetailRecord(call),
            transcript: { available: sources.length > 0, source: sources[0] ?? null },
            recording: { available: call.recording_path !== null },
          },
        };
      },
    }),
    defineRoute({
      method: 'GET', path: '/v1/calls/{id}/transcript', operationId: 'getCallTranscript', tags: ['calls'], auth: 'tenant',
      summary: "A call's transcript (the provider's when there is one, else the gateway's)",
      params: IdParams,
      responses: { 200: { description: 'The transcript.', schema: Type.Object({ call_id: Type.String(), source: Type.String(), turns: Type.Array(TurnSchema) }) } },
      errors: { 404: 'No such call (or one outside the key\'s scope), or no transcript (`not_found`).' },
      async handle({ params, principal }) {
        const call = await deps.calls.get(principal.tenantId, params.id);
        // Out of the key's scope reads exactly like a call that does not exist.
        if (!call || !isInKeyScope(principal, call)) throw problems.notFound('transcript for that call');
        const source = (await deps.transcripts.sources(principal.tenantId, params.id))[0];
        const turns = source && await deps.transcripts.get(principal.tenantId, params.id, source);
        if (!source || !turns) throw problems.notFound('transcript for that call');
        return { status: 200, body: { call_id: params.id, source, turns } };
      },
    }),
  ];
}
