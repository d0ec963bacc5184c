-- 005-ops.sql: the hourly clean-up of /sandbox and the audit log's pruning.
--
-- One row in cleanup_lease coordinates every process: a pass starts only by
-- a conditional UPDATE of that row (due: last_run older than
-- SANDBOX_CLEANUP_INTERVAL; free: no lease held), which SQLite serialises,
-- so at most one pass runs at a time across all processes. A lease that
-- outlives its holder (a killed process) expires by itself.
--
-- Operators:
--   sqlite3 state.db 'select * from cleanups limit 10'
--   sqlite3 state.db 'update cleanup_lease set last_run = 0'  -- due now

CREATE TABLE cleanup_lease (
	id		INTEGER PRIMARY KEY CHECK (id = 1),
	last_run	INTEGER NOT NULL DEFAULT 0,	-- unix seconds the last pass started
	lease_until	INTEGER NOT NULL DEFAULT 0,	-- a pass holds the lease until then
	holder		TEXT				-- "pid/thread" of the pass holding it
);
INSERT INTO cleanup_lease (id) VALUES (1);

-- One row per pass.
CREATE TABLE cleanup_run (
	id		INTEGER PRIMARY KEY,
	started		INTEGER NOT NULL,		-- unix seconds
	finished	INTEGER,			-- NULL while running
	trigger		TEXT NOT NULL,			-- 'auto' (a request) or 'sandboxctl'
	state		TEXT NOT NULL DEFAULT 'running'
			CHECK (state IN ('running', 'ok', 'skipped', 'error',
			    'interrupted')),
	file_ttl	INTEGER NOT NULL,		-- FILE_TTL the pass used
	removed		INTEGER,			-- top-level entries of /sandbox removed
	kept		INTEGER,			-- entries changed within FILE_TTL
	failed		INTEGER,			-- entries that could not be removed
	bytes		INTEGER,			-- disk space they used (du)
	runs_pruned	INTEGER,			-- audit rows older than SANDBOX_AUDIT_RETENTION
	results_cleared	INTEGER,			-- run results older than a day dropped
	names		TEXT,				-- JSON array of removed names (shell-quoted, first 100)
	message		TEXT				-- why skipped or failed
);
CREATE INDEX cleanup_run_started ON cleanup_run (started);

CREATE VIEW cleanups AS
	SELECT id, datetime(started, 'unixepoch') AS started_at, trigger, state,
	    removed, kept, failed, bytes, runs_pruned, results_cleared,
	    finished - started AS seconds, message, names
	FROM cleanup_run ORDER BY id DESC;

PRAGMA user_version = 5;
