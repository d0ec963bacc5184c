-- 009-signin.sql: the sign-in audit, approvals and request-rate counters.
--
-- Operators:
--   sqlite3 state.db 'select * from signins limit 20'   -- or: sandboxctl signins
--   sqlite3 state.db 'delete from oauth_throttle'        -- or: sandboxctl unblock

-- When the owner first approved a client (typed the key for it): NULL for
-- a client never approved. Errors of /authorize are redirected only to
-- approved clients (RFC 9700 §4.11.2); the others see them on a page.
ALTER TABLE oauth_client ADD COLUMN approved INTEGER;
UPDATE oauth_client SET approved = (SELECT min(g.created) FROM oauth_grant g
    WHERE g.client_id = oauth_client.client_id);

-- Every submission of the sign-in form, whatever its outcome. Pruned after
-- SANDBOX_AUDIT_RETENTION with the rest of the audit log.
CREATE TABLE signin_attempt (
	id		INTEGER PRIMARY KEY,
	at		INTEGER NOT NULL,	-- unix seconds
	addr		TEXT NOT NULL,		-- client address (after trusted proxies)
	client_id	TEXT NOT NULL,
	client_name	TEXT,			-- as the client named itself
	redirect_host	TEXT,			-- host[:port] the code would go to
	result		TEXT NOT NULL		-- ok, wrong_key, throttled, denied,
						-- refused_host, error
);
CREATE INDEX signin_attempt_at ON signin_attempt (at);

-- Fixed-window counters of unauthenticated work: registrations per address
-- and hour, metadata document fetches per host and overall.
CREATE TABLE rate_window (
	key		TEXT PRIMARY KEY,	-- "register:ADDR", "cimd:HOST", "cimd:*"
	since		INTEGER NOT NULL,	-- start of the window, unix seconds
	count		INTEGER NOT NULL
);

CREATE VIEW signins AS
SELECT datetime(at, 'unixepoch') AS at, addr, result, client_name, client_id,
       redirect_host
FROM signin_attempt ORDER BY id DESC;

PRAGMA user_version = 9;
