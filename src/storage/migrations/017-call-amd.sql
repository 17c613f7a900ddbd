-- The answering-machine detection result of an outbound call placed with machine_detection
-- (docs/API.md "Answering-machine detection"): null until decided, or when not asked for.
ALTER TABLE calls ADD COLUMN amd_result TEXT;
ALTER TABLE calls ADD COLUMN amd_decided_after_ms INTEGER;
ALTER TABLE calls ADD COLUMN amd_beep_at_ms INTEGER;
