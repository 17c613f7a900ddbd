-- PostgreSQL translation of ../004-webhooks.sql.

CREATE TABLE webhook_deliveries (
  delivery_key     TEXT COLLATE "C" PRIMARY KEY,
  provider         TEXT COLLATE "C" NOT NULL,
  event            TEXT NOT NULL,
  conversation_id  TEXT COLLATE "C",
  agent_id         TEXT COLLATE "C",
  tenant_id        TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  call_id          TEXT COLLATE "C" NOT NULL REFERENCES calls(id),
  body_sha256      TEXT COLLATE "C" NOT NULL,
  payload_json     TEXT NOT NULL,
  received_at      TEXT COLLATE "C" NOT NULL
);
CREATE INDEX webhook_deliveries_conversation ON webhook_deliveries(provider, conversation_id) WHERE conversation_id IS NOT NULL;
CREATE INDEX webhook_deliveries_call ON webhook_deliveries(tenant_id, call_id);

CREATE INDEX routes_did ON routes(did_number, created_at);

-- bytes is BIGINT: a recording may pass 2 GiB.
CREATE TABLE recordings (
  call_id     TEXT COLLATE "C" NOT NULL REFERENCES calls(id),
  tenant_id   TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  source      TEXT COLLATE "C" NOT NULL CHECK (source IN ('provider', 'gateway')),
  path        TEXT COLLATE "C" NOT NULL,
  media_type  TEXT NOT NULL,
  bytes       BIGINT NOT NULL,
  sha256      TEXT NOT NULL,
  origin      TEXT NOT NULL CHECK (origin IN ('inline', 'download')),
  created_at  TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (call_id, source)
);
