-- The media figures of a call's legs when it ended, and their estimated MOS (docs/API.md "Call
-- quality"), as JSON: read only with the call, never queried by their content.
ALTER TABLE calls ADD COLUMN quality TEXT;
