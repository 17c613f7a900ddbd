-- PostgreSQL translation of ../018-tenant-transfer-policy.sql.
ALTER TABLE tenants ADD COLUMN transfer_policy TEXT;
