-- 025-restore-lease.sql: a restore's hold on its sandbox is a lease.
--
-- One restore of a sandbox runs at a time, and no snapshot is taken (nor
-- the snapshot being restored deleted) meanwhile: the restore's row in
-- snapshot_restore is 'running' with a deadline (unix seconds) that the
-- restoring process moves on as it goes. A process killed midway moves it
-- no more, so its hold lapses within the lease instead of staying; the
-- next restore or snapshot of that sandbox marks such a row failed.
--
-- A restore that answered its client early (a Task, or a run_id handle, on
-- the 2026-07-28 protocol) names the run that holds its result: tasks/get
-- and get_result read that run, and its row here says whether the restore
-- still goes on.
--   sqlite3 state.db 'select id, container, state, deadline
--     from snapshot_restore order by id desc limit 5'

ALTER TABLE snapshot_restore ADD COLUMN deadline INTEGER;
UPDATE snapshot_restore SET deadline = started + 900 WHERE state = 'running';
ALTER TABLE snapshot_restore ADD COLUMN run_id TEXT;
CREATE INDEX snapshot_restore_run ON snapshot_restore (run_id);

PRAGMA user_version = 25;
