-- 022-secrets.sql: secrets the sandbox uses but never sees (sandboxctl
-- secrets; docs/secrets.md).
--
-- The value is never here in plain text: sealed is AES-256-GCM under the
-- installation's secrets key (a file of 32 random bytes beside the
-- database, mode 600, made on first use; not in this file), with a random
-- nonce per row and the secret's name as additional data: nonce (12
-- bytes), ciphertext, tag (16 bytes). A copy of this file alone (a backup,
-- what sqlite3 shows) reveals names, hosts and owners, not values.

CREATE TABLE secret (
	name		TEXT PRIMARY KEY,
	hosts		TEXT NOT NULL,		-- host names, comma-separated
	owner		TEXT,			-- NULL: every sandbox
	header		TEXT NOT NULL,		-- the header's name
	template	TEXT NOT NULL,		-- its value, "{}" where the secret goes
	basic_user	TEXT,			-- HTTP Basic: the user, else NULL
	sealed		BLOB NOT NULL,
	created		INTEGER NOT NULL	-- unix seconds
);

PRAGMA user_version = 22;
