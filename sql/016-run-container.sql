-- 016-run-container.sql: the container a run started in.
--
-- A run whose record is gone ended with its container when the container
-- it started in is no longer the one there: another Id (re-created) or
-- another start time (restarted). Both are stored when the run starts, as
-- the engine reported them (Id: 64 hex digits; State.StartedAt: RFC 3339
-- with nanoseconds), so collection compares identities instead of clocks.
-- NULL in rows from before this version, or when the engine did not say:
-- collection then compares the container's start time with the run's.

ALTER TABLE run ADD COLUMN container_id TEXT;
ALTER TABLE run ADD COLUMN container_started TEXT;

PRAGMA user_version = 16;
