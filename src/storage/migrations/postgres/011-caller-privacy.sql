-- PostgreSQL translation of ../011-caller-privacy.sql.
ALTER TABLE calls ADD COLUMN caller_privacy INTEGER NOT NULL DEFAULT 0;
