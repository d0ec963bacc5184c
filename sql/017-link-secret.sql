-- 017-link-secret.sql: the random secret links are signed with.
--
-- Links used to be signed under a key derived from SANDBOX_API_KEY alone,
-- so a link holder (who has every other signed input) could test guesses
-- of an operator-chosen API key offline. Now the key is derived from a
-- 256-bit secret the programs make once (RAND_bytes) and keep here, with
-- SANDBOX_API_KEY mixed in (lib/links/links.h): rotating the API key
-- still invalidates every link, and without this row no guess can be
-- tested. Deleting the row invalidates every link too (a new secret is
-- made on the next use).
--
-- Links made before this version keep their API-key signature
-- (legacy_key = 1) until they expire; new rows take the default, 0.

CREATE TABLE server_secret (
	name		TEXT PRIMARY KEY,	-- "links"
	value		TEXT NOT NULL,		-- base64url of 32 random bytes
	created		INTEGER NOT NULL	-- unix seconds
);

ALTER TABLE link ADD COLUMN legacy_key INTEGER NOT NULL DEFAULT 0;
UPDATE link SET legacy_key = 1;
ALTER TABLE upload_link ADD COLUMN legacy_key INTEGER NOT NULL DEFAULT 0;
UPDATE upload_link SET legacy_key = 1;

PRAGMA user_version = 17;
