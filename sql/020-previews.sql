-- 020-previews.sql: preview links made by the preview_link tool and served
-- by the preview program (lib/preview/), each on an origin of its own.
--
-- A link's URL is ORIGIN/.preview/<sig>/PATH where ORIGIN is
-- https://<id>.<preview domain> (SANDBOX_PREVIEW_URL) or
-- http://<id>.preview.localhost:PORT on a loopback server
-- (lib/links/previews.h): the signature covers the id, the port and
-- the owner below, under the links' key; the expiry is the row's alone.
--
-- Operators:
--   list:    sandboxctl links list   (download, upload and preview links)
--   revoke:  sandboxctl links revoke <id>
-- Open connections are counted per link while the preview program carries
-- them (sandboxctl status); the program sets them to 0 when it starts.

CREATE TABLE preview (
	id		TEXT PRIMARY KEY,	-- the host's first label: 26 of [a-z2-7]
	port		INTEGER NOT NULL,	-- the port in the sandbox, as signed
	path		TEXT NOT NULL,		-- where the link lands first ("/...")
	owner		TEXT NOT NULL,		-- whose sandbox it shows, as signed
	client_id	TEXT NOT NULL,		-- who made it: an OAuth client id, or "api-key"
	created		INTEGER NOT NULL,	-- unix seconds
	expires		INTEGER NOT NULL,	-- unix seconds
	opens		INTEGER NOT NULL DEFAULT 0, -- connections carried
	last_open	INTEGER,		-- unix seconds, NULL if none
	open_now	INTEGER NOT NULL DEFAULT 0, -- connections carried now
	revoked		INTEGER			-- unix seconds of revocation; NULL while live
);
CREATE INDEX preview_expires ON preview (expires);
CREATE INDEX preview_owner ON preview (owner);

-- When a preview program last said it runs (every 30 s while it does):
-- preview_link refuses, saying why, when none has for 90 s (a front that
-- cannot route previews: plain CGI, .htaccess-only hosting).
CREATE TABLE preview_program (
	name		TEXT PRIMARY KEY,	-- "preview"
	seen		INTEGER NOT NULL	-- unix seconds
);

PRAGMA user_version = 20;
