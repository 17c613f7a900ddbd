-- PostgreSQL translation of ../008-call-indexes.sql.
DROP INDEX IF EXISTS calls_tenant_created;
DROP INDEX IF EXISTS calls_tenant_state;
CREATE INDEX calls_unfinished ON calls(state) WHERE state != 'ended';
