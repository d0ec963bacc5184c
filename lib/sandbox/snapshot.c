/*
 * sandbox/snapshot.c: what the snapshot files share (ids, the folder on
 * the host and its files, removing an image or a helper container) and
 * the rows: usage, listing, deleting; see snapshot.h. Taking is
 * snapshot_take.c, the layer's depth snapshot_flat.c, restoring
 * snapshot_restore.c.
 */
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/snapshot.h"
#include "store/db.h"
#include "store/db_snap.h"

_Static_assert(SNAPSHOT_ID_MAX == DB_SNAP_ID_MAX, "snapshot id sizes");

/* "snap-" and 16 lowercase hex digits. */
bool
snapshot_valid_id(const char *s)
{
	return s != NULL && strlen(s) == 21 && strncmp(s, "snap-", 5) == 0 &&
	    strspn(s + 5, "0123456789abcdef") == 16;
}

/*
 * A file or folder made here takes the owner of the folder it is in, so
 * sandboxctl run as root and the programs run as their user (mod_fcgid's
 * www-data) share what either made. EPERM (not root) is fine: then the
 * maker is that owner already.
 */
int
snapshot_own_like(int fd, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == -1)
		return -1;
	if (fchown(fd, st.st_uid, st.st_gid) == -1 && errno != EPERM)
		return -1;
	return 0;
}

int
snapshot_write(int fd, const char *buf, size_t len, int *errnum)
{
	size_t	off;
	ssize_t	w;

	for (off = 0; off < len; off += (size_t)w)
		if ((w = write(fd, buf + off, len - off)) <= 0) {
			if (w == -1 && errno == EINTR) {
				w = 0;
				continue;
			}
			*errnum = w == 0 ? EIO : errno;
			return -1;
		}
	return 0;
}

int
snapshot_path(const struct config *cfg, const char *name, const char *ext,
    char *out, size_t n)
{
	int w = snprintf(out, n, "%s/%s%s", cfg->snapshot_dir, name, ext);

	return w < 0 || (size_t)w >= n ? -1 : 0;
}

void
snapshot_image_remove(struct sandbox *sb, const char *image)
{
	static const long	 ok[] = { 200, 404, 409, 0 };
	struct error		 e;

	if (sandbox_call(sb, "DELETE", NULL, ok, NULL, "cannot remove a "
	    "snapshot's image", &e, "/images/%s?force=1", image) == -1)
		log_warn("snapshot: %s", e.msg);
}

int
snapshot_usage(struct db *db, struct sandbox *sb, long long *count,
    long long *bytes)
{
	return db_snap_total(db, sb->container, count, bytes);
}

void
snapshot_container_remove(struct sandbox *sb, const char *name)
{
	static const long	 ok[] = { 204, 404, 0 };
	struct error		 e;

	if (sandbox_call(sb, "DELETE", NULL, ok, NULL, "cannot remove a "
	    "container", &e, "/containers/%s?force=1&v=0", name) == -1)
		log_warn("snapshot: %s", e.msg);
}

int
snapshot_helper_create(struct sandbox *sb, const char *name, const char *image,
    const char *volume, const char *what, int flags, struct error *err)
{
	static const char *const cmd[] = { "true", NULL };
	/* Long enough for any one snapshot; a helper left behind ends. */
	static const char *const run[] = { "sleep", "21600", NULL };
	static const long	 ok[] = { 201, 0 };
	struct json_object	*body, *host, *mounts, *m, *labels, *vo;
	int			 rc;

	body = json_object_new_object();
	js_set_str(body, "Image", image);
	if (flags & SNAP_HELPER_RUN) {
		js_set(body, "Entrypoint", sandbox_str_array(run));
		js_set(body, "Cmd", json_object_new_array());
		js_set_str(body, "User", "0");
	} else
		js_set(body, "Cmd", sandbox_str_array(cmd));
	js_set_bool(body, "NetworkDisabled", true);
	labels = json_object_new_object();
	js_set_str(labels, "code-sandbox", what);
	js_set(body, "Labels", labels);
	host = json_object_new_object();
	if (volume != NULL) {
		mounts = json_object_new_array();
		m = json_object_new_object();
		js_set_str(m, "Type", "volume");
		js_set_str(m, "Source", volume);
		js_set_str(m, "Target", "/sandbox");
		js_set_bool(m, "ReadOnly", (flags & SNAP_HELPER_RO) != 0);
		/* The image's own /sandbox is not copied in: only the archive's. */
		vo = json_object_new_object();
		js_set_bool(vo, "NoCopy", true);
		js_set(m, "VolumeOptions", vo);
		json_object_array_add(mounts, m);
		js_set(host, "Mounts", mounts);
	}
	js_set_str(host, "NetworkMode", "none");
	js_set(body, "HostConfig", host);
	snapshot_container_remove(sb, name);
	rc = sandbox_call(sb, "POST", body, ok, NULL, "cannot create a "
	    "snapshot's helper container", err, "/containers/create?name=%s",
	    name) == -1 ? -1 : 0;
	json_object_put(body);
	return rc;
}

int
snapshot_find(struct db *db, struct sandbox *sb, const char *id,
    struct db_snap *s, struct error *err)
{
	enum lookup_result r;

	if (!snapshot_valid_id(id) ||
	    (r = db_snap_get(db, id, sb->container, s)) == LOOKUP_NONE ||
	    (r == LOOKUP_FOUND && s->hidden))
		return error_kind(err, ERR_NOT_FOUND, "No snapshot %.40s of this "
		    "sandbox: snapshots() lists them.", id);
	if (r == LOOKUP_ERROR)
		return error_set(err, "cannot read the snapshots' table");
	return 0;
}

/* --- the restore's lease --- */

int
snapshot_lease_begin(struct db *db, struct snapshot_lease *l, const char *id,
    const char *container, const struct snapshot_who *who)
{
	long long now = (long long)time(NULL);

	memset(l, 0, sizeof(*l));
	l->db = db;
	/* A hold whose process stopped moving it on is marked failed. */
	db_exec(db, STMT_SNAP_RESTORE_LAPSE, "it", now, container);
	switch (db_exec(db, STMT_SNAP_RESTORE_BEGIN, "ttttii", id, container,
	    who->owner, who->client, now, now + SNAPSHOT_LEASE_S)) {
	case 1:
		l->row = db_last_id(db);
		l->renewed_ms = clock_ms();
		return 1;
	case 0:
		return 0;
	default:
		return -1;
	}
}

void
snapshot_lease_renew(struct snapshot_lease *l)
{
	const char *run_id;

	if (l == NULL || l->row == 0)
		return;
	if (clock_ms() - l->renewed_ms >= SNAPSHOT_LEASE_RENEW_MS) {
		if (db_exec(l->db, STMT_SNAP_RESTORE_RENEW, "ii",
		    (long long)time(NULL) + SNAPSHOT_LEASE_S, l->row) == -1)
			log_warn("restore: cannot renew its lease");
		l->renewed_ms = clock_ms();
	}
	if (l->watch == NULL || l->handed ||
	    (run_id = l->watch->tick(l->watch->arg)) == NULL)
		return;
	/* The row names the run before the client hears of it. */
	if (db_exec(l->db, STMT_SNAP_RESTORE_RUN, "ti", run_id, l->row) != 1)
		log_warn("restore: cannot name its run %s", run_id);
	l->handed = true;
	l->watch->answer(l->watch->arg);
}

bool
snapshot_lease_cancelled(struct snapshot_lease *l)
{
	if (l == NULL || l->watch == NULL || l->watch->cancelled == NULL ||
	    !l->handed)
		return false;
	if (!l->cancelled && clock_ms() - l->asked_ms >=
	    SNAPSHOT_CANCEL_ASK_MS) {
		l->asked_ms = clock_ms();
		l->cancelled = l->watch->cancelled(l->watch->arg);
	}
	return l->cancelled;
}

enum snapshot_run
snapshot_run_state(struct db *db, const char *run_id)
{
	char s[8];

	switch (db_get_text(db, STMT_SNAP_RUN_STATE, s, sizeof(s), "ti",
	    run_id, (long long)time(NULL))) {
	case LOOKUP_NONE:
		return SNAPSHOT_RUN_NONE;
	case LOOKUP_FOUND:
		return strcmp(s, "live") == 0 ? SNAPSHOT_RUN_LIVE :
		    SNAPSHOT_RUN_GONE;
	default:
		return SNAPSHOT_RUN_ERROR;
	}
}

void
snapshot_lease_end(struct snapshot_lease *l, bool done, const char *message)
{
	if (l->row == 0)
		return;
	db_exec(l->db, STMT_SNAP_RESTORE_END, "itti", (long long)time(NULL),
	    done ? "done" : "failed", done ? NULL : message, l->row);
	l->row = 0;
}

int
snapshot_restoring(struct db *db, const char *container,
    char id[SNAPSHOT_ID_MAX])
{
	enum lookup_result r;

	id[0] = '\0';
	r = db_get_text(db, STMT_SNAP_RESTORING, id, SNAPSHOT_ID_MAX, "ti",
	    container, (long long)time(NULL));
	return r == LOOKUP_FOUND ? 1 : r == LOOKUP_NONE ? 0 : -1;
}

/* --- listing, deleting --- */

struct json_object *
snapshot_list(struct db *db, struct sandbox *sb)
{
	struct json_object	*a = json_object_new_array(), *o;
	struct db_q		*q;

	if ((q = db_query(db, STMT_SNAP_LIST, "t", sb->container)) == NULL) {
		json_object_put(a);
		return NULL;
	}
	while (db_step(q) == DB_ROW) {
		o = json_object_new_object();
		if (db_row_json(q, o) == -1) {
			json_object_put(o);
			break;
		}
		json_object_array_add(a, o);
	}
	db_done(q);
	return a;
}

/*
 * A snapshot's image, archive and row. The image the container runs from
 * now (its last restore's) stays until a restore moves it to another.
 */
static void
remove_one(const struct config *cfg, struct db *db, struct sandbox *sb,
    const char *id, const char *image)
{
	static const char *const ext[] = { ".tar", ".snar", NULL };
	char	path[4096];
	int	i;

	if (image[0] != '\0' && strcmp(image, sb->image) != 0)
		snapshot_image_remove(sb, image);
	for (i = 0; ext[i] != NULL; i++)
		if (snapshot_path(cfg, id, ext[i], path, sizeof(path)) == 0 &&
		    unlink(path) == -1 && errno != ENOENT)
			log_warn("snapshot %s: %s: %s", id, path,
			    strerror(errno));
	db_exec(db, STMT_SNAP_DELETE, "tt", id, sb->container);
}

/* How many differences build on snapshot id; -1 on error. */
static long long
diffs_of(struct db *db, const char *id)
{
	char n[24];

	return db_get_text(db, STMT_SNAP_DIFFS, n, sizeof(n), "t", id) ==
	    LOOKUP_FOUND ? strtoll(n, NULL, 10) : -1;
}

int
snapshot_delete(const struct config *cfg, struct db *db, struct sandbox *sb,
    const char *id, struct error *err)
{
	struct db_snap		 s, b;
	char			 busy[SNAPSHOT_ID_MAX];

	if (snapshot_find(db, sb, id, &s, err) == -1)
		return -1;
	switch (snapshot_restoring(db, sb->container, busy)) {
	case -1:
		return error_set(err, "cannot read the restores' log");
	case 1:
		if (strcmp(busy, id) == 0)
			return error_kind(err, ERR_CONFLICT, "Snapshot %s is being "
			    "restored now: delete it when the restore is done.",
			    id);
		break;
	}
	/*
	 * A full archive that differences build on stays, hidden, until the
	 * last of them goes; its image (the layer) goes now.
	 */
	if (strcmp(s.form, "full") == 0 && diffs_of(db, id) != 0) {
		if (s.image[0] != '\0' && strcmp(s.image, sb->image) != 0)
			snapshot_image_remove(sb, s.image);
		if (db_exec(db, STMT_SNAP_HIDE, "tt", id, sb->container) != 1)
			return error_set(err, "cannot update the snapshots' "
			    "table");
		log_info("snapshot %s of %s deleted (its /sandbox archive is "
		    "kept while later snapshots build on it)", id,
		    sb->container);
		return 0;
	}
	remove_one(cfg, db, sb, id, s.image);
	log_info("snapshot %s of %s deleted", id, sb->container);
	/* Its base, deleted before, when this was the last to build on it. */
	if (strcmp(s.form, "diff") == 0 && db_snap_get(db, s.base,
	    sb->container, &b) == LOOKUP_FOUND && b.hidden &&
	    diffs_of(db, s.base) == 0) {
		remove_one(cfg, db, sb, s.base, b.image);
		log_info("snapshot %s of %s: its base %s went with it", id,
		    sb->container, s.base);
	}
	return 0;
}

long
snapshot_remove_all(const struct config *cfg, struct db *db,
    struct sandbox *sb, struct error *err)
{
	char		 ids[256][DB_SNAP_ID_MAX], images[256][DB_SNAP_IMAGE_MAX];
	char		 path[4096];
	struct db_q	*q;
	long		 n = 0, i, all = 0;

	do {
		if ((q = db_query(db, STMT_SNAP_IDS, "t", sb->container)) == NULL)
			return error_set(err, "cannot read the snapshots' table");
		for (n = 0; n < 256 && db_snap_ids_next(q, ids[n], images[n]) ==
		    DB_ROW; n++)
			;
		db_done(q);
		for (i = 0; i < n; i++)
			remove_one(cfg, db, sb, ids[i], images[i]);
		all += n;
	} while (n == 256);
	/* The image of the last restore, kept by remove_one, goes too. */
	if (strncmp(sb->image, SANDBOX_SNAP_REPO ":",
	    sizeof(SANDBOX_SNAP_REPO)) == 0)
		snapshot_image_remove(sb, sb->image);
	if (snapshot_path(cfg, sb->container, ".current", path, sizeof(path)) == 0)
		unlink(path);
	return all;
}
