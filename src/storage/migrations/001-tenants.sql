-- Tenants, their API keys and cookie sessions, and the phone numbers they hold.
-- Timestamps are RFC 3339 UTC strings with milliseconds, so they sort as text.

CREATE TABLE tenants (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

-- Only a SHA-256 of each key is stored; the key itself is shown once, at creation.
CREATE TABLE api_keys (
  id          TEXT PRIMARY KEY,
  tenant_id   TEXT NOT NULL REFERENCES tenants(id),
  kind        TEXT NOT NULL CHECK (kind IN ('live', 'sandbox')),
  key_hash    TEXT NOT NULL UNIQUE,
  last4       TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  revoked_at  TEXT
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

CREATE TABLE sessions (
  id            TEXT PRIMARY KEY,
  token_hash    TEXT NOT NULL UNIQUE,
  tenant_id     TEXT NOT NULL REFERENCES tenants(id),
  api_key_id    TEXT NOT NULL REFERENCES api_keys(id),
  created_at    TEXT NOT NULL,
  last_seen_at  TEXT NOT NULL,
  expires_at    TEXT NOT NULL,
  revoked_at    TEXT
);
CREATE INDEX sessions_api_key ON sessions(api_key_id);

CREATE TABLE numbers (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants(id),
  phone_number TEXT NOT NULL,
  carrier      TEXT NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('active', 'released')),
  created_at   TEXT NOT NULL,
  released_at  TEXT
);
-- A number is held by at most one tenant at a time on a carrier.
CREATE UNIQUE INDEX numbers_active ON numbers(phone_number, carrier) WHERE status = 'active';
CREATE INDEX numbers_tenant ON numbers(tenant_id, created_at DESC, id DESC);
