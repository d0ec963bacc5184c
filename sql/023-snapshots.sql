-- 023-snapshots.sql: snapshots of a sandbox (its container's layer and
-- /sandbox), and the log of restores.
--
-- A snapshot belongs to the sandbox it was taken of (container: its name),
-- so in person scope only that person sees it and in shared scope every key
-- holder does, as the sandbox itself. owner and asked_by say who asked.
-- The layer is the engine's image `image`; /sandbox is the archive file
-- named after id in SANDBOX_SNAPSHOT_DIR on the server's host.

CREATE TABLE snapshot (
	id		TEXT PRIMARY KEY,	-- "snap-" and 16 hex digits
	container	TEXT NOT NULL,		-- the sandbox's container name
	owner		TEXT,			-- who took it
	created		INTEGER NOT NULL,	-- unix seconds
	note		TEXT NOT NULL DEFAULT '',
	image		TEXT NOT NULL,		-- the engine's image of the layer
	archive_bytes	INTEGER NOT NULL,	-- /sandbox's share on the host
	layer_bytes	INTEGER NOT NULL,	-- the layer's share (the engine's)
	took_ms		INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX snapshot_container ON snapshot (container, created);

CREATE TABLE snapshot_restore (
	id		INTEGER PRIMARY KEY,
	snapshot_id	TEXT NOT NULL,
	container	TEXT NOT NULL,
	asked_by	TEXT,			-- the owner who asked
	client		TEXT,			-- the client that asked, or "sandboxctl"
	started		INTEGER NOT NULL,
	finished	INTEGER,
	state		TEXT NOT NULL DEFAULT 'running',
	message		TEXT
);

PRAGMA user_version = 23;
