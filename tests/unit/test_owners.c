/*
 * test_owners.c: personal keys (owners.c) and the names of sandboxes per
 * person (sandboxes.c), on a real SQLite file.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/crypto.h"
#include "check.h"
#include "oauth/owners.h"
#include "sandbox/sandboxes.h"
#include "store/db.h"
#include "store/db_oauth.h"

static void
test_names(void)
{
	CHECK(owners_name_valid("alice") && owners_name_valid("a.b_c-1"),
	    "plain names are valid");
	CHECK(!owners_name_valid("operator"), "operator is reserved");
	CHECK(!owners_name_valid("") && !owners_name_valid("-x") &&
	    !owners_name_valid("Alice") && !owners_name_valid("a b") &&
	    !owners_name_valid("a/b"), "empty, leading sign, capitals, "
	    "spaces and slashes are refused");
	{
		char long_name[OWNER_MAX + 1];

		memset(long_name, 'a', sizeof(long_name) - 1);
		long_name[sizeof(long_name) - 1] = '\0';
		CHECK(!owners_name_valid(long_name), "too long");
	}
}

static void
test_sandbox_names(void)
{
	struct config	cfg;
	char		c1[SANDBOXES_NAME_MAX], v1[SANDBOXES_NAME_MAX];
	char		c2[SANDBOXES_NAME_MAX], v2[SANDBOXES_NAME_MAX];

	memset(&cfg, 0, sizeof(cfg));
	cfg.container = "cs";
	cfg.volume = "cs-data";
	sandboxes_names(&cfg, "alice", c1, v1);
	CHECK(strcmp(c1, "cs") == 0 && strcmp(v1, "cs-data") == 0,
	    "shared scope: the configured names for everyone");
	cfg.per_person = true;
	sandboxes_names(&cfg, "alice", c1, v1);
	sandboxes_names(&cfg, "bob", c2, v2);
	CHECK(strncmp(c1, "cs-", 3) == 0 && strlen(c1) == 3 + 12 &&
	    strncmp(v1, "cs-data-", 8) == 0 && strlen(v1) == 8 + 12,
	    "person scope: prefix and 12 hex digits");
	CHECK(strcmp(c1, c2) != 0 && strcmp(v1, v2) != 0,
	    "two owners, two containers and volumes");
	CHECK(strstr(c1, "alice") == NULL, "the name does not show the owner");
	sandboxes_names(&cfg, "alice", c2, v2);
	CHECK(strcmp(c1, c2) == 0, "the same owner, the same names");
}

static void
test_keys(void)
{
	char		 dbpath[] = "/tmp/test_owners.XXXXXX";
	char		 k1[OWNER_KEY_MAX], k2[OWNER_KEY_MAX], owner[OWNER_MAX];
	struct config	 cfg;
	struct db	*db = NULL;
	struct error	 err;
	int		 fd;

	memset(&cfg, 0, sizeof(cfg));
	cfg.api_key = "the-operators-own-key-0123456789";
	if ((fd = mkstemp(dbpath)) == -1) {
		CHECK(0, "temporary database");
		return;
	}
	close(fd);
	if (db_open(dbpath, &db, &err) == -1) {
		CHECK(0, err.msg);
		goto out;
	}
	CHECK(owners_check_key(&cfg, db, cfg.api_key, owner) == LOOKUP_FOUND &&
	    strcmp(owner, "operator") == 0, "SANDBOX_API_KEY is the operator's");
	CHECK(owners_key_add(db, "alice", k1, &err) == 0 &&
	    strncmp(k1, OWNER_KEY_PREFIX, 5) == 0 && strlen(k1) == 5 + 43,
	    "add a key");
	CHECK(owners_key_add(db, "alice", k2, &err) == -1,
	    "a second valid key for the same name is refused");
	CHECK(owners_key_add(db, "operator", k2, &err) == -1,
	    "operator is not a key name");
	CHECK(owners_check_key(&cfg, db, k1, owner) == LOOKUP_FOUND &&
	    strcmp(owner, "alice") == 0, "the key signs alice in");
	k1[10] ^= 1;
	CHECK(owners_check_key(&cfg, db, k1, owner) == LOOKUP_NONE &&
	    owner[0] == '\0',
	    "a changed key opens nothing");
	k1[10] ^= 1;
	CHECK(owners_check_key(&cfg, db, "cspk_", owner) == LOOKUP_NONE &&
	    owners_check_key(&cfg, db, "", owner) == LOOKUP_NONE,
	    "the bare prefix and the empty key open nothing");
	{
		struct db_q *q = db_query(db, STMT_OWNER_KEY_FIND, "t", "x");
		char hash[CRYPTO_SHA256_HEX];
		struct db_owner_key k;
		int found = 0;

		db_done(q);
		/* Only the hash is stored. */
		crypto_sha256_hex(k1, strlen(k1), hash);
		if (db_owner_key_find(db, hash, &k) == LOOKUP_FOUND)
			found = strcmp(k.key_hash, hash) == 0;
		CHECK(found, "the store holds the key's SHA-256");
	}
	CHECK(owners_key_rotate(db, "alice", k2, &err) == 0 &&
	    strcmp(k1, k2) != 0, "rotate gives a new key");
	CHECK(owners_check_key(&cfg, db, k1, owner) == LOOKUP_NONE,
	    "the old key no longer works");
	CHECK(owners_check_key(&cfg, db, k2, owner) == LOOKUP_FOUND &&
	    strcmp(owner, "alice") == 0, "the new key is still alice's");
	CHECK(owners_key_rotate(db, "bob", k1, &err) == -1,
	    "rotating a name without a key is refused");
	/* Security review item 3: no start of a revoked owner's sandbox. */
	cfg.per_person = true;
	cfg.container = "cs";
	cfg.volume = "cs-data";
	cfg.idle_stop = 3600;
	CHECK(sandboxes_claim(&cfg, db, "alice", &err) == 0 &&
	    sandboxes_claim(&cfg, db, OWNER_OPERATOR, &err) == 0,
	    "a valid key's and the operator's sandboxes may start");
	CHECK(owners_key_revoke(db, "alice", &err) == LOOKUP_FOUND &&
	    owners_check_key(&cfg, db, k2, owner) == LOOKUP_NONE, "revoke");
	CHECK(sandboxes_claim(&cfg, db, "alice", &err) == -1 &&
	    strstr(err.msg, "revoked") != NULL &&
	    sandboxes_claim(&cfg, db, "nobody", &err) == -1,
	    "a revoked or unknown owner's sandbox is not claimed");
	cfg.per_person = false;
	CHECK(owners_key_revoke(db, "alice", &err) == LOOKUP_NONE,
	    "revoking again finds nothing");
	CHECK(owners_key_add(db, "alice", k1, &err) == 0 &&
	    owners_check_key(&cfg, db, k1, owner) == LOOKUP_FOUND,
	    "the name can be given a key again");
out:
	db_close(db);
	unlink(dbpath);
}

int
main(void)
{
	test_names();
	test_sandbox_names();
	test_keys();
	return check_status();
}
