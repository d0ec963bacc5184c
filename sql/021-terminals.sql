-- 021-terminals.sql: the terminals the model opened (terminal_start), each
-- a PTY under the supervisor in the owner's sandbox. The row says whose it
-- is (only its owner's calls may use it), counts the open ones against
-- TERMINAL_MAX, and stays, closed, for the audit: SANDBOX_AUDIT_RETENTION
-- after its last use (pruned when a terminal starts).

CREATE TABLE terminal (
	id		TEXT PRIMARY KEY,	-- terminal id returned to the model
	owner		TEXT NOT NULL,		-- auth_owner of the caller
	client_id	TEXT NOT NULL,
	command		TEXT NOT NULL,		-- cut to 4096 bytes
	cols		INTEGER NOT NULL,
	rows		INTEGER NOT NULL,
	created		INTEGER NOT NULL,	-- unix seconds
	last_used	INTEGER NOT NULL,	-- the last call on it
	closed		INTEGER,		-- NULL while open
	exit_code	INTEGER			-- when its program ended
);
CREATE INDEX terminal_owner ON terminal (owner, closed);

PRAGMA user_version = 21;
