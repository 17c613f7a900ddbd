-- Which transfers an agent may ask for (docs/API.md "Transfers asked by the agent"): JSON
-- {"allow": [patterns], "max_per_call": n}, or NULL for none at all.
ALTER TABLE agents ADD COLUMN transfer_policy TEXT;
