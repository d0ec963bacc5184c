/*
 * test_db_cache: SANDBOX_DB_CACHE sizes the page cache of the connections
 * opened after it is set (db_set_cache_kib), and an out-of-range value is
 * ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/error.h"
#include "check.h"
#include "store/db.h"

static long
opened_cache(const char *path)
{
	struct db	*db = NULL;
	struct error	 err;
	long		 kib;

	if (db_open(path, &db, &err) == -1) {
		CHECK(0, err.msg);
		return -1;
	}
	kib = db_cache_kib(db);
	db_close(db);
	return kib;
}

int
main(void)
{
	char	dbpath[] = "/tmp/test_db_cache.XXXXXX";
	int	fd;

	if ((fd = mkstemp(dbpath)) == -1) {
		CHECK(0, "temporary database");
		return check_status();
	}
	close(fd);
	CHECK(opened_cache(dbpath) == 256, "the default cache is 256 KiB");
	db_set_cache_kib(64);
	CHECK(opened_cache(dbpath) == 64, "SANDBOX_DB_CACHE=64 gives 64 KiB");
	db_set_cache_kib(4);
	CHECK(opened_cache(dbpath) == 64, "a value below 16 KiB is ignored");
	unlink(dbpath);
	return check_status();
}
