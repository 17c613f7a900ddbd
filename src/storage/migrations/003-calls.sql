-- Every call attempt, live or ended, with its call detail record (CDR) fields; and transcripts.

CREATE TABLE calls (
  id                   TEXT PRIMARY KEY,
  tenant_id            TEXT NOT NULL REFERENCES tenants(id),
  call_control_id      TEXT NOT NULL UNIQUE,
  direction            TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  state                TEXT NOT NULL CHECK (state IN ('initiated', 'ringing', 'active', 'ended')),
  on_hold              INTEGER NOT NULL DEFAULT 0,
  from_number          TEXT NOT NULL,
  to_number            TEXT NOT NULL,
  carrier              TEXT NOT NULL,
  record               INTEGER NOT NULL DEFAULT 0,
  agent_type           TEXT NOT NULL CHECK (agent_type IN ('websocket', 'imported')),
  agent_url            TEXT,
  agent_id             TEXT REFERENCES agents(id),
  created_at           TEXT NOT NULL,
  ringing_at           TEXT,
  answered_at          TEXT,
  ended_at             TEXT,
  end_reason           TEXT,
  sip_status           INTEGER,
  hangup_by            TEXT CHECK (hangup_by IN ('caller', 'callee', 'agent', 'api', 'gateway')),
  transfer_to          TEXT,
  transfer_state       TEXT CHECK (transfer_state IN ('dialing', 'connected', 'failed')),
  transfer_started_at  TEXT,
  conversation_id      TEXT,
  recording_path       TEXT
);
-- Newest-first pages of a tenant's calls, and of its live calls by state.
CREATE INDEX calls_tenant_created ON calls(tenant_id, created_at DESC, id DESC);
CREATE INDEX calls_tenant_state ON calls(tenant_id, state, created_at DESC, id DESC);
-- Recently ended calls (the live window) without scanning the tenant's history.
CREATE INDEX calls_tenant_ended ON calls(tenant_id, ended_at);
-- Post-call webhook attribution: a tenant's calls on a DID with a remote number, by end time.
CREATE INDEX calls_attribution ON calls(tenant_id, to_number, from_number, ended_at);
CREATE INDEX calls_conversation ON calls(conversation_id) WHERE conversation_id IS NOT NULL;

CREATE TABLE transcripts (
  call_id     TEXT NOT NULL REFERENCES calls(id),
  source      TEXT NOT NULL CHECK (source IN ('provider', 'gateway')),
  turns_json  TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  PRIMARY KEY (call_id, source)
);
