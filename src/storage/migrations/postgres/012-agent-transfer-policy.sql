-- PostgreSQL translation of ../012-agent-transfer-policy.sql.
ALTER TABLE agents ADD COLUMN transfer_policy TEXT;
