-- The live list (GET /v1/calls without `state`, or with a live one) is read from memory now
-- (src/storage/live-call-index.ts), so no query uses the partial index of 006: its WHERE clause
-- matched only that list's state filter. Dropped, so call inserts and state changes stop
-- maintaining it.
DROP INDEX IF EXISTS calls_tenant_live;
