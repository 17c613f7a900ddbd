-- PostgreSQL translation of ../007-drop-live-calls-index.sql.
DROP INDEX IF EXISTS calls_tenant_live;
