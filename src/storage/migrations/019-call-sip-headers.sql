-- The carrier's SIP headers an inbound call carried through (docs/API.md "SIP headers carried
-- through"): a JSON object of the allow-listed headers of its INVITE, or null when none.
ALTER TABLE calls ADD COLUMN sip_headers TEXT;
