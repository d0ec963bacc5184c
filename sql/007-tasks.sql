-- 007-tasks.sql: commands that outlive their request on the 2026-07-28
-- protocol. A task (Tasks extension, io.modelcontextprotocol/tasks) or a
-- handle (a result naming the run_id) IS a run: these columns say which,
-- and what tasks/get reports while it works.
--
--   sqlite3 state.db "select id, state, handle, last_line from run where handle is not null"

ALTER TABLE run ADD COLUMN handle TEXT CHECK (handle IN ('task', 'handle'));
ALTER TABLE run ADD COLUMN last_line TEXT;	-- newest output line, cut to 200 bytes
ALTER TABLE run ADD COLUMN updated INTEGER;	-- unix seconds of the last change
CREATE INDEX run_running ON run (state) WHERE state = 'running';

PRAGMA user_version = 7;
