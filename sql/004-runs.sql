-- 004-runs.sql: every execute call, for results fetched later and for the
-- audit log.
--
-- A row is written when a command starts and completed when it ends. The
-- result (output already cut to MAX_OUTPUT_BYTES per stream) stays for a
-- day so a model whose call was interrupted can fetch it (get_result); the
-- row itself, without the output, stays for SANDBOX_AUDIT_RETENTION.

CREATE TABLE run (
	id		TEXT PRIMARY KEY,	-- run id returned to the model
	session_hash	TEXT,			-- hex SHA-256 of the MCP session id
	request_id	TEXT,			-- JSON-RPC id as JSON text, for cancellation
	client_id	TEXT NOT NULL,		-- OAuth client id, or "api-key"
	client_name	TEXT,
	command		TEXT NOT NULL,		-- cut to 4096 bytes
	timeout		INTEGER NOT NULL,	-- seconds
	started		INTEGER NOT NULL,	-- unix seconds
	finished	INTEGER,		-- NULL while running
	state		TEXT NOT NULL DEFAULT 'running'
			CHECK (state IN ('running', 'exit', 'timeout', 'cancel',
			    'error', 'detached')),
	exit_code	INTEGER,
	duration_ms	INTEGER,
	stdout_bytes	INTEGER,		-- bytes the command wrote
	stderr_bytes	INTEGER,
	cancel_requested INTEGER NOT NULL DEFAULT 0, -- notifications/cancelled seen
	result		TEXT			-- the CallToolResult JSON; NULL once pruned
);
CREATE INDEX run_started ON run (started);
CREATE INDEX run_request ON run (session_hash, request_id);

-- What ran lately, newest first: sqlite3 state.db 'select * from audit limit 20'
CREATE VIEW audit AS
	SELECT id, datetime(started, 'unixepoch') AS started_at, client_name,
	    client_id, state, exit_code, duration_ms, stdout_bytes, stderr_bytes,
	    substr(replace(command, char(10), ' '), 1, 120) AS command
	FROM run ORDER BY started DESC;

PRAGMA user_version = 4;
