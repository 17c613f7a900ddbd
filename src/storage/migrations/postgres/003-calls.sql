-- PostgreSQL translation of ../003-calls.sql. Booleans are INTEGER 0/1, as the repositories bind them.

CREATE TABLE calls (
  id                   TEXT COLLATE "C" PRIMARY KEY,
  tenant_id            TEXT COLLATE "C" NOT NULL REFERENCES tenants(id),
  call_control_id      TEXT COLLATE "C" NOT NULL UNIQUE,
  direction            TEXT NOT NULL CHECK (direction IN ('inbound', 'outbound')),
  state                TEXT NOT NULL CHECK (state IN ('initiated', 'ringing', 'active', 'ended')),
  on_hold              INTEGER NOT NULL DEFAULT 0,
  from_number          TEXT COLLATE "C" NOT NULL,
  to_number            TEXT COLLATE "C" NOT NULL,
  carrier              TEXT COLLATE "C" NOT NULL,
  record               INTEGER NOT NULL DEFAULT 0,
  agent_type           TEXT NOT NULL CHECK (agent_type IN ('websocket', 'imported')),
  agent_url            TEXT,
  agent_id             TEXT COLLATE "C" REFERENCES agents(id),
  created_at           TEXT COLLATE "C" NOT NULL,
  ringing_at           TEXT COLLATE "C",
  answered_at          TEXT COLLATE "C",
  ended_at             TEXT COLLATE "C",
  end_reason           TEXT,
  sip_status           INTEGER,
  hangup_by            TEXT CHECK (hangup_by IN ('caller', 'callee', 'agent', 'api', 'gateway')),
  transfer_to          TEXT,
  transfer_state       TEXT CHECK (transfer_state IN ('dialing', 'connected', 'failed')),
  transfer_started_at  TEXT COLLATE "C",
  conversation_id      TEXT COLLATE "C",
  recording_path       TEXT
);
CREATE INDEX calls_tenant_created ON calls(tenant_id, created_at DESC, id DESC);
CREATE INDEX calls_tenant_state ON calls(tenant_id, state, created_at DESC, id DESC);
CREATE INDEX calls_tenant_ended ON calls(tenant_id, ended_at);
CREATE INDEX calls_attribution ON calls(tenant_id, to_number, from_number, ended_at);
CREATE INDEX calls_conversation ON calls(conversation_id) WHERE conversation_id IS NOT NULL;

CREATE TABLE transcripts (
  call_id     TEXT COLLATE "C" NOT NULL REFERENCES calls(id),
  source      TEXT COLLATE "C" NOT NULL CHECK (source IN ('provider', 'gateway')),
  turns_json  TEXT NOT NULL,
  created_at  TEXT COLLATE "C" NOT NULL,
  PRIMARY KEY (call_id, source)
);
