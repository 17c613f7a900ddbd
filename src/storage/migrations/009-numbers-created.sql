-- The operator's list of every tenant's numbers (`vgw number list` without a tenant) reads them
-- newest first in pages of 500. numbers_tenant leads with the tenant, so without this index each
-- page sorted the whole table again (src/storage/query-plans.test.ts checks the plan).
CREATE INDEX numbers_created ON numbers(created_at DESC, id DESC);
