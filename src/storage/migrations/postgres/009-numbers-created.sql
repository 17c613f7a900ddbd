-- PostgreSQL translation of ../009-numbers-created.sql.
CREATE INDEX numbers_created ON numbers(created_at DESC, id DESC);
