-- Caller IDs the operator verified for a tenant (`vgw caller-id add`): numbers the tenant may
-- present as `from` on carriers whose caller_id_policy is `owned` or `verified` without holding
-- them there (docs/API.md "Caller IDs").
CREATE TABLE caller_ids (
  id           TEXT PRIMARY KEY,
  tenant_id    TEXT NOT NULL REFERENCES tenants(id),
  phone_number TEXT NOT NULL,
  created_at   TEXT NOT NULL
);
CREATE UNIQUE INDEX caller_ids_number ON caller_ids(tenant_id, phone_number);
CREATE INDEX caller_ids_tenant ON caller_ids(tenant_id, created_at DESC, id DESC);

-- What the carrier said of an inbound caller's identity (STIR/SHAKEN, RFC 8224 and the ATIS
-- verstat parameter): the verification status, and whether an Identity header came at all.
ALTER TABLE calls ADD COLUMN caller_verstat TEXT;
ALTER TABLE calls ADD COLUMN caller_identity_header INTEGER NOT NULL DEFAULT 0;
