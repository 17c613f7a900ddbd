/**
 * @module `GET /v1/events/stream` (docs/API.md "Live event stream", docs/EVENTS.md "Live stream"):
 * the tenant's events as Server-Sent Events, each `id: evt_…`, `event: <type>`, `data: <envelope>`.
 * A `Last-Event-ID` resumes from the log after that event; then events come live from the
 * in-process bus (the `all` role) or, where the engine is another process, from the log every
 * second. A `: keepalive` comment keeps idle connections open through proxies.
 */
import { PassThrough } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { TenantId } from '../../../common/ids.js';
import type { EventBus } from '../../../events/event-bus.js';
import { matchesFilter, type EventFilter, type EventRecord, type EventRepository } from '../../../storage/index.js';
import { defineRoute, type AnyRoute } from '../../route.js';
import { TypeFilter } from './events.schemas.js';

export interface EventStreamDeps {
  events: Pick<EventRepository, 'get' | 'after' | 'latestSeq'>;
  /** Committed events of this process; absent in an API process (the log is polled instead). */
  bus?: EventBus | undefined;
  keepaliveMs: number;
  /** How often the log is read without a bus. */
  pollMs?: number;
}

const BACKLOG_PAGE = 500;

/** One Server-Sent Events message (the envelope is one line of JSON: no newline to escape). */
export const sseMessage = (e: Pick<EventRecord, 'id' | 'type' | 'payload'>): string => `id: ${e.id}\nevent: ${e.type}\ndata: ${e.payload}\n\n`;

export function eventStreamRoutes(deps: EventStreamDeps): AnyRoute[] {
  return [
    defineRoute({
      method: 'GET', path: '/v1/events/stream', operationId: 'streamEvents', tags: ['events'], auth: 'tenant',
      summary: "The tenant's events as they happen (Server-Sent Events), resumable with Last-Event-ID",
      query: Type.Object({ type: Type.Optional(TypeFilter), call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) }, { additionalProperties: false }),
      requestHeaders: { 'Last-Event-ID': { description: 'Resume after this event (`evt_…`): the events logged since are sent first. An id not in the log (past retention) starts from now.' } },
      responses: { 200: { description: 'A stream of `id: evt_…` / `event: <type>` / `data: <Event JSON>` messages and `: keepalive` comments.', contentType: 'text/event-stream', schema: Type.String() } },
      async handle({ query, principal, ctx }) {
        const filter: EventFilter = { type: query.type, callId: query.call_id };
        const lastId = ctx.get('last-event-id');
        const resumed = lastId ? await deps.events.get(principal.tenantId, lastId) : undefined;
        const stream = new PassThrough();
        ctx.req.socket.setTimeout(0);
        ctx.req.socket.setNoDelay(true);
        // Not compressed or buffered by proxies: each message is sent as it is written.
        const headers = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' };
        void pump(deps, principal.tenantId, filter, resumed?.seq ?? await deps.events.latestSeq(principal.tenantId), stream, () => ctx.req.once('close', () => stream.end()));
        return { status: 200, headers, body: stream };
      },
    }),
  ];
}

/** Writes the backlog after `afterSeq`, then live events, until the client goes. */
async function pump(deps: EventStreamDeps, tenantId: TenantId, filter: EventFilter, afterSeq: number, out: PassThrough, onClose: () => void): Promise<void> {
  let last = afterSeq;
  let closed = false;
  const buffered: EventRecord[] = [];
  let live = false;
  const send = (e: EventRecord): void => {
    if (closed || e.seq <= last) return;
    last = e.seq;
    if (matchesFilter(e, filter)) out.write(sseMessage(e));
  };
  // Subscribed before the backlog is read, so nothing committed in between is missed.
  const unsubscribe = deps.bus?.subscribe((e) => {
    if (e.tenant_id !== tenantId) return;
    if (live) send(e);
    else buffered.push(e);
  });
  const keepalive = setInterval(() => out.write(': keepalive\n\n'), deps.keepaliveMs);
  let poll: NodeJS.Timeout | undefined;
  out.once('close', () => {
    closed = true;
    unsubscribe?.();
    clearInterval(keepalive);
    clearInterval(poll);
  });
  onClose();
  out.write(': connected\n\n');
  const catchUp = async (): Promise<void> => {
    for (let page = await deps.events.after(tenantId, last, {}, BACKLOG_PAGE); page.length > 0 && !closed; page = await deps.events.after(tenantId, last, {}, BACKLOG_PAGE)) {
      for (const e of page) send(e);
      if (page.length < BACKLOG_PAGE) break;
    }
  };
  try {
    await catchUp();
    for (const e of buffered.splice(0)) send(e);
    live = true;
    if (!deps.bus) poll = setInterval(() => void catchUp().catch(() => out.end()), deps.pollMs ?? 1000);
  } catch {
    out.end();
  }
}
