-- 012-owners.sql: owners (who a sign-in belongs to), personal keys, and a
-- sandbox per owner.
--
-- The owner of everything made before this file, and of everything made
-- with the server's SANDBOX_API_KEY, is 'operator'. A personal key's owner
-- is the key's name (sandboxctl keys add NAME). Read them with:
--   sqlite3 state.db 'select * from owner_keys'
--   sqlite3 state.db 'select * from sandboxes'

-- Personal keys (sandboxctl keys). Only a hex SHA-256 of each key is kept:
-- keys are 256 random bits, so a fast hash is enough and a copy of this
-- file opens nothing. A revoked key keeps its row (revoked set) so that the
-- audit still names its owner; adding the name again makes a new row.
CREATE TABLE owner_key (
	id		INTEGER PRIMARY KEY,
	owner		TEXT NOT NULL,		-- the person: [a-z0-9._-], not 'operator'
	key_hash	TEXT NOT NULL UNIQUE,	-- hex SHA-256 of the key
	created		INTEGER NOT NULL,	-- unix seconds (rotation renews it)
	last_used	INTEGER,		-- last sign-in with it
	revoked		INTEGER			-- unix seconds; NULL while valid
);
CREATE UNIQUE INDEX owner_key_live ON owner_key (owner) WHERE revoked IS NULL;

-- Who signed in: a code and the grant made from it carry the owner, and so
-- every token of that grant (auth.c reads it with the token).
ALTER TABLE oauth_code ADD COLUMN owner TEXT NOT NULL DEFAULT 'operator';
ALTER TABLE oauth_grant ADD COLUMN owner TEXT NOT NULL DEFAULT 'operator';
CREATE INDEX oauth_grant_owner ON oauth_grant (owner);

-- What each owner made: get_result, the recent runs and link revocation
-- look only at the caller's own rows.
ALTER TABLE session ADD COLUMN owner TEXT NOT NULL DEFAULT 'operator';
ALTER TABLE run ADD COLUMN owner TEXT NOT NULL DEFAULT 'operator';
CREATE INDEX run_owner ON run (owner, started);
ALTER TABLE link ADD COLUMN owner TEXT NOT NULL DEFAULT 'operator';

-- SANDBOX_SCOPE=person: one container and volume per owner, named from a
-- hash of the owner (lib/sandbox/sandboxes.c). running is what the server last did
-- to it (started on use, stopped when idle or at the cap); the engine is
-- asked again by sandboxctl status. Commands running in it are the run
-- rows with state 'running' and this owner.
CREATE TABLE sandbox (
	owner		TEXT PRIMARY KEY,
	container	TEXT NOT NULL,
	volume		TEXT NOT NULL,
	created		INTEGER NOT NULL,
	last_used	INTEGER NOT NULL,	-- last tool call (unix seconds)
	running		INTEGER NOT NULL DEFAULT 1,
	stopped		INTEGER,		-- when last stopped by the server
	stop_reason	TEXT			-- 'idle', 'cap', 'revoked', 'operator', 'engine'
);
CREATE INDEX sandbox_lru ON sandbox (running, last_used);

CREATE VIEW owner_keys AS
SELECT	k.id, k.owner,
	CASE WHEN k.revoked IS NULL THEN 'valid' ELSE 'revoked' END AS state,
	datetime(k.created, 'unixepoch') AS created_utc,
	datetime(k.last_used, 'unixepoch') AS last_used_utc,
	datetime(k.revoked, 'unixepoch') AS revoked_utc
FROM owner_key k ORDER BY k.owner, k.id;

CREATE VIEW sandboxes AS
SELECT	s.owner, s.container, s.volume,
	CASE s.running WHEN 1 THEN 'running' ELSE 'stopped' END AS state,
	(SELECT count(*) FROM run r WHERE r.owner = s.owner
	    AND r.state = 'running') AS commands,
	datetime(s.last_used, 'unixepoch') AS last_used_utc,
	datetime(s.stopped, 'unixepoch') AS stopped_utc,
	s.stop_reason
FROM sandbox s ORDER BY s.last_used DESC;

PRAGMA user_version = 12;
