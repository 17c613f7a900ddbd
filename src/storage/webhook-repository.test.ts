import t from 'tap';
import Database from 'better-sqlite3';
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeClock } from '../common/clock.js';
import { newCallControlId, newCallId, newTenantId, type TenantId } from '../common/ids.js';
import { migrate } from './database.js';
import { SqliteDatabase } from './sql/sqlite-database.js';
import { WebhookRepository } from './webhook-repository.js';

const MIGRATIONS = fileURLToPath(new URL('./migrations/', import.meta.url));

/** A database migrated up to (not including) `version`, as a gateway of that release left it. */
function databaseBefore(version: number): Database.Database {
  const dir = mkdtempSync(join(tmpdir(), 'vgw-migrations-'));
  for (const f of readdirSync(MIGRATIONS).filter((name) => Number(name.slice(0, 3)) < version)) copyFileSync(join(MIGRATIONS, f), join(dir, f));
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrate(db, dir);
  rmSync(dir, { recursive: true, force: true });
  return db;
}

t.test('migration 010: deliveries stored before keep deduplicating and attributing, now per tenant', async (t) => {
  const db = databaseBefore(10);
  t.teardown(() => db.close());
  const clock = new FakeClock(Date.parse('2026-11-22T10:00:00.000Z'));
  // Tenants as that release stored them: today's repository expects later columns.
  const tenant = (name: string): { id: TenantId } => {
    const id = newTenantId();
    db.prepare('INSERT INTO tenants (id, name, created_at) VALUES (?, ?, ?)').run(id, name, '2026-11-22T09:00:00.000Z');
    return { id };
  };
  const acme = tenant('Acme');
  const bravo = tenant('Bravo');
  const callId = newCallId();
  // The row as the release before migration 010 stored it (later migrations add columns).
  db.prepare(`INSERT INTO calls (id, tenant_id, call_control_id, direction, state, on_hold, from_number, to_number, carrier, record, agent_type,
              created_at, ended_at, end_reason, hangup_by, conversation_id)
              VALUES (?, ?, ?, 'inbound', 'ended', 0, '+15550199', '+15550100', 'sandbox', 0, 'imported', '2026-11-22T09:58:00.000Z',
              '2026-11-22T09:59:00.000Z', 'completed', 'caller', 'conv_old')`)
    .run(callId, acme.id, newCallControlId());
  const body = '{"type":"post_call_transcription","data":{"conversation_id":"conv_old","note":"é"}}';
  db.prepare(`INSERT INTO webhook_deliveries (delivery_key, provider, event, conversation_id, agent_id, tenant_id, call_id, body_sha256, payload_json, received_at)
              VALUES ('elevenlabs:post_call_transcription:conv_old', 'elevenlabs', 'post_call_transcription', 'conv_old', 'agent_1', ?, ?, 'ab', ?, ?)`)
    .run(acme.id, callId, body, '2026-11-22T09:59:30.000Z');

  t.same(migrate(db).filter((v) => v <= 10), [10], 'migration 010 was pending');
  const repo = new WebhookRepository(new SqliteDatabase(db), clock);
  const key = 'elevenlabs:post_call_transcription:conv_old';
  t.ok(await repo.isDelivered(acme.id, key), 'the old row still answers duplicate for its tenant');
  t.notOk(await repo.isDelivered(bravo.id, key), 'and for no other tenant');
  t.same((await repo.attributedConversation('elevenlabs', 'conv_old')).map((b) => [b.tenant_id, b.call_id, b.agent_id]), [[acme.id, callId, 'agent_1']]);
  t.same(await repo.callDeliveries(acme.id, callId), { conversationIds: ['conv_old'], recordingRef: null });
  const bytes = Buffer.byteLength(body, 'utf8');
  t.same(await repo.keptRawBytes(acme.id, callId), { call: bytes, total: bytes }, 'kept bytes counted in UTF-8 bytes');

  const row = {
    delivery_key: key, status: 'accepted' as const, conflict_reason: null, provider: 'elevenlabs', event: 'post_call_transcription',
    conversation_id: 'conv_old', agent_id: 'agent_1', call_id: null, body_sha256: 'cd', body_bytes: 2, payload_json: '{}', payload_omitted: null, recording_ref: null,
  };
  t.notOk(await repo.record({ ...row, tenant_id: acme.id }), 'the same key in the same tenant is refused');
  t.ok(await repo.record({ ...row, tenant_id: bravo.id }), 'the same key in another tenant is its own delivery');
  t.ok(await repo.record({ ...row, tenant_id: acme.id, status: 'conflict', conflict_reason: 'transcript' }), 'a conflict reserves no key');
  t.equal((await repo.keptRawBytes(null, null)).total, bytes + 4, 'the total follows every insert');
  db.prepare("DELETE FROM webhook_deliveries WHERE status = 'conflict'").run();
  t.equal((await repo.keptRawBytes(null, null)).total, bytes + 2, 'and every delete');
  t.end();
});
