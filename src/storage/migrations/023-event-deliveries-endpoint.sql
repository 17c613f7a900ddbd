-- Deleting a webhook endpoint deletes its deliveries (ON DELETE CASCADE), found by endpoint_id:
-- event_deliveries_call_order holds only pending ones, so without an index of their own the
-- cascade read every delivery ever made, of every tenant.
CREATE INDEX event_deliveries_endpoint ON event_deliveries(endpoint_id);
