-- PostgreSQL translation of ../014-call-quality.sql.
ALTER TABLE calls ADD COLUMN quality TEXT;
