-- 010-uploads.sql: upload links made by the upload_link tool and served by
-- /up, the record of every upload through them, and folder download links.
--
-- A link's URL is PUBLIC_URL/up/<id>/<expires>/<sig>/ (lib/links/uplinks.h): the
-- signature covers the id, the expiry, the folder, the byte cap and the
-- overwrite flag below, under a key derived from SANDBOX_API_KEY.
--
-- Operators:
--   list:    sandboxctl links list   (download and upload links)
--   revoke:  sandboxctl links revoke <id>
--   uploads: sqlite3 state.db 'select * from uploads limit 20'

CREATE TABLE upload_link (
	id		TEXT PRIMARY KEY,	-- <id> of the URL: 16 random bytes, base64url
	dir		TEXT NOT NULL,		-- absolute folder in the container, as signed
	max_bytes	INTEGER NOT NULL,	-- total bytes the link accepts, as signed
	used_bytes	INTEGER NOT NULL DEFAULT 0, -- bytes stored or being stored
	overwrite	INTEGER NOT NULL DEFAULT 0, -- 1: an upload may replace a file
	created		INTEGER NOT NULL,	-- unix seconds
	expires		INTEGER NOT NULL,	-- unix seconds
	client_id	TEXT NOT NULL,		-- who made it: an OAuth client id, or "api-key"
	uploads		INTEGER NOT NULL DEFAULT 0, -- files stored through it
	last_upload	INTEGER,		-- unix seconds, NULL if none
	revoked		INTEGER			-- unix seconds of revocation; NULL while live
);
CREATE INDEX upload_link_expires ON upload_link (expires);

-- One row per file sent to an upload link, refused ones included.
CREATE TABLE upload (
	id		INTEGER PRIMARY KEY,
	link_id		TEXT NOT NULL,		-- the upload link (kept when the link is pruned)
	client_id	TEXT NOT NULL,		-- who made the link
	remote_addr	TEXT NOT NULL,		-- who sent the file, as the web server saw it
	method		TEXT NOT NULL,		-- 'PUT' or 'POST' (the page's form)
	name		TEXT NOT NULL,		-- the name as sent (escaped, cut to 255 bytes)
	stored		TEXT,			-- the absolute path it was stored at, NULL if not stored
	size		INTEGER,		-- bytes received
	started		INTEGER NOT NULL,	-- unix seconds
	finished	INTEGER,		-- unix seconds; NULL while running
	state		TEXT NOT NULL DEFAULT 'running'
			CHECK (state IN ('running', 'ok', 'refused', 'failed', 'interrupted')),
	message		TEXT			-- why refused or failed
);
CREATE INDEX upload_started ON upload (started);

CREATE VIEW uploads AS
	SELECT id, datetime(started, 'unixepoch') AS started_utc, state, name,
	    stored, size, remote_addr, link_id, client_id, method,
	    finished - started AS seconds, message
	FROM upload ORDER BY id DESC;

-- share_file of a folder: the link serves it as one archive, made as it
-- streams ('tar.gz' or 'zip'); NULL for a file. Signed with the path.
ALTER TABLE link ADD COLUMN archive TEXT;

PRAGMA user_version = 10;
