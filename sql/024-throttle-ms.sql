-- 024-throttle-ms.sql: the sign-in throttle's times in milliseconds.
--
-- In whole seconds, a wrong key at 10.97 s and a retry at 11.01 s were a
-- second apart: the one-second wait was over after 40 ms. last_failure and
-- blocked_until are now unix milliseconds, so every wait is as long as the
-- page says.
--   sqlite3 state.db 'select addr, failures,
--     datetime(blocked_until / 1000, "unixepoch") from oauth_throttle'

UPDATE oauth_throttle SET last_failure = last_failure * 1000,
    blocked_until = blocked_until * 1000;

PRAGMA user_version = 24;
