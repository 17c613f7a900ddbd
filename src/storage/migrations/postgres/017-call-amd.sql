-- PostgreSQL translation of ../017-call-amd.sql.
ALTER TABLE calls ADD COLUMN amd_result TEXT;
ALTER TABLE calls ADD COLUMN amd_decided_after_ms INTEGER;
ALTER TABLE calls ADD COLUMN amd_beep_at_ms INTEGER;
