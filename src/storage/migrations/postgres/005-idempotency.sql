-- PostgreSQL translation of ../005-idempotency.sql. The primary key on (tenant, key) is what
-- decides between two concurrent reservations (src/storage/idempotency-repository.ts).

CREATE TABLE idempotency_keys (
  tenant_id        TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  idempotency_key  TEXT COLLATE "C" NOT NULL,
  request_hash     TEXT NOT NULL,
  response_status  INTEGER,
  response_json    TEXT,
  created_at       TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (tenant_id, idempotency_key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
