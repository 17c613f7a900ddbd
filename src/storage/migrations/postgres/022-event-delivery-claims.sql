-- Several engines send from one outbox (docs/CLUSTER.md): a sender claims the deliveries it is about
-- to send, so another sender leaves them alone until the claim runs out (a sender that died with a
-- delivery in flight); a restarted sender drops its previous run's claims at once, so a kill -9
-- still loses nothing. An attempt's outcome clears the claim.
ALTER TABLE event_deliveries ADD COLUMN claimed_by TEXT;
ALTER TABLE event_deliveries ADD COLUMN claimed_until TEXT;
