-- calls_tenant_created and calls_tenant_state served the newest-first list pages read from SQL.
-- Live pages come from memory now (src/storage/live-call-index.ts) and ended pages from
-- calls_tenant_ended; no statement uses either index (src/storage/query-plans.test.ts checks
-- every statement's plan), while every insert and every state change still maintained both.
DROP INDEX IF EXISTS calls_tenant_created;
DROP INDEX IF EXISTS calls_tenant_state;
-- The calls a crash left unfinished are read once at start, across tenants. Without an index that
-- read scanned every call ever made; this one holds only the live calls. Its WHERE clause is the
-- start-up query's, term for term, as SQLite requires to use a partial index
-- (https://sqlite.org/partialindex.html, section 3).
CREATE INDEX calls_unfinished ON calls(state) WHERE state != 'ended';
