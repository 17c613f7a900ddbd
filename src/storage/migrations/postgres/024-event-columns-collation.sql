-- The event tables' ids and times compare byte by byte (COLLATE "C"), as every other table's do
-- (001) and as SQLite's BINARY does: 020 and 022 left them to the database's default collation, so
-- on a database created with another locale, keyset pages of events, endpoints and attempts, and
-- the outbox's time comparisons, could come out in another order than on SQLite. Their indexes
-- are rebuilt with them.
ALTER TABLE webhook_endpoints
  ALTER COLUMN id TYPE TEXT COLLATE "C",
  ALTER COLUMN tenant_id TYPE TEXT COLLATE "C",
  ALTER COLUMN flagged_at TYPE TEXT COLLATE "C",
  ALTER COLUMN previous_secret_expires_at TYPE TEXT COLLATE "C",
  ALTER COLUMN created_at TYPE TEXT COLLATE "C",
  ALTER COLUMN updated_at TYPE TEXT COLLATE "C";
ALTER TABLE events
  ALTER COLUMN id TYPE TEXT COLLATE "C",
  ALTER COLUMN tenant_id TYPE TEXT COLLATE "C",
  ALTER COLUMN call_id TYPE TEXT COLLATE "C",
  ALTER COLUMN created_at TYPE TEXT COLLATE "C";
ALTER TABLE event_deliveries
  ALTER COLUMN endpoint_id TYPE TEXT COLLATE "C",
  ALTER COLUMN tenant_id TYPE TEXT COLLATE "C",
  ALTER COLUMN call_id TYPE TEXT COLLATE "C",
  ALTER COLUMN next_attempt_at TYPE TEXT COLLATE "C",
  ALTER COLUMN window_started_at TYPE TEXT COLLATE "C",
  ALTER COLUMN updated_at TYPE TEXT COLLATE "C",
  ALTER COLUMN claimed_by TYPE TEXT COLLATE "C",
  ALTER COLUMN claimed_until TYPE TEXT COLLATE "C";
ALTER TABLE event_delivery_attempts
  ALTER COLUMN id TYPE TEXT COLLATE "C",
  ALTER COLUMN endpoint_id TYPE TEXT COLLATE "C",
  ALTER COLUMN tenant_id TYPE TEXT COLLATE "C",
  ALTER COLUMN event_id TYPE TEXT COLLATE "C",
  ALTER COLUMN next_attempt_at TYPE TEXT COLLATE "C",
  ALTER COLUMN created_at TYPE TEXT COLLATE "C";
