-- PostgreSQL translation of ../001-tenants.sql (docs/DECISIONS.md "Two migration folders").
-- Text columns compare byte by byte (COLLATE "C"), as SQLite's BINARY does: keyset paging and
-- the in-memory live list order ids and timestamps the same way whatever the database's locale.

CREATE TABLE tenants (
  id          TEXT COLLATE "C" PRIMARY KEY,
  name        TEXT NOT NULL,
  created_at  TEXT COLLATE "C" NOT NULL
);

-- Only a SHA-256 of each key is stored; the key itself is shown once, at creation.
CREATE TABLE api_keys (
  id          TEXT COLLATE "C" PRIMARY KEY,
  tenant_id   TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  kind        TEXT NOT NULL CHECK (kind IN ('live', 'sandbox')),
  key_hash    TEXT COLLATE "C" NOT NULL UNIQUE,
  last4       TEXT NOT NULL,
  created_at  TEXT COLLATE "C" NOT NULL,
  revoked_at  TEXT COLLATE "C"
);
CREATE INDEX api_keys_tenant ON api_keys(tenant_id);

CREATE TABLE sessions (
  id            TEXT COLLATE "C" PRIMARY KEY,
  token_hash    TEXT COLLATE "C" NOT NULL UNIQUE,
  tenant_id     TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  api_key_id    TEXT COLLATE "C" NOT NULL REFERENCES api_keys(id),
  created_at    TEXT COLLATE "C" NOT NULL,
  last_seen_at  TEXT COLLATE "C" NOT NULL,
  expires_at    TEXT COLLATE "C" NOT NULL,
  revoked_at    TEXT COLLATE "C"
);
CREATE INDEX sessions_api_key ON sessions(api_key_id);

CREATE TABLE numbers (
  id           TEXT COLLATE "C" PRIMARY KEY,
  tenant_id    TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  phone_number TEXT COLLATE "C" NOT NULL,
  carrier      TEXT COLLATE "C" NOT NULL,
  status       TEXT NOT NULL CHECK (status IN ('active', 'released')),
  created_at   TEXT COLLATE "C" NOT NULL,
  released_at  TEXT COLLATE "C"
);
-- A number is held by at most one tenant at a time on a carrier.
CREATE UNIQUE INDEX numbers_active ON numbers(phone_number, carrier) WHERE status = 'active';
CREATE INDEX numbers_tenant ON numbers(tenant_id, created_at DESC, id DESC);
