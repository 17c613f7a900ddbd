-- Post-call webhook deliveries per tenant (docs/WEBHOOKS.md "Attribution across tenants").
--
-- delivery_key was the primary key across all tenants, so one tenant posting first under another
-- tenant's conversation id turned that tenant's genuine delivery into a duplicate. The key is now
-- unique per tenant, and only among applied deliveries: a delivery kept for audit without being
-- applied (status 'conflict', docs/WEBHOOKS.md "First attribution wins") reserves nothing. A
-- conflict between tenants is kept under no tenant and no call.
--
-- Raw bodies are capped (webhooks.max_raw_bytes_per_call and _total): body_bytes is the size
-- received, kept_bytes what payload_json holds (0 when the body was left out, payload_omitted
-- says why). webhook_raw_usage keeps the total of kept_bytes up to date through triggers, so the
-- cap is checked without summing the table. recording_ref names the recording a delivery brought
-- ('inline:<sha256 of the audio>' or 'url:<sha256 of the URL>', never the URL, which is often signed).
CREATE TABLE webhook_deliveries_010 (
  id               INTEGER PRIMARY KEY,
  delivery_key     TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('accepted', 'conflict')),
  conflict_reason  TEXT,
  provider         TEXT NOT NULL,
  event            TEXT NOT NULL,
  conversation_id  TEXT,
  agent_id         TEXT,
  tenant_id        TEXT REFERENCES tenants(id),
  call_id          TEXT REFERENCES calls(id),
  body_sha256      TEXT NOT NULL,
  body_bytes       INTEGER NOT NULL,
  payload_json     TEXT,
  payload_omitted  TEXT CHECK (payload_omitted IN ('per_call_cap', 'total_cap')),
  kept_bytes       INTEGER NOT NULL,
  recording_ref    TEXT,
  received_at      TEXT NOT NULL
);

-- Rows from before keep their key (provider:event:conversation id), their tenant and their call;
-- they were all applied. Their recording is found through the recordings table.
INSERT INTO webhook_deliveries_010 (delivery_key, status, provider, event, conversation_id, agent_id, tenant_id, call_id,
                                    body_sha256, body_bytes, payload_json, kept_bytes, received_at)
SELECT delivery_key, 'accepted', provider, event, conversation_id, agent_id, tenant_id, call_id,
       body_sha256, length(CAST(payload_json AS BLOB)), payload_json, length(CAST(payload_json AS BLOB)), received_at
  FROM webhook_deliveries ORDER BY received_at;

DROP TABLE webhook_deliveries;
ALTER TABLE webhook_deliveries_010 RENAME TO webhook_deliveries;

CREATE UNIQUE INDEX webhook_deliveries_key ON webhook_deliveries(tenant_id, delivery_key) WHERE status = 'accepted';
-- A conversation id applied once attributes later numberless events of the same conversation.
CREATE INDEX webhook_deliveries_conversation ON webhook_deliveries(provider, conversation_id) WHERE conversation_id IS NOT NULL AND status = 'accepted';
-- Per call: the raw bytes kept, the first attribution's data, and repeated conflicts (same key and body).
CREATE INDEX webhook_deliveries_call ON webhook_deliveries(tenant_id, call_id, delivery_key);

CREATE TABLE webhook_raw_usage (
  id     INTEGER PRIMARY KEY CHECK (id = 1),
  bytes  INTEGER NOT NULL
);
INSERT INTO webhook_raw_usage (id, bytes) SELECT 1, coalesce(sum(kept_bytes), 0) FROM webhook_deliveries;
CREATE TRIGGER webhook_raw_usage_insert AFTER INSERT ON webhook_deliveries
BEGIN
  UPDATE webhook_raw_usage SET bytes = bytes + NEW.kept_bytes WHERE id = 1;
END;
CREATE TRIGGER webhook_raw_usage_delete AFTER DELETE ON webhook_deliveries
BEGIN
  UPDATE webhook_raw_usage SET bytes = bytes - OLD.kept_bytes WHERE id = 1;
END;
CREATE TRIGGER webhook_raw_usage_update AFTER UPDATE OF kept_bytes ON webhook_deliveries
BEGIN
  UPDATE webhook_raw_usage SET bytes = bytes - OLD.kept_bytes + NEW.kept_bytes WHERE id = 1;
END;
