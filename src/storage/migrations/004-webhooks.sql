-- Post-call webhook deliveries (dedup key and raw payload audit) and re-archived recordings.

-- One row per accepted delivery. delivery_key is provider + event + conversation id (or the body's
-- SHA-256 when a payload has no id), so a repeated delivery finds its row and stores nothing twice.
-- payload_json is the body as received, except that inline audio is replaced by a reference to the
-- archived recording (it is not kept twice).
CREATE TABLE webhook_deliveries (
  delivery_key     TEXT PRIMARY KEY,
  provider         TEXT NOT NULL,
  event            TEXT NOT NULL,
  conversation_id  TEXT,
  agent_id         TEXT,
  tenant_id        TEXT NOT NULL REFERENCES tenants(id),
  call_id          TEXT NOT NULL REFERENCES calls(id),
  body_sha256      TEXT NOT NULL,
  payload_json     TEXT NOT NULL,
  received_at      TEXT NOT NULL
);
-- A conversation id attributed once attributes later events of the same conversation.
CREATE INDEX webhook_deliveries_conversation ON webhook_deliveries(provider, conversation_id) WHERE conversation_id IS NOT NULL;
CREATE INDEX webhook_deliveries_call ON webhook_deliveries(tenant_id, call_id);

-- Attribution looks a DID up among live and deleted routes (routes_live_did covers live ones only).
CREATE INDEX routes_did ON routes(did_number, created_at);

-- Recordings kept in the data folder, one per call and source, with checksum and media type.
-- The gateway's own recording is calls.recording_path; this table holds the provider's copy.
CREATE TABLE recordings (
  call_id     TEXT NOT NULL REFERENCES calls(id),
  tenant_id   TEXT NOT NULL REFERENCES tenants(id),
  source      TEXT NOT NULL CHECK (source IN ('provider', 'gateway')),
  path        TEXT NOT NULL,
  media_type  TEXT NOT NULL,
  bytes       INTEGER NOT NULL,
  sha256      TEXT NOT NULL,
  origin      TEXT NOT NULL CHECK (origin IN ('inline', 'download')),
  created_at  TEXT NOT NULL,
  PRIMARY KEY (call_id, source)
);
