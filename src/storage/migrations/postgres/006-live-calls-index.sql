-- PostgreSQL translation of ../006-live-calls-index.sql.
CREATE INDEX calls_tenant_live ON calls(tenant_id, created_at DESC, id DESC)
  WHERE state IN ('initiated', 'ringing', 'active');
