-- PostgreSQL translation of ../013-process-roles.sql (docs/ARCHITECTURE.md "Process roles").
ALTER TABLE calls ADD COLUMN node_id TEXT COLLATE "C";

-- last_seen_ms is epoch milliseconds: BIGINT.
CREATE TABLE nodes (
  id            TEXT COLLATE "C" PRIMARY KEY,
  internal_url  TEXT NOT NULL,
  live_calls    INTEGER NOT NULL DEFAULT 0,
  started_at    TEXT COLLATE "C" NOT NULL,
  last_seen_ms  BIGINT NOT NULL,
  draining      INTEGER NOT NULL DEFAULT 0
);

UPDATE calls SET recording_path = substr(recording_path, 12) WHERE recording_path LIKE 'recordings/%';
UPDATE recordings SET path = substr(path, 12) WHERE path LIKE 'recordings/%';
