-- 002-oauth.sql: the OAuth 2.1 authorization server's state.
--
-- Secrets are never stored: client secrets, authorization codes, access and
-- refresh tokens, and the sign-in form's CSRF token are kept only as hex
-- SHA-256 of their value, so a copy of this file grants nothing.
--
-- Operators read it through the views at the end, for example:
--   sqlite3 state.db 'select * from oauth_clients'
--   sqlite3 state.db 'select * from oauth_live_grants'
--   sqlite3 state.db 'select * from oauth_tokens'
-- and revoke by deleting rows (triggers below cascade even when the sqlite3
-- shell runs without PRAGMA foreign_keys):
--   sqlite3 state.db "delete from oauth_client where client_id = '...'"
--   sqlite3 state.db 'delete from oauth_grant'          -- every token

-- Registered clients (RFC 7591), and clients known by a Client ID Metadata
-- Document (client_id is then the document's https URL, cimd = 1).
CREATE TABLE oauth_client (
	client_id	TEXT PRIMARY KEY,	-- random, or the CIMD URL
	secret_hash	TEXT,			-- hex SHA-256 of client_secret; NULL for public clients
	auth_method	TEXT NOT NULL		-- token_endpoint_auth_method (RFC 7591 §2)
	    CHECK (auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
	name		TEXT,			-- client_name, as the client gave it
	redirect_uris	TEXT NOT NULL,		-- JSON array of registered redirect URIs
	metadata	TEXT NOT NULL,		-- JSON: the registered metadata, echoed by /register
	refresh		INTEGER NOT NULL,	-- 1 when grant_types includes refresh_token
	cimd		INTEGER NOT NULL DEFAULT 0, -- 1: from a Client ID Metadata Document
	created		INTEGER NOT NULL,	-- unix seconds (CIMD: when last fetched)
	last_used	INTEGER			-- last token issued; NULL: never used (pruned after a day)
);
CREATE INDEX oauth_client_unused ON oauth_client (created) WHERE last_used IS NULL;

-- Authorization requests waiting on the sign-in page (RFC 6749 §4.1.1),
-- validated and stored when the page is shown, so that the form only carries
-- an unguessable request id and the POST cannot change what was validated.
CREATE TABLE oauth_request (
	id_hash		TEXT PRIMARY KEY,	-- hex SHA-256 of the form's request id
	csrf_hash	TEXT NOT NULL,		-- hex SHA-256 of the cookie the page set
	client_id	TEXT NOT NULL REFERENCES oauth_client (client_id) ON DELETE CASCADE,
	redirect_uri	TEXT NOT NULL,		-- as sent ("" when omitted, one registered)
	redirect_to	TEXT NOT NULL,		-- the URI to redirect to
	challenge	TEXT NOT NULL,		-- PKCE code_challenge (S256)
	state		TEXT,
	scope		TEXT NOT NULL,
	resource	TEXT NOT NULL,		-- RFC 8707 audience of the tokens
	expires		INTEGER NOT NULL
);
CREATE INDEX oauth_request_expires ON oauth_request (expires);

-- Wrong API keys on the sign-in page, per client address: each failure
-- doubles the time the address must wait before the next try.
CREATE TABLE oauth_throttle (
	addr		TEXT PRIMARY KEY,	-- REMOTE_ADDR
	failures	INTEGER NOT NULL,	-- consecutive failures
	last_failure	INTEGER NOT NULL,	-- unix seconds (milliseconds: 024)
	blocked_until	INTEGER NOT NULL	-- unix seconds (milliseconds: 024)
);

-- A grant: one successful sign-in of one client, and every token issued
-- from it by rotation. Deleting a grant revokes all of its tokens.
CREATE TABLE oauth_grant (
	id		INTEGER PRIMARY KEY,
	client_id	TEXT NOT NULL REFERENCES oauth_client (client_id) ON DELETE CASCADE,
	scope		TEXT NOT NULL,
	resource	TEXT NOT NULL,		-- the audience: this server's MCP URL
	created		INTEGER NOT NULL,
	last_used	INTEGER NOT NULL	-- last token issued or /mcp request (to a minute)
);
CREATE INDEX oauth_grant_client ON oauth_grant (client_id);

-- Authorization codes (RFC 6749 §4.1.2): single use, short lived. A code is
-- kept after use (used = 1, grant_id set) until it expires, so that a second
-- use is recognised and revokes the grant it produced (RFC 6749 §4.1.2).
CREATE TABLE oauth_code (
	code_hash	TEXT PRIMARY KEY,	-- hex SHA-256 of the code
	client_id	TEXT NOT NULL REFERENCES oauth_client (client_id) ON DELETE CASCADE,
	redirect_uri	TEXT NOT NULL,		-- as sent to /authorize ("" when omitted)
	challenge	TEXT NOT NULL,		-- PKCE S256 code_challenge (RFC 7636 §4.2)
	scope		TEXT NOT NULL,
	resource	TEXT NOT NULL,
	expires		INTEGER NOT NULL,
	used		INTEGER NOT NULL DEFAULT 0,
	grant_id	INTEGER REFERENCES oauth_grant (id) ON DELETE SET NULL
);
CREATE INDEX oauth_code_expires ON oauth_code (expires);

-- Access and refresh tokens. A refresh token is rotated on every use
-- (OAuth 2.1 §4.3.1): the old row stays with rotated set, so that presenting
-- it again is recognised: once within a short grace it replaces what its
-- rotation issued (a client that lost the response); later it revokes the
-- grant. parent is the refresh token a pair was issued from.
CREATE TABLE oauth_token (
	token_hash	TEXT PRIMARY KEY,	-- hex SHA-256 of the token
	grant_id	INTEGER NOT NULL REFERENCES oauth_grant (id) ON DELETE CASCADE,
	kind		TEXT NOT NULL CHECK (kind IN ('access', 'refresh')),
	parent		TEXT,			-- token_hash of the refresh token used, NULL from a code
	created		INTEGER NOT NULL,
	expires		INTEGER NOT NULL,
	rotated		INTEGER,		-- refresh: when it was used (NULL: current; 1: its
						-- pair was replaced in a grace replay)
	grace_used	INTEGER NOT NULL DEFAULT 0 -- refresh: replayed once within the grace
);
CREATE INDEX oauth_token_grant ON oauth_token (grant_id);
CREATE INDEX oauth_token_parent ON oauth_token (parent);
CREATE INDEX oauth_token_expires ON oauth_token (expires);

-- Cascades that also hold in a sqlite3 shell without PRAGMA foreign_keys.
CREATE TRIGGER oauth_client_delete AFTER DELETE ON oauth_client BEGIN
	DELETE FROM oauth_grant WHERE client_id = old.client_id;
	DELETE FROM oauth_code WHERE client_id = old.client_id;
	DELETE FROM oauth_request WHERE client_id = old.client_id;
END;
CREATE TRIGGER oauth_grant_delete AFTER DELETE ON oauth_grant BEGIN
	DELETE FROM oauth_token WHERE grant_id = old.id;
	UPDATE oauth_code SET grant_id = NULL WHERE grant_id = old.id;
END;

-- Views for operators (times in UTC).

-- Every client: when it registered and when it last obtained a token.
CREATE VIEW oauth_clients AS
SELECT c.client_id,
       c.name,
       c.auth_method,
       c.redirect_uris,
       CASE c.cimd WHEN 1 THEN 'metadata document' ELSE 'registered' END AS kind,
       datetime(c.created, 'unixepoch') AS created,
       datetime(max(coalesce(c.last_used, 0), coalesce(max(g.last_used), 0)),
           'unixepoch') AS last_used,
       count(g.id) AS grants
FROM oauth_client c LEFT JOIN oauth_grant g ON g.client_id = c.client_id
GROUP BY c.client_id
ORDER BY c.created;

-- Grants that still hold an unexpired token, with their clients.
CREATE VIEW oauth_live_grants AS
SELECT g.id AS grant_id,
       g.client_id,
       c.name AS client_name,
       g.scope,
       g.resource,
       datetime(g.created, 'unixepoch') AS signed_in,
       datetime(g.last_used, 'unixepoch') AS last_used,
       datetime(max(t.expires), 'unixepoch') AS expires
FROM oauth_grant g
JOIN oauth_client c ON c.client_id = g.client_id
JOIN oauth_token t ON t.grant_id = g.id AND t.rotated IS NULL
WHERE t.expires > strftime('%s', 'now')
GROUP BY g.id
ORDER BY g.created;

-- Every token row (hashes only), with its state.
CREATE VIEW oauth_tokens AS
SELECT t.kind,
       g.client_id,
       t.grant_id,
       datetime(t.created, 'unixepoch') AS issued,
       datetime(t.expires, 'unixepoch') AS expires,
       CASE WHEN t.expires <= strftime('%s', 'now') THEN 'expired'
            WHEN t.rotated IS NOT NULL THEN 'rotated'
            ELSE 'live' END AS state,
       substr(t.token_hash, 1, 12) AS hash_prefix
FROM oauth_token t JOIN oauth_grant g ON g.id = t.grant_id
ORDER BY t.created;

PRAGMA user_version = 2;
