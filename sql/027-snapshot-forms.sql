-- 027-snapshot-forms.sql: /sandbox kept as differences between snapshots.
--
-- form says how a snapshot's /sandbox archive (ID.tar in
-- SANDBOX_SNAPSHOT_DIR) was made:
--   'engine'  the engine's archive of /sandbox (snapshots taken before
--             this version, or when the sandbox image has no GNU tar);
--   'full'    GNU tar --listed-incremental, all of /sandbox; its state
--             (ID.snar) is kept beside it;
--   'diff'    GNU tar against the state of snapshot base (a 'full' one of
--             the same volume): what changed since base, deletions too.
--             Restoring it restores base's archive, then this one.
-- volume is the /sandbox volume it was taken of: a difference is taken
-- only against a snapshot of the same volume (a restore makes a new one).
-- hidden marks a 'full' snapshot deleted while differences still build on
-- it: no longer listed or counted, its archive's bytes still are; it goes
-- with its last difference.
--   sqlite3 state.db 'select id, form, base, archive_bytes, hidden
--     from snapshot order by created'

ALTER TABLE snapshot ADD COLUMN form TEXT NOT NULL DEFAULT 'engine';
ALTER TABLE snapshot ADD COLUMN base TEXT;
ALTER TABLE snapshot ADD COLUMN volume TEXT;
ALTER TABLE snapshot ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;
CREATE INDEX snapshot_base ON snapshot (base);

PRAGMA user_version = 27;
