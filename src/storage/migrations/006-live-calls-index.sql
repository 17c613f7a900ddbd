-- The live list (GET /v1/calls without `state`) reads calls not yet ended, newest first. Through
-- calls_tenant_created it walks every ended call newer than the live ones it returns, so a tenant
-- with a busy day and one long call scanned the whole day per request. This partial index holds
-- only live calls (a few hundred at most) in list order: the page is read straight off it.
-- The WHERE clause matches the list query's state filter term for term, as SQLite requires to use
-- a partial index (https://sqlite.org/partialindex.html, section 3).
CREATE INDEX calls_tenant_live ON calls(tenant_id, created_at DESC, id DESC)
  WHERE state IN ('initiated', 'ringing', 'active');
