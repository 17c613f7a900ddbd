-- PostgreSQL translation of ../016-caller-ids.sql.
CREATE TABLE caller_ids (
  id           TEXT COLLATE "C" PRIMARY KEY,
  tenant_id    TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  phone_number TEXT COLLATE "C" NOT NULL,
  created_at   TEXT COLLATE "C" NOT NULL
);
CREATE UNIQUE INDEX caller_ids_number ON caller_ids(tenant_id, phone_number);
CREATE INDEX caller_ids_tenant ON caller_ids(tenant_id, created_at DESC, id DESC);

ALTER TABLE calls ADD COLUMN caller_verstat TEXT;
ALTER TABLE calls ADD COLUMN caller_identity_header INTEGER NOT NULL DEFAULT 0;
