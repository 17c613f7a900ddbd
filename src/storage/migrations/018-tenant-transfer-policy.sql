-- The tenant's default transfer policy (docs/API.md "Transfers asked by the agent"), for agents
-- that have none of their own: JSON {"allow": [patterns], "max_per_call": n}, or NULL for none.
ALTER TABLE tenants ADD COLUMN transfer_policy TEXT;
