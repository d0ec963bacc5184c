-- 026-owner-addr.sql: each owner's fixed address on the sandbox network
-- (SANDBOX_SCOPE=person with the egress proxy; lib/sandbox/owneraddr.c).
--
-- The network's dynamic range is its lower half (containers/netpolicy.sh);
-- an owner's container gets the address at slot past the upper half's start,
-- which Docker never hands to another container. The proxy adds an owner's
-- secrets for that address only. A slot is an owner's for good: no row is
-- ever deleted, so no other owner's container can come to hold it.
--   sqlite3 state.db 'select owner, slot from owner_addr'

CREATE TABLE owner_addr (
	owner	TEXT PRIMARY KEY,
	slot	INTEGER NOT NULL UNIQUE CHECK (slot > 0)
);

PRAGMA user_version = 26;
