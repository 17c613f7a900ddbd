-- PostgreSQL translation of ../015-sip-traces.sql.
CREATE TABLE sip_traces (
  tenant_id   TEXT COLLATE "C" NOT NULL,
  call_id     TEXT COLLATE "C" NOT NULL,
  created_at  TEXT COLLATE "C" NOT NULL,
  trace_json  TEXT NOT NULL,
  PRIMARY KEY (tenant_id, call_id)
);
CREATE INDEX sip_traces_created ON sip_traces(created_at);
