-- Idempotency-Key of POST /v1/calls (docs/API.md "Errors" and docs/API.md "Calls"): per tenant and key, the hash of
-- the first request and, once answered, its response. A row with no response is a reservation: a
-- request with that key is in flight. Rows older than 24 h are ignored and purged lazily.

CREATE TABLE idempotency_keys (
  tenant_id        TEXT NOT NULL REFERENCES tenants(id),
  idempotency_key  TEXT NOT NULL,
  request_hash     TEXT NOT NULL,
  response_status  INTEGER,
  response_json    TEXT,
  created_at       TEXT NOT NULL,
  PRIMARY KEY (tenant_id, idempotency_key)
);
-- The lazy purge deletes by age across tenants.
CREATE INDEX idempotency_keys_created ON idempotency_keys(created_at);
