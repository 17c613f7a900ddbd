-- PostgreSQL translation of ../019-call-sip-headers.sql.
ALTER TABLE calls ADD COLUMN sip_headers TEXT;
