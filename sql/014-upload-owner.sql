-- 014-upload-owner.sql: an upload link belongs to the owner whose sign-in
-- made it (owners.h): /up stores into that owner's sandbox, and another
-- owner's tools cannot see or revoke it. Links made before are the
-- operator's, as everything was.

ALTER TABLE upload_link ADD COLUMN owner TEXT NOT NULL DEFAULT 'operator';

PRAGMA user_version = 14;
