/** @module `GET /v1/calls/{id}/sip-trace` (docs/API.md "SIP trace of a call"): the ladder as JSON, or a pcap file. */
import { Type } from '@sinclair/typebox';
import type { TenantId } from '../../../common/ids.js';
import { StringEnum } from '../../../common/schema.js';
import type { CallRepository, SipTraceRecord } from '../../../storage/index.js';
import { ApiError } from '../../../common/errors.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { IdParams } from '../agents/agents.schemas.js';
import { isInKeyScope } from './key-scope.js';
import { sipTracePcap } from './sip-trace-pcap.js';

const noTrace = (): ApiError => new ApiError(404, 'not_found', 'That call has no SIP trace.');

export const PCAP_MEDIA_TYPE = 'application/vnd.tcpdump.pcap';

/** A call's SIP trace, live or stored (the engine's reader). */
export interface SipTraceReader {
  read(tenantId: TenantId, callId: string): Promise<SipTraceRecord | undefined>;
}

const Leg = StringEnum(['carrier', 'agent', 'transfer_target'], { description: "The carrier's leg, a sip_trunk agent edge's, or a bridge transfer's target." });

const SipTraceSchema = Type.Object({
  call_id: Type.String(),
  legs: Type.Array(Type.Object({ leg: Leg, sip_call_id: Type.String({ description: 'The SIP Call-ID of the leg (one per attempt).' }) })),
  messages: Type.Array(Type.Object({
    at: Type.String({ format: 'date-time', description: 'When the gateway received or sent it.' }),
    direction: StringEnum(['received', 'sent']),
    transport: StringEnum(['UDP', 'TCP', 'TLS']),
    source: Type.String({ description: '`address:port`.' }),
    destination: Type.String({ description: '`address:port`.' }),
    leg: Leg,
    sip_call_id: Type.String(),
    summary: Type.String({ description: 'The start line: a request\'s method and URI, or a response\'s status.' }),
    text: Type.String({ description: 'The whole message; SDP `a=crypto` keys and digest `response` values are masked with `*`.' }),
  })),
  dropped_messages: Type.Integer({ minimum: 0, description: 'Oldest messages left out to keep the trace within its size cap (the tail is kept).' }),
});

export function sipTraceRoutes(deps: { calls: Pick<CallRepository, 'get'>; traces: SipTraceReader | undefined }): AnyRoute[] {
  return [defineRoute({
    method: 'GET', path: '/v1/calls/{id}/sip-trace', operationId: 'getCallSipTrace', tags: ['calls'], auth: 'tenant',
    summary: "Every SIP message of a call's legs, in order: a JSON ladder, or a pcap file",
    description: `With \`Accept: ${PCAP_MEDIA_TYPE}\` the answer is a pcap file (LINKTYPE_RAW, one UDP datagram or TCP segment per message) `
      + 'for Wireshark or sngrep; otherwise JSON. Kept for `observability.sip_trace.retention_days` after the call.',
    params: IdParams,
    responses: { 200: { description: 'The trace (JSON; a pcap file when asked).', schema: SipTraceSchema } },
    errors: { 404: 'No such call (or one outside the key\'s scope), or no trace kept for it (`not_found`).' },
    async handle({ params, principal, ctx }) {
      const call = await deps.calls.get(principal.tenantId, params.id);
      // Another tenant's call, or one out of the key's scope, reads like a call that does not exist.
      if (!call || !isInKeyScope(principal, call)) throw noTrace();
      const trace = await deps.traces?.read(principal.tenantId, call.id);
      if (!trace) throw noTrace();
      if (ctx.accepts('application/json', PCAP_MEDIA_TYPE) === PCAP_MEDIA_TYPE) {
        return {
          status: 200, body: sipTracePcap(trace.messages),
          headers: { 'Content-Type': PCAP_MEDIA_TYPE, 'Content-Disposition': `attachment; filename="${call.id}.pcap"`, 'X-Content-Type-Options': 'nosniff' },
        };
      }
      const messages = trace.messages.map((m) => ({ ...m, summary: m.text.slice(0, Math.max(0, m.text.indexOf('\r\n'))) }));
      return { status: 200, body: { call_id: call.id, legs: trace.legs, messages, dropped_messages: trace.dropped_messages } };
    },
  })];
}
