/*
 * store/db_links.c: the SQL of the signed download links (share_file, /dl)
 * and upload links (upload_link, /up; sql/003-links.sql, sql/010-uploads.sql)
 * and the readers of their rows.
 */
#include <stdio.h>
#include <string.h>

#include "store/db.h"
#include "store/db_links.h"
#include "store/extern.h"

const struct db_sql db_sql_links[] = {
	{ STMT_LINK_INSERT,
	    "INSERT INTO link (id, path, size, created, expires, client_id, owner, "
	    "archive) VALUES (?, ?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_LINK_GET,
	    "SELECT path, size, created, expires, revoked, owner, archive, "
	    "legacy_key FROM link "
	    "WHERE id = ?" },
	{ STMT_LINK_COUNT,
	    "UPDATE link SET downloads = downloads + 1, last_download = ?1 "
	    "WHERE id = ?2" },
	{ STMT_LINK_REVOKE,
	    "UPDATE link SET revoked = ?1 WHERE id = ?2 AND revoked IS NULL" },
	{ STMT_LINK_PRUNE,
	    "DELETE FROM link WHERE expires < ?" },
	{ STMT_LINK_REVOKE_OWNED,
	    "UPDATE link SET revoked = ?1 WHERE id = ?2 AND owner = ?3 "
	    "AND revoked IS NULL" },
	{ STMT_UPLINK_INSERT,
	    "INSERT INTO upload_link (id, dir, max_bytes, overwrite, created, "
	    "expires, client_id, owner) VALUES (?, ?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_UPLINK_GET,
	    "SELECT dir, max_bytes, used_bytes, overwrite, created, expires, "
	    "revoked, client_id, owner, legacy_key FROM upload_link WHERE id = ?" },
	{ STMT_UPLINK_RESERVE,
	    "UPDATE upload_link SET used_bytes = used_bytes + ?1 WHERE id = ?2 "
	    "AND used_bytes + ?1 <= max_bytes AND revoked IS NULL" },
	{ STMT_UPLINK_RELEASE,
	    "UPDATE upload_link SET used_bytes = max(0, used_bytes - ?1) "
	    "WHERE id = ?2" },
	{ STMT_UPLINK_COUNT,
	    "UPDATE upload_link SET uploads = uploads + 1, last_upload = ?1 "
	    "WHERE id = ?2" },
	{ STMT_UPLINK_REVOKE,
	    "UPDATE upload_link SET revoked = ?1 WHERE id = ?2 AND revoked IS NULL" },
	{ STMT_UPLINK_PRUNE,
	    "DELETE FROM upload_link WHERE expires < ?" },
	{ STMT_UPLOAD_INSERT,
	    "INSERT INTO upload (link_id, client_id, remote_addr, method, name, "
	    "started) VALUES (?, ?, ?, ?, ?, ?)" },
	{ STMT_UPLOAD_FINISH,
	    "UPDATE upload SET finished = ?, state = ?, stored = ?, size = ?, "
	    "message = ? WHERE id = ?" },
	{ STMT_LINK_SECRET_ADD,
	    "INSERT OR IGNORE INTO server_secret (name, value, created) "
	    "VALUES ('links', ?, ?)" },
	{ STMT_LINK_SECRET_GET,
	    "SELECT value FROM server_secret WHERE name = 'links'" },
	{ STMT_PREVIEW_INSERT,
	    "INSERT INTO preview (id, port, path, owner, client_id, created, "
	    "expires) VALUES (?, ?, ?, ?, ?, ?, ?)" },
	{ STMT_PREVIEW_GET,
	    "SELECT port, path, owner, client_id, created, expires, revoked "
	    "FROM preview WHERE id = ?" },
	{ STMT_PREVIEW_REVOKE,
	    "UPDATE preview SET revoked = ?1 WHERE id = ?2 AND revoked IS NULL" },
	{ STMT_PREVIEW_PRUNE,
	    "DELETE FROM preview WHERE expires < ? AND open_now = 0" },
	{ STMT_PREVIEW_OPEN,
	    "UPDATE preview SET open_now = open_now + 1, opens = opens + 1, "
	    "last_open = ?1 WHERE id = ?2 AND (SELECT coalesce(sum(open_now), 0) "
	    "FROM preview WHERE owner = ?3) < ?4" },
	{ STMT_PREVIEW_CLOSE,
	    "UPDATE preview SET open_now = max(0, open_now - 1) WHERE id = ?" },
	{ STMT_PREVIEW_SEEN,
	    "INSERT INTO preview_program (name, seen) VALUES ('preview', ?1) "
	    "ON CONFLICT (name) DO UPDATE SET seen = ?1" },
	{ STMT_PREVIEW_SEEN_GET,
	    "SELECT seen FROM preview_program WHERE name = 'preview'" },
	{ STMT_PREVIEW_RESET,
	    "UPDATE preview SET open_now = 0 WHERE open_now != 0" },
	{ STMT__MAX, NULL }
};

/* An owner column: cut short to fit, DB_OWNER_DEFAULT for NULL. */
static void
owner_col(struct db_q *q, int col, char owner[DB_OWNER_MAX])
{
	const char *s = db_text(q, col);

	snprintf(owner, DB_OWNER_MAX, "%s", s != NULL ? s : DB_OWNER_DEFAULT);
}

enum lookup_result
db_preview_get(struct db *db, const char *id, struct db_preview *p)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	memset(p, 0, sizeof(*p));
	q = db_query(db, STMT_PREVIEW_GET, "t", id);
	/* STMT_PREVIEW_GET: port, path, owner, client_id, created, expires,
	   revoked. */
	if ((rc = db_first_row(q)) != LOOKUP_FOUND)
		goto out;
	if (!db_col_fits(q, 1, p->path, sizeof(p->path)) ||
	    !db_col_fits(q, 3, p->client_id, sizeof(p->client_id))) {
		rc = LOOKUP_NONE;
		goto out;
	}
	p->port = db_int(q, 0);
	owner_col(q, 2, p->owner);
	p->created = db_int(q, 4);
	p->expires = db_int(q, 5);
	p->revoked = !db_null(q, 6);
out:
	db_done(q);
	if (rc != LOOKUP_FOUND)
		memset(p, 0, sizeof(*p));
	return rc;
}

enum lookup_result
db_link_get(struct db *db, const char *id, struct db_link *l)
{
	struct db_q		*q;
	const char		*s;
	enum lookup_result	 rc;

	memset(l, 0, sizeof(*l));
	q = db_query(db, STMT_LINK_GET, "t", id);
	/* STMT_LINK_GET: path, size, created, expires, revoked, owner, archive,
	   legacy_key. */
	if ((rc = db_first_row(q)) != LOOKUP_FOUND)
		goto out;
	if (!db_col_fits(q, 0, l->path, sizeof(l->path))) {
		rc = LOOKUP_NONE;
		goto out;
	}
	l->size = db_int(q, 1);
	l->created = db_int(q, 2);
	l->expires = db_int(q, 3);
	l->revoked = !db_null(q, 4);
	owner_col(q, 5, l->owner);
	if ((s = db_text(q, 6)) != NULL && (strcmp(s, "tar.gz") == 0 ||
	    strcmp(s, "zip") == 0 || strcmp(s, "term") == 0))
		snprintf(l->archive, sizeof(l->archive), "%s", s);
	l->legacy_key = db_int(q, 7) != 0;
out:
	db_done(q);
	if (rc != LOOKUP_FOUND)
		memset(l, 0, sizeof(*l));
	return rc;
}

enum lookup_result
db_uplink_get(struct db *db, const char *id, struct db_uplink *u)
{
	struct db_q		*q;
	enum lookup_result	 rc;

	memset(u, 0, sizeof(*u));
	q = db_query(db, STMT_UPLINK_GET, "t", id);
	/* STMT_UPLINK_GET: dir, max_bytes, used_bytes, overwrite, created,
	   expires, revoked, client_id, owner, legacy_key. */
	if ((rc = db_first_row(q)) != LOOKUP_FOUND)
		goto out;
	if (!db_col_fits(q, 0, u->dir, sizeof(u->dir)) ||
	    !db_col_fits(q, 7, u->client_id, sizeof(u->client_id))) {
		rc = LOOKUP_NONE;
		goto out;
	}
	u->max_bytes = db_int(q, 1);
	u->used_bytes = db_int(q, 2);
	u->overwrite = db_int(q, 3) != 0;
	u->created = db_int(q, 4);
	u->expires = db_int(q, 5);
	u->revoked = !db_null(q, 6);
	owner_col(q, 8, u->owner);
	u->legacy_key = db_int(q, 9) != 0;
out:
	db_done(q);
	if (rc != LOOKUP_FOUND)
		memset(u, 0, sizeof(*u));
	return rc;
}
