-- The SIP messages of each call's legs (docs/API.md "SIP trace of a call"), written once when the
-- call ends, masked, within observability.sip_trace.max_bytes_per_call; deleted after
-- observability.sip_trace.retention_days (by created_at).
CREATE TABLE sip_traces (
  tenant_id   TEXT NOT NULL,
  call_id     TEXT NOT NULL,
  created_at  TEXT NOT NULL,
  trace_json  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, call_id)
);
CREATE INDEX sip_traces_created ON sip_traces(created_at);
