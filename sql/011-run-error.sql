-- 011-run-error.sql: why a run ended in state 'error' (the engine
-- unreachable, the image missing, ...), kept with the audit row after the
-- stored result is pruned, so `sandboxctl audit` can say what went wrong.

ALTER TABLE run ADD COLUMN error TEXT;	-- one line for the operator, or NULL

PRAGMA user_version = 11;
