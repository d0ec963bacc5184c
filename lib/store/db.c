/*
 * db.c: the SQLite file. The only file that includes <sqlite3.h>.
 *
 * Every statement the programs run is in one of the areas' tables
 * (db_session.c, db_runs.c, db_oauth.c, db_links.c, db_sandbox.c, db_ops.c,
 * each beside the readers of its rows), gathered here into one array
 * indexed by enum db_stmt, and is prepared once per connection. Connections use WAL (so
 * readers never wait for a writer), a busy timeout (so writers from several
 * processes queue instead of failing), and foreign keys.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/log.h"
#include "store/db.h"
#include "store/extern.h"
#include "store/schema.h"

#define BUSY_TIMEOUT_MS	5000

/* The areas' statement tables (extern.h), gathered by sql_index. */
static const struct db_sql *const sql_tables[] = {
	db_sql_session, db_sql_runs, db_sql_oauth, db_sql_links,
	db_sql_sandbox, db_sql_ops, db_sql_terms, db_sql_secrets, db_sql_snap,
};

static const char	*sql[STMT__MAX];
static pthread_once_t	 sql_once = PTHREAD_ONCE_INIT;

/* One array indexed by enum db_stmt; a statement given twice is logged. */
static void
sql_index(void)
{
	const struct db_sql	*t;
	size_t			 i;

	for (i = 0; i < sizeof(sql_tables) / sizeof(sql_tables[0]); i++)
		for (t = sql_tables[i]; t->sql != NULL; t++) {
			if ((unsigned)t->id >= STMT__MAX || sql[t->id] != NULL) {
				log_warn("db: statement %d given twice", t->id);
				continue;
			}
			sql[t->id] = t->sql;
		}
}

struct db_q {
	struct db	*db;
	sqlite3_stmt	*st;
	enum db_stmt	 id;
};

struct db {
	sqlite3		*h;
	struct db_q	 q[STMT__MAX];
	char		*path;
};

static int
bindv(struct db_q *q, const char *types, va_list ap)
{
	int i, rc = SQLITE_OK;

	for (i = 1; types != NULL && *types != '\0' && rc == SQLITE_OK; types++, i++) {
		switch (*types) {
		case 't': {
			const char *s = va_arg(ap, const char *);

			rc = s == NULL ? sqlite3_bind_null(q->st, i) :
			    sqlite3_bind_text(q->st, i, s, -1, SQLITE_TRANSIENT);
			break;
		}
		case 'i':
			rc = sqlite3_bind_int64(q->st, i, va_arg(ap, long long));
			break;
		case 'b': {
			const void *p = va_arg(ap, const void *);
			size_t n = va_arg(ap, size_t);

			rc = sqlite3_bind_blob64(q->st, i, p, n, SQLITE_TRANSIENT);
			break;
		}
		case 'n':
			rc = sqlite3_bind_null(q->st, i);
			break;
		default:
			log_warn("db: bad bind type '%c' for statement %d", *types, q->id);
			return -1;
		}
	}
	if (rc != SQLITE_OK) {
		log_warn("db: bind %d of statement %d: %s", i - 1, q->id,
		    sqlite3_errmsg(q->db->h));
		return -1;
	}
	return 0;
}

static struct db_q *
prepare(struct db *db, enum db_stmt id)
{
	struct db_q *q;

	if ((unsigned)id >= STMT__MAX || sql[id] == NULL) {
		log_warn("db: no statement %d", id);
		return NULL;
	}
	q = &db->q[id];
	if (q->st == NULL &&
	    sqlite3_prepare_v3(db->h, sql[id], -1, SQLITE_PREPARE_PERSISTENT,
	    &q->st, NULL) != SQLITE_OK) {
		log_warn("db: prepare statement %d: %s", id, sqlite3_errmsg(db->h));
		return NULL;
	}
	q->db = db;
	q->id = id;
	return q;
}

/* Prepare (cached) and bind; NULL on error (logged, statement reset). */
static struct db_q *
queryv(struct db *db, enum db_stmt id, const char *types, va_list ap)
{
	struct db_q *q;

	if ((q = prepare(db, id)) == NULL)
		return NULL;
	if (bindv(q, types, ap) == -1) {
		db_done(q);
		return NULL;
	}
	return q;
}

struct db_q *
db_query(struct db *db, enum db_stmt id, const char *types, ...)
{
	struct db_q	*q;
	va_list		 ap;

	va_start(ap, types);
	q = queryv(db, id, types, ap);
	va_end(ap);
	return q;
}

enum db_step
db_step(struct db_q *q)
{
	int rc = sqlite3_step(q->st);

	if (rc == SQLITE_ROW)
		return DB_ROW;
	if (rc == SQLITE_DONE)
		return DB_DONE;
	log_warn("db: step statement %d: %s", q->id, sqlite3_errmsg(q->db->h));
	return DB_ERROR;
}

const char *
db_text(struct db_q *q, int col)
{
	return (const char *)sqlite3_column_text(q->st, col);
}

long long
db_int(struct db_q *q, int col)
{
	return sqlite3_column_int64(q->st, col);
}

const void *
db_blob(struct db_q *q, int col, size_t *len)
{
	const void *p = sqlite3_column_blob(q->st, col);

	*len = (size_t)sqlite3_column_bytes(q->st, col);
	return p;
}

bool
db_null(struct db_q *q, int col)
{
	return sqlite3_column_type(q->st, col) == SQLITE_NULL;
}

enum db_stmt
db_q_id(struct db_q *q)
{
	return q->id;
}

void
db_done(struct db_q *q)
{
	if (q == NULL || q->st == NULL)
		return;
	sqlite3_reset(q->st);
	sqlite3_clear_bindings(q->st);
}

long
db_exec(struct db *db, enum db_stmt id, const char *types, ...)
{
	struct db_q	*q;
	va_list		 ap;
	long		 rc = -1;

	va_start(ap, types);
	q = queryv(db, id, types, ap);
	va_end(ap);
	if (q == NULL)
		return -1;
	if (db_step(q) != DB_ERROR)
		rc = sqlite3_changes(db->h);
	db_done(q);
	return rc;
}

enum lookup_result
db_get_text(struct db *db, enum db_stmt id, char *out, size_t n,
    const char *types, ...)
{
	struct db_q		*q;
	va_list			 ap;
	enum lookup_result	 rc;

	va_start(ap, types);
	q = queryv(db, id, types, ap);
	va_end(ap);
	if ((rc = db_first_row(q)) == LOOKUP_FOUND)
		db_col_copy(q, 0, out, n);
	db_done(q);
	return rc;
}

enum lookup_result
db_first_row(struct db_q *q)
{
	if (q == NULL)
		return LOOKUP_ERROR;
	switch (db_step(q)) {
	case DB_ROW:
		return LOOKUP_FOUND;
	case DB_DONE:
		return LOOKUP_NONE;
	default:
		return LOOKUP_ERROR;
	}
}

char *
db_col_dup(struct db_q *q, int col, bool *oom)
{
	const char	*s = db_text(q, col);
	char		*d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		*oom = true;
	return d;
}

void
db_col_copy(struct db_q *q, int col, char *out, size_t n)
{
	const char *s = db_text(q, col);

	snprintf(out, n, "%s", s != NULL ? s : "");
}

bool
db_col_fits(struct db_q *q, int col, char *out, size_t n)
{
	const char	*s = db_text(q, col);
	size_t		 len;

	if (s == NULL || (len = strlen(s)) >= n)
		return false;
	memcpy(out, s, len + 1);
	return true;
}

int
db_check(struct db *db)
{
	struct db_q	*q;
	int		 id, width, rc = 0;

	for (id = 0; id < STMT__MAX; id++) {
		if ((q = prepare(db, (enum db_stmt)id)) == NULL) {
			rc = -1;
			continue;
		}
		/* A listing's shape names each column of its SELECT. */
		width = db_row_width((enum db_stmt)id);
		if (width >= 0 && width != sqlite3_column_count(q->st)) {
			log_warn("db: statement %d has %d columns, its row "
			    "shape %d", id, sqlite3_column_count(q->st), width);
			rc = -1;
		}
	}
	return rc;
}

static int
simple(struct db *db, const char *stmt)
{
	char *msg = NULL;

	if (sqlite3_exec(db->h, stmt, NULL, NULL, &msg) != SQLITE_OK) {
		log_warn("db: %s: %s", stmt, msg != NULL ? msg : "error");
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int
db_begin(struct db *db)
{
	return simple(db, "BEGIN IMMEDIATE");
}

int
db_commit(struct db *db)
{
	return simple(db, "COMMIT");
}

void
db_rollback(struct db *db)
{
	if (!sqlite3_get_autocommit(db->h))
		simple(db, "ROLLBACK");
}

long long
db_last_id(struct db *db)
{
	return sqlite3_last_insert_rowid(db->h);
}

/* A PRAGMA's one integer: 0 with *v, or -1 when it cannot be read. */
static int
pragma_int(struct db *db, const char *pragma, long long *v)
{
	sqlite3_stmt	*st;
	int		 rc = -1;

	if (sqlite3_prepare_v2(db->h, pragma, -1, &st, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = 0;
	}
	sqlite3_finalize(st);
	return rc;
}

int
db_version(struct db *db)
{
	long long	v;

	return pragma_int(db, "PRAGMA user_version", &v) == 0 ? (int)v : -1;
}

long
db_cache_kib(struct db *db)
{
	long long	c;

	if (pragma_int(db, "PRAGMA cache_size", &c) == -1)
		return -1;
	/* Negative: KiB; positive: pages (of 4096 bytes here). */
	return c < 0 ? (long)-c : (long)(c * 4);
}

/*
 * Apply each schema step newer than the file's user_version, each in one
 * IMMEDIATE transaction that re-reads the version first, so several
 * processes opening a new file at once apply each step exactly once.
 */
static int
migrate(struct db *db, struct error *err)
{
	const struct schema_step	*s;
	char				*msg = NULL;

	for (s = schema_steps; s->file != NULL; s++) {
		if (db_version(db) >= s->version)
			continue;
		if (db_begin(db) == -1)
			return error_set(err, "%s: cannot lock the database to "
			    "migrate it", db->path);
		if (db_version(db) >= s->version) {
			db_rollback(db);
			continue;
		}
		if (sqlite3_exec(db->h, s->sql, NULL, NULL, &msg) != SQLITE_OK) {
			error_set(err, "%s: applying %s: %s", db->path, s->file,
			    msg != NULL ? msg : "error");
			sqlite3_free(msg);
			db_rollback(db);
			return -1;
		}
		if (db_commit(db) == -1) {
			db_rollback(db);
			return error_set(err, "%s: cannot commit %s", db->path,
			    s->file);
		}
		log_info("database %s migrated to version %d (%s)", db->path,
		    s->version, s->file);
	}
	return 0;
}

static _Atomic long	cache_kib = 256;

void
db_set_cache_kib(long kib)
{
	if (kib >= 16)
		cache_kib = kib;
}

/*
 * Before the first connection: no allocation statistics. With them on (the
 * default), every sqlite3_malloc takes one process-wide mutex, which the
 * worker threads then queue on (sqlite3_config, SQLITE_CONFIG_MEMSTATUS);
 * nothing here reads them.
 */
static void
sqlite_global_init(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

int
db_open(const char *path, struct db **out, struct error *err)
{
	static pthread_once_t	 once = PTHREAD_ONCE_INIT;
	struct db		*db;
	char			 cache[64];
	int			 rc;

	*out = NULL;
	pthread_once(&once, sqlite_global_init);
	pthread_once(&sql_once, sql_index);
	if ((db = calloc(1, sizeof(*db))) == NULL ||
	    (db->path = strdup(path)) == NULL) {
		free(db);
		return error_set(err, "out of memory");
	}
	rc = sqlite3_open_v2(path, &db->h, SQLITE_OPEN_READWRITE |
	    SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		error_set(err, "%s: cannot open database: %s", path,
		    db->h != NULL ? sqlite3_errmsg(db->h) : sqlite3_errstr(rc));
		goto fail;
	}
	/* No lookaside slab per connection (about 120 KiB each, one a thread). */
	sqlite3_db_config(db->h, SQLITE_DBCONFIG_LOOKASIDE, NULL, 0, 0);
	sqlite3_busy_timeout(db->h, BUSY_TIMEOUT_MS);
	sqlite3_extended_result_codes(db->h, 1);
	/* The pragma takes no placeholder: a number from the settings' range. */
	snprintf(cache, sizeof(cache), "PRAGMA cache_size = -%ld",
	    (long)cache_kib);
	if (simple(db, cache) == -1 ||
	    simple(db, "PRAGMA journal_mode = WAL") == -1 ||
	    simple(db, "PRAGMA foreign_keys = ON") == -1 ||
	    simple(db, "PRAGMA synchronous = NORMAL") == -1) {
		error_set(err, "%s: cannot set up the database (permissions?)", path);
		goto fail;
	}
	if (migrate(db, err) == -1)
		goto fail;
	*out = db;
	return 0;
fail:
	db_close(db);
	return -1;
}

void
db_close(struct db *db)
{
	size_t i;

	if (db == NULL)
		return;
	for (i = 0; i < STMT__MAX; i++)
		sqlite3_finalize(db->q[i].st);
	sqlite3_close(db->h);
	free(db->path);
	free(db);
}

static pthread_key_t	thread_key;
static pthread_once_t	thread_once = PTHREAD_ONCE_INIT;

static void
thread_db_free(void *p)
{
	db_close(p);
}

static void
thread_key_init(void)
{
	pthread_key_create(&thread_key, thread_db_free);
}

struct db *
db_thread(const char *path, struct error *err)
{
	struct db *db;

	pthread_once(&thread_once, thread_key_init);
	if ((db = pthread_getspecific(thread_key)) != NULL)
		return db;
	if (db_open(path, &db, err) == -1)
		return NULL;
	pthread_setspecific(thread_key, db);
	return db;
}
