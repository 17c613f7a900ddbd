-- Process roles (docs/ARCHITECTURE.md "Process roles"). Each call row names the engine that owns
-- it: commands from an API process are sent there, and start-up recovery ends only its own calls
-- (rows from before, with no node, belong to whichever engine starts on this data folder).
ALTER TABLE calls ADD COLUMN node_id TEXT;

-- The engines that run on this database: where their internal command endpoint listens, how many
-- calls each carries, and when each last said it was alive (refreshed every few seconds).
CREATE TABLE nodes (
  id            TEXT PRIMARY KEY,
  internal_url  TEXT NOT NULL,
  live_calls    INTEGER NOT NULL DEFAULT 0,
  started_at    TEXT NOT NULL,
  last_seen_ms  INTEGER NOT NULL,
  -- Set when the engine starts to drain: it takes no new call, but still serves its own.
  draining      INTEGER NOT NULL DEFAULT 0
);

-- Recording paths were relative to the data folder (`recordings/<tenant>/...`); they are relative
-- to the recordings folder now (`recordings.dir`, `<data_dir>/recordings` by default). Absolute
-- paths stay as they are.
UPDATE calls SET recording_path = substr(recording_path, 12) WHERE recording_path LIKE 'recordings/%';
UPDATE recordings SET path = substr(path, 12) WHERE path LIKE 'recordings/%';
