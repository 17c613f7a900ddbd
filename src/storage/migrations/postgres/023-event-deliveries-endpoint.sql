-- PostgreSQL translation of ../023-event-deliveries-endpoint.sql: deleting a webhook endpoint
-- deletes its deliveries (ON DELETE CASCADE) with `WHERE endpoint_id = $1`, which without an
-- index of its own read the whole event_deliveries table (the partial index holds pending ones only).
CREATE INDEX event_deliveries_endpoint ON event_deliveries(endpoint_id);
