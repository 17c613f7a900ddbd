-- An `api` process has no engine in it, so it reads the live list (GET /v1/calls without `state`,
-- or with a live one) from the database the engines write (docs/ARCHITECTURE.md "Process roles").
-- Through calls_unfinished it fetched every live call and sorted them for each page; at 1,000
-- requests/s with 300 live calls that sort was the API process's whole budget. This partial index
-- holds only live calls, in list order, so a page is read straight off it. Its WHERE clause is the
-- list query's state term, term for term, as SQLite requires to use a partial index
-- (https://sqlite.org/partialindex.html, section 3); PostgreSQL uses it the same way.
CREATE INDEX calls_tenant_live ON calls(tenant_id, created_at DESC, id DESC) WHERE state != 'ended';
