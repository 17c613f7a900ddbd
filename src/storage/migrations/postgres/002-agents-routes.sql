-- PostgreSQL translation of ../002-agents-routes.sql.

CREATE TABLE sip_credentials (
  id               TEXT COLLATE "C" PRIMARY KEY,
  tenant_id        TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  username         TEXT NOT NULL,
  realm            TEXT,
  password_sealed  TEXT NOT NULL,
  created_at       TEXT COLLATE "C" NOT NULL
);
CREATE INDEX sip_credentials_tenant ON sip_credentials(tenant_id, created_at DESC, id DESC);

CREATE TABLE agents (
  id                 TEXT COLLATE "C" PRIMARY KEY,
  tenant_id          TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  provider           TEXT COLLATE "C" NOT NULL,
  external_agent_id  TEXT COLLATE "C" NOT NULL,
  name               TEXT,
  connection_mode    TEXT NOT NULL CHECK (connection_mode IN ('sip_trunk', 'media_bridge')),
  region             TEXT NOT NULL,
  sip_credential_id  TEXT COLLATE "C" REFERENCES sip_credentials(id),
  sip_uri            TEXT,
  sip_transport      TEXT CHECK (sip_transport IN ('udp', 'tcp', 'tls')),
  sip_region         TEXT,
  websocket_url      TEXT,
  api_key_sealed     TEXT,
  api_key_last4      TEXT,
  verified_at        TEXT COLLATE "C",
  created_at         TEXT COLLATE "C" NOT NULL,
  updated_at         TEXT COLLATE "C" NOT NULL,
  UNIQUE (tenant_id, provider, external_agent_id)
);
CREATE INDEX agents_tenant ON agents(tenant_id, created_at DESC, id DESC);
CREATE INDEX agents_sip_credential ON agents(sip_credential_id);

-- Routes are kept after deletion (deleted_at): post-call webhooks attribute on the route a DID had
-- at the time of the call.
CREATE TABLE routes (
  id              TEXT COLLATE "C" PRIMARY KEY,
  tenant_id       TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  did_number      TEXT COLLATE "C" NOT NULL,
  carrier         TEXT COLLATE "C" NOT NULL,
  agent_provider  TEXT NOT NULL CHECK (agent_provider IN ('external_bridge')),
  agent_id        TEXT COLLATE "C" NOT NULL REFERENCES agents(id),
  created_at      TEXT COLLATE "C" NOT NULL,
  deleted_at      TEXT COLLATE "C"
);
-- A DID on a carrier is bound by at most one live route (numbers have one holder at a time).
CREATE UNIQUE INDEX routes_live_did ON routes(did_number, carrier) WHERE deleted_at IS NULL;
CREATE INDEX routes_tenant ON routes(tenant_id, created_at DESC, id DESC);
CREATE INDEX routes_agent ON routes(agent_id);
