/**
 * @module What the PostgreSQL query-plan check reads: the text of every statement the
 * repositories send through the SQL port, gathered by running each read and write on the
 * growing tables once, on real rows, so that the statements a method sends only after an earlier
 * one found something (a claim's update, an attempt's insert, a session's touch) are sent too.
 */
import { randomBytes } from 'node:crypto';
import type { FakeClock } from '../../src/common/clock.js';
import type { TenantId } from '../../src/common/ids.js';
import { SecretBox } from '../../src/common/secret-box.js';
import {
  ApiKeyRepository, CallRepository, EventDeliveryRepository, EventRepository, IdempotencyRepository, RecordingRepository, SessionRepository,
  SipTraceRepository, TenantRepository, TranscriptRepository, WebhookEndpointRepository, WebhookRepository,
  type SqlDatabase, type SqlExecutor, type SqlParams,
} from '../../src/storage/index.js';
import { callRecord } from '../support/call-records.js';
import { sessionPolicy } from './contract-rig.js';

/** Passes every statement on to `inner`, adding its text to `seen` first (a statement that then fails is kept). */
class RecordingExecutor implements SqlExecutor {
  constructor(protected readonly inner: SqlExecutor, readonly seen: Set<string>) {}

  get dialect(): SqlExecutor['dialect'] { return this.inner.dialect; }
  all<T>(sql: string, params?: SqlParams): Promise<T[]> { this.seen.add(sql); return this.inner.all<T>(sql, params); }
  get<T>(sql: string, params?: SqlParams): Promise<T | undefined> { this.seen.add(sql); return this.inner.get<T>(sql, params); }
  values(sql: string, params?: SqlParams): Promise<unknown[][]> { this.seen.add(sql); return this.inner.values(sql, params); }
  run(sql: string, params?: SqlParams): Promise<{ changes: number }> { this.seen.add(sql); return this.inner.run(sql, params); }
  exec(sql: string): Promise<void> { return this.inner.exec(sql); }
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return this.inner.transaction((tx) => fn(new RecordingExecutor(tx, this.seen)));
  }
}

/** `db` with every statement of `all`, `get`, `values` and `run` recorded, inside transactions too (migrations' `exec` is not). */
export function recordingDatabase(db: SqlDatabase): { db: SqlDatabase; statements: Set<string> } {
  const statements = new Set<string>();
  const recorded = new RecordingExecutor(db, statements);
  return { db: Object.assign(recorded, { close: () => db.close() }), statements };
}

/**
 * Runs the repositories' statements on calls, transcripts, webhook deliveries, recordings,
 * idempotency keys, sessions, SIP traces, events, their deliveries and attempts, and webhook
 * endpoints. Outcomes are not checked here: the storage contract tests do that.
 */
export async function exercise(db: SqlExecutor, clock: FakeClock): Promise<void> {
  const secrets = new SecretBox(randomBytes(32));
  const tenant = (await new TenantRepository(db, clock).create('Plans')).id;
  const at = (): string => new Date(clock.now()).toISOString();

  const keys = new ApiKeyRepository(db, clock);
  const { apiKey, record } = await keys.create(tenant, 'live');
  const sessions = new SessionRepository(db, clock, sessionPolicy);
  const token = await sessions.create(tenant, record.id);
  clock.advance(2 * 60_000); // past the touch interval: authenticating also updates last_seen_at
  await sessions.authenticate(token);
  await sessions.revoke(token);
  await keys.revoke(apiKey);

  // Both ways a process reads the live list: from memory (SQL at load) and from SQL (an api process).
  const call = callRecord(tenant, at(), { state: 'ended', ended_at: at(), end_reason: 'hangup' });
  for (const calls of [new CallRepository(db), new CallRepository(db, { liveList: 'database', nodeId: 'node-a' })]) {
    await calls.load();
    const live = callRecord(tenant, at());
    await calls.insert(live);
    await calls.save({ ...live, on_hold: true });
    await calls.get(tenant, live.id);
    await calls.getByControlId(tenant, live.call_control_id);
    await calls.list(tenant, {}, { limit: 5, after: { createdAt: at(), id: live.id } });
    await calls.list(tenant, { state: 'ended', endedSince: at(), endedBefore: at(), number: '+1555', endReason: 'hangup', carrierName: 'telnyx' }, { limit: 5 });
    await calls.unfinished();
    await calls.unfinished('node-a');
    await calls.ownerOf(tenant, live.id);
    await calls.ownerOfControlId(tenant, live.call_control_id);
  }
  await new CallRepository(db).insert(call);

  const transcripts = new TranscriptRepository(db, clock);
  await transcripts.save(call.id, 'provider', [{ role: 'caller', text: 'hello', offset_s: 0 }]);
  await transcripts.sources(tenant, call.id);
  await transcripts.get(tenant, call.id, 'provider');

  const webhooks = new WebhookRepository(db, clock);
  for (const [status, owner] of [['accepted', tenant], ['conflict', null]] as const) {
    await webhooks.record({
      delivery_key: `key-${status}`, status, conflict_reason: null, provider: 'retell', event: 'call_ended', conversation_id: 'conv-1', agent_id: 'agent-1',
      tenant_id: owner, call_id: owner && call.id, body_sha256: 'sha', body_bytes: 2, payload_json: '{}', payload_omitted: null, recording_ref: 'url:sha',
    });
    await webhooks.isRepeatedConflict(owner, owner && call.id, `key-${status}`, 'sha');
    await webhooks.keptRawBytes(owner, owner && call.id);
  }
  await webhooks.isDelivered(tenant, 'key-accepted');
  await webhooks.callDeliveries(tenant, call.id);
  await webhooks.attributedConversation('retell', 'conv-1');
  await webhooks.routedCalls({ provider: 'retell', agentNumber: '+15550100', remoteNumber: '+15550199', externalAgentId: null, direction: null, endedFrom: at(), endedTo: at() });
  await webhooks.callsWithConversation('retell', 'conv-1', at(), at());
  await webhooks.setConversationId(tenant, call.id, 'conv-1');

  const recordings = new RecordingRepository(db, clock);
  await recordings.save({ call_id: call.id, tenant_id: tenant, source: 'provider', path: 'rec.wav', media_type: 'audio/wav', bytes: 1, sha256: 'sha', origin: 'inline' });
  await recordings.get(tenant, call.id, 'provider');
  await recordings.byPath(tenant, call.id, 'rec.wav');

  const idempotency = new IdempotencyRepository(db, clock);
  await idempotency.reserve(tenant, 'idem-1', 'hash');
  clock.advance(10 * 60_000); // abandoned: the next reservation deletes it and takes the key
  await idempotency.reserve(tenant, 'idem-1', 'hash');
  await idempotency.complete(tenant, 'idem-1', 200, '{}');
  await idempotency.reserve(tenant, 'idem-2', 'hash');
  await idempotency.release(tenant, 'idem-2');

  const traces = new SipTraceRepository(db);
  await traces.save(tenant, call.id, at(), { legs: [], messages: [], dropped_messages: 0 });
  await traces.get(tenant, call.id);
  await traces.expire(at());

  await exerciseEvents(db, clock, secrets, tenant, call.id);
}

async function exerciseEvents(db: SqlExecutor, clock: FakeClock, secrets: SecretBox, tenant: TenantId, callId: string): Promise<void> {
  const at = (): string => new Date(clock.now()).toISOString();
  const endpoints = new WebhookEndpointRepository(db, clock, secrets);
  const secret = 'whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
  const endpoint = await endpoints.create(tenant, { url: 'https://hooks.example.com/a', events: ['*'], description: null, secret });
  await endpoints.get(tenant, endpoint.id);
  await endpoints.list(tenant, { limit: 5 });
  await endpoints.enabled(tenant);
  await endpoints.update(tenant, endpoint.id, { description: 'plans' });
  await endpoints.rotateSecret(tenant, endpoint.id, 'whsec_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB');
  await endpoints.secrets(tenant, endpoint.id);
  await endpoints.recordOutcome(endpoint.id, 'failed', 5);
  await endpoints.recordOutcome(endpoint.id, 'delivered', 5);

  const events = new EventRepository(db, clock);
  const [first] = await events.append(tenant, [{ type: 'call.initiated', callId, data: {} }, { type: 'call.answered', callId, data: {} }]);
  await events.append(tenant, [{ type: 'call.initiated', callId: null, data: {} }]);
  await events.get(tenant, first!.id);
  await events.list(tenant, { type: 'call.*', callId }, { limit: 5, after: { createdAt: at(), id: first!.id } });
  await events.after(tenant, 0, { type: 'call.answered' }, 10);
  await events.latestSeq(tenant);

  const deliveries = new EventDeliveryRepository(db, clock);
  const claimant = { by: 'node-a', forMs: 60_000 };
  await deliveries.scan(10, { perTenant: 4, perEndpoint: 2 });
  const due = await deliveries.due(10);
  await deliveries.dueOf([first!.seq]);
  await deliveries.nextOfCalls([{ endpointId: endpoint.id, callId }]);
  await deliveries.stillDue(due.map((d) => d.id));
  const claimed = await deliveries.claim(due.map((d) => d.id), claimant);
  await deliveries.releaseClaims(claimant.by);
  for (const delivery of due.filter((d) => claimed.has(d.id))) {
    await deliveries.recordAttempt(delivery, { ok: false, status: 500, durationMs: 5, error: 'answered 500', responseBody: null, nextAttemptAt: at() });
  }
  await deliveries.attempts(tenant, endpoint.id, { limit: 5, after: { createdAt: at(), id: 'x' } });
  await deliveries.statesOf(tenant, first!.id);
  // An endpoint created since the event: redelivery gives it a delivery of its own.
  await endpoints.create(tenant, { url: 'https://hooks.example.com/b', events: ['call.*'], description: null, secret });
  await deliveries.redeliver(tenant, first!.id);

  clock.advance(60_000);
  await events.deleteBefore(at());
  await endpoints.delete(tenant, endpoint.id);
}
