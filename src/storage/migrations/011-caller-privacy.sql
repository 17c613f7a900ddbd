-- Whether the caller of an inbound call asked that its identity not be shown (RFC 3323/3325:
-- Privacy id, user or header, or an anonymous From); the call record's `from` may then hold the
-- number a trusted carrier asserted (docs/DECISIONS.md "Caller identity and privacy").
ALTER TABLE calls ADD COLUMN caller_privacy INTEGER NOT NULL DEFAULT 0;
