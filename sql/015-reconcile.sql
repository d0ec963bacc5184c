-- 015-reconcile.sql: finishing runs whose worker is gone.
--
-- A command runs under the supervisor in the container, which keeps its
-- result there; the worker that started it normally stores it. When that
-- worker died (SIGKILL, a restart), a pass about once a minute collects the
-- run from the container and finishes its row. One row in reconcile_lease
-- lets one pass at a time run across all processes, like cleanup_lease; a
-- lease that outlives its holder expires by itself.

CREATE TABLE reconcile_lease (
	id		INTEGER PRIMARY KEY CHECK (id = 1),
	last_run	INTEGER NOT NULL DEFAULT 0,	-- unix seconds the last pass started
	lease_until	INTEGER NOT NULL DEFAULT 0,	-- a pass holds the lease until then
	holder		TEXT				-- "pid/thread" of the pass holding it
);
INSERT INTO reconcile_lease (id) VALUES (1);

-- Its query of running rows uses run_running (007-tasks.sql).

PRAGMA user_version = 15;
