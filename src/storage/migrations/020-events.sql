-- Call events for tenants (docs/EVENTS.md): webhook endpoints, the event log that is also the
-- outbox, one delivery per event and subscribed endpoint, and each attempt of a delivery.
--
-- An event and its deliveries are written in the transaction that persists the call change that
-- caused them (docs/DECISIONS.md "Call events: the outbox"), so a crash loses neither. seq orders
-- events for a call's deliveries (a call's next event waits for the previous one, per endpoint)
-- and for the live stream's resumption (Last-Event-ID).
CREATE TABLE webhook_endpoints (
  id                         TEXT PRIMARY KEY,
  tenant_id                  TEXT NOT NULL REFERENCES tenants(id),
  url                        TEXT NOT NULL,
  events                     TEXT NOT NULL,
  description                TEXT,
  disabled                   INTEGER NOT NULL DEFAULT 0,
  -- Sealed like agents' provider keys (SecretBox, context webhook_endpoints/<id>/secret).
  secret_sealed              TEXT NOT NULL,
  -- After a rotation the old secret keeps signing until previous_secret_expires_at.
  previous_secret_sealed     TEXT,
  previous_secret_expires_at TEXT,
  -- Deliveries failed in a row (reset by a success) and in all; flagged_at once failures repeat.
  consecutive_failures       INTEGER NOT NULL DEFAULT 0,
  failed_deliveries          INTEGER NOT NULL DEFAULT 0,
  flagged_at                 TEXT,
  created_at                 TEXT NOT NULL,
  updated_at                 TEXT NOT NULL
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints(tenant_id, created_at, id);

CREATE TABLE events (
  seq         INTEGER PRIMARY KEY,
  id          TEXT NOT NULL UNIQUE,
  tenant_id   TEXT NOT NULL,
  call_id     TEXT,
  type        TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  -- The envelope exactly as delivered and streamed.
  payload     TEXT NOT NULL
);
CREATE INDEX events_tenant ON events(tenant_id, created_at, id);
CREATE INDEX events_tenant_call ON events(tenant_id, call_id, created_at, id);
CREATE INDEX events_created ON events(created_at);

CREATE TABLE event_deliveries (
  id               INTEGER PRIMARY KEY,
  event_seq        INTEGER NOT NULL REFERENCES events(seq) ON DELETE CASCADE,
  endpoint_id      TEXT NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  tenant_id        TEXT NOT NULL,
  call_id          TEXT,
  state            TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts         INTEGER NOT NULL DEFAULT 0,
  next_attempt_at  TEXT,
  -- Retries stop 24 hours after this: the event's creation, or a redelivery asked for by the tenant.
  window_started_at TEXT NOT NULL,
  updated_at       TEXT NOT NULL
);
CREATE INDEX event_deliveries_due ON event_deliveries(next_attempt_at) WHERE state = 'pending';
CREATE INDEX event_deliveries_call_order ON event_deliveries(endpoint_id, call_id, event_seq) WHERE state = 'pending';
CREATE INDEX event_deliveries_event ON event_deliveries(event_seq);

CREATE TABLE event_delivery_attempts (
  id              TEXT PRIMARY KEY,
  delivery_id     INTEGER NOT NULL REFERENCES event_deliveries(id) ON DELETE CASCADE,
  endpoint_id     TEXT NOT NULL,
  tenant_id       TEXT NOT NULL,
  event_id        TEXT NOT NULL,
  attempt         INTEGER NOT NULL,
  status          INTEGER,
  ok              INTEGER NOT NULL,
  duration_ms     INTEGER NOT NULL,
  error           TEXT,
  -- At most 4 KiB of the endpoint's answer (docs/EVENTS.md "Delivery").
  response_body   TEXT,
  next_attempt_at TEXT,
  created_at      TEXT NOT NULL
);
CREATE INDEX event_delivery_attempts_endpoint ON event_delivery_attempts(endpoint_id, created_at, id);
CREATE INDEX event_delivery_attempts_delivery ON event_delivery_attempts(delivery_id);
