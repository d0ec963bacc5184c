-- 019-signin-buckets.sql: per-address buckets for unauthenticated state.
--
-- Pending sign-in pages and never-used registrations are capped overall;
-- past the cap, the oldest of the address with the most go, so a flood
-- from one address (or a few) evicts its own rows before a person's fresh
-- page or client. Addresses as the throttle keys them (IPv6 by /64); NULL
-- in rows from before this version (one bucket).

ALTER TABLE oauth_request ADD COLUMN addr TEXT;
ALTER TABLE oauth_client ADD COLUMN reg_addr TEXT;
CREATE INDEX oauth_request_addr ON oauth_request (addr);
CREATE INDEX oauth_client_unused_addr ON oauth_client (reg_addr) WHERE last_used IS NULL;

PRAGMA user_version = 19;
