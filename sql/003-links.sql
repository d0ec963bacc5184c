-- 003-links.sql: download links made by share_file and served by /dl.
--
-- A link's URL is PUBLIC_URL/dl/<id>/<expires>/<sig>/<name> (lib/links/links.h):
-- the signature covers the id, the expiry and the path below, under a key
-- derived from SANDBOX_API_KEY. The id alone serves nothing, so it is kept
-- in clear: operators find a link by the id in its URL.
--
-- Operators:
--   list:    sqlite3 state.db 'SELECT * FROM links'
--   revoke:  sqlite3 state.db "UPDATE link SET revoked = unixepoch() WHERE id = '<id>'"
--   shorten: sqlite3 state.db "UPDATE link SET expires = unixepoch() + 60 WHERE id = '<id>'"
-- Both take effect on the next request. Rows expired for 30 days are
-- deleted when a new link is made.

CREATE TABLE link (
	id		TEXT PRIMARY KEY,	-- <id> of the URL: 16 random bytes, base64url
	path		TEXT NOT NULL,		-- absolute path in the container, as signed
	size		INTEGER NOT NULL,	-- bytes when shared; a download sends the file as it is then
	created		INTEGER NOT NULL,	-- unix seconds
	expires		INTEGER NOT NULL,	-- unix seconds; the URL's expiry, or earlier if an operator shortened it
	client_id	TEXT NOT NULL,		-- who shared it: an OAuth client id, or "api-key"
	downloads	INTEGER NOT NULL DEFAULT 0, -- GET answers served (200 and 206)
	last_download	INTEGER,		-- unix seconds of the last one, NULL if none
	revoked		INTEGER			-- unix seconds of revocation; NULL while live
);
CREATE INDEX link_expires ON link (expires);

-- The links for people: times in UTC, and a state of active, expired or
-- revoked (revocation wins).
CREATE VIEW links AS
SELECT	id,
	CASE	WHEN revoked IS NOT NULL THEN 'revoked'
		WHEN expires <= CAST(strftime('%s', 'now') AS INTEGER) THEN 'expired'
		ELSE 'active' END AS state,
	path,
	size,
	client_id,
	datetime(created, 'unixepoch') AS created_utc,
	datetime(expires, 'unixepoch') AS expires_utc,
	downloads,
	datetime(last_download, 'unixepoch') AS last_download_utc,
	datetime(revoked, 'unixepoch') AS revoked_utc
FROM link
ORDER BY created DESC;

PRAGMA user_version = 3;
