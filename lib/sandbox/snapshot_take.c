/*
 * sandbox/snapshot_take.c: taking a snapshot (snapshot.h): the engine's
 * commit of the container, then /sandbox archived by GNU tar in a helper
 * (snapshot_tar.c; what changed since the volume's full snapshot, when
 * there is one) or, without GNU tar, as the engine's archive; checked by
 * tar_check as it is written to a file of the snapshot folder.
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
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "engine/tar.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/snapshot.h"
#include "store/db.h"
#include "store/db_snap.h"

static int
new_id(char id[SNAPSHOT_ID_MAX], struct error *err)
{
	unsigned char	 r[8];
	size_t		 i;

	if (crypto_random(r, sizeof(r)) == -1)
		return error_set(err, "no random bytes");
	memcpy(id, "snap-", 5);
	for (i = 0; i < sizeof(r); i++)
		snprintf(id + 5 + 2 * i, 3, "%02x", r[i]);
	return 0;
}

/* SANDBOX_SNAPSHOT_DIR, made 0700 when missing, owned as its parent. */
static int
dir_ensure(const struct config *cfg, struct error *err)
{
	struct stat	 st;
	char		 parent[4096], *slash;
	int		 fd;

	if (mkdir(cfg->snapshot_dir, 0700) == 0) {
		snprintf(parent, sizeof(parent), "%s", cfg->snapshot_dir);
		if ((slash = strrchr(parent, '/')) != NULL && slash != parent)
			*slash = '\0';
		else
			snprintf(parent, sizeof(parent), "%s", slash != NULL ?
			    "/" : ".");
		if ((fd = open(cfg->snapshot_dir, O_RDONLY | O_DIRECTORY |
		    O_CLOEXEC)) != -1) {
			if (snapshot_own_like(fd, parent) == -1)
				log_warn("SANDBOX_SNAPSHOT_DIR %s: owner: %s",
				    cfg->snapshot_dir, strerror(errno));
			close(fd);
		}
	} else if (errno != EEXIST)
		return error_set(err, "SANDBOX_SNAPSHOT_DIR %s: %s",
		    cfg->snapshot_dir, strerror(errno));
	if (lstat(cfg->snapshot_dir, &st) == -1 || !S_ISDIR(st.st_mode))
		return error_set(err, "SANDBOX_SNAPSHOT_DIR %s is not a folder",
		    cfg->snapshot_dir);
	return 0;
}

/* --- taking --- */

/* The archive as it arrives: checked, counted, written to the file. */
struct take_out {
	int			 fd;
	struct tar_check	*check;
	struct error		 cerr;
	unsigned long long	 bytes, cap;
	bool			 over, bad, failed;
	int			 errnum;
};

static int
take_body(void *arg, const char *buf, size_t len)
{
	struct take_out	*t = arg;

	if ((t->bytes += len) > t->cap) {
		t->over = true;
		return -1;
	}
	if (tar_check_feed(t->check, buf, len, &t->cerr) == -1) {
		t->bad = true;
		return -1;
	}
	if (snapshot_write(t->fd, buf, len, &t->errnum) == -1) {
		t->failed = true;
		return -1;
	}
	return 0;
}

/* The size of the container's own layer, as the engine counts it. */
static long long
layer_size(struct sandbox *sb, struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*r = NULL;
	long long		 size = 0;

	if (sandbox_call(sb, "GET", NULL, ok, &r, "cannot inspect the "
	    "container", err, "/containers/%s/json?size=1", sb->container) == -1)
		return -1;
	if (js_int(r, "SizeRw", &size) == -1 || size < 0)
		size = 0;
	json_object_put(r);
	return size;
}

/*
 * The snapshot a new one is taken as a difference to: the newest full
 * one of this volume, when the differences taken since are still small
 * (under half of it), so that a difference never costs as much as a new
 * full archive. base gets its id and snar its state file's path; base
 * empty: a full archive.
 */
static int
pick_base(const struct config *cfg, struct db *db, struct sandbox *sb,
    char *base, size_t basesz, char *snar, size_t snarsz)
{
	struct db_snap_newest	 n;
	struct stat		 st;
	const char		*b = NULL;

	base[0] = '\0';
	switch (db_snap_newest(db, sb->container, sb->volume, &n)) {
	case LOOKUP_ERROR:
		return -1;
	case LOOKUP_NONE:
		return 0;
	default:
		break;
	}
	if (strcmp(n.form, "full") == 0)
		b = n.id;
	else if (strcmp(n.form, "diff") == 0 && n.bytes * 2 < n.base_bytes)
		b = n.base;
	if (b == NULL || !snapshot_valid_id(b) ||
	    snapshot_path(cfg, b, ".snar", snar, snarsz) == -1 ||
	    stat(snar, &st) == -1 || !S_ISREG(st.st_mode))
		return 0;
	snprintf(base, basesz, "%s", b);
	return 0;
}

int
snapshot_take(const struct config *cfg, struct db *db, struct sandbox *sb,
    const struct snapshot_who *who, const char *note,
    char id[SNAPSHOT_ID_MAX], struct json_object **info, struct error *err)
{
	static const long	 commit_ok[] = { 201, 0 };
	struct docker_raw_cb	 cb = { NULL, take_body, NULL };
	struct take_out		 t;
	struct json_object	*r = NULL;
	char			 image[SANDBOX_NAME_MAX], part[4096], final[4096];
	char			 busy[SNAPSHOT_ID_MAX], base[SNAPSHOT_ID_MAX];
	char			 url[SANDBOX_NAME_MAX + 64], snar[4096];
	char			 helper[SANDBOX_NAME_MAX];
	const char		*form = "engine";
	struct stat		 st;
	long long		 count, used, layer, started = clock_ms(), took;
	long long		 t_commit = 0, t_helper = 0, t_archive = 0;
	long			 status, entries;
	unsigned long long	 data;
	bool			 stopped, committed = false, part_made = false;
	bool			 gnu = false, helper_up = false, snar_made = false;
	int			 rc = -1;

	memset(&t, 0, sizeof(t));
	t.fd = -1;
	part[0] = '\0';
	base[0] = '\0';
	id[0] = '\0';
	if (info != NULL)
		*info = NULL;
	if (note == NULL)
		note = "";
	if (cfg->snapshot_max == 0)
		return error_kind(err, ERR_DENIED, "Snapshots are turned off on "
		    "this server (SANDBOX_SNAPSHOTS=0).");
	switch (snapshot_restoring(db, sb->container, busy)) {
	case -1:
		return error_set(err, "cannot read the restores' log");
	case 1:
		return error_kind(err, ERR_CONFLICT, "A restore of this sandbox "
		    "(to snapshot %s) is under way: take the snapshot when it "
		    "is done.", busy);
	}
	if (db_snap_total(db, sb->container, &count, &used) == -1)
		return error_set(err, "cannot read the snapshots' table");
	if (count >= cfg->snapshot_max)
		return error_kind(err, ERR_DENIED, "The limit of %ld snapshots "
		    "per sandbox (SANDBOX_SNAPSHOTS) is reached: delete one "
		    "with snapshot_delete(snapshot_id) first (snapshots() lists "
		    "them).", cfg->snapshot_max);
	if (used >= cfg->snapshot_bytes)
		return error_kind(err, ERR_DENIED, "The snapshots of this sandbox "
		    "take %lld bytes, the limit SANDBOX_SNAPSHOT_BYTES (%lld): "
		    "delete one with snapshot_delete(snapshot_id) first.",
		    used, cfg->snapshot_bytes);
	if (dir_ensure(cfg, err) == -1 || new_id(id, err) == -1 ||
	    sandbox_ensure(sb, err) == -1)
		goto out;
	if ((layer = layer_size(sb, err)) == -1)
		goto out;

	/* The layer: the engine's commit, paused only while it commits. */
	snprintf(image, sizeof(image), "%s:%s", SANDBOX_SNAP_REPO, id);
	if (sandbox_call(sb, "POST", NULL, commit_ok, &r, "cannot commit the "
	    "container", err, "/commit?container=%s&repo=%s&tag=%s&pause=1",
	    sb->container, SANDBOX_SNAP_REPO, id) == -1)
		goto out;
	committed = true;
	/* Repeated restores and snapshots: the depth stays bounded. */
	if (snapshot_flatten(cfg, sb, id, image, err) == -1)
		goto out;
	t_commit = clock_ms();

	/* /sandbox: the engine's archive, checked, to a file of our own. */
	if (snapshot_path(cfg, id, ".tar.part", part, sizeof(part)) == -1 ||
	    snapshot_path(cfg, id, ".tar", final, sizeof(final)) == -1) {
		error_set(err, "SANDBOX_SNAPSHOT_DIR: the path is too long");
		goto out;
	}
	if ((t.fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1) {
		error_set(err, "cannot create %s: %s", part, strerror(errno));
		goto out;
	}
	part_made = true;
	if (snapshot_own_like(t.fd, cfg->snapshot_dir) == -1) {
		error_set(err, "cannot own %s: %s", part, strerror(errno));
		goto out;
	}
	if ((t.check = tar_check_new("sandbox")) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	t.cap = (unsigned long long)(cfg->snapshot_bytes - used -
	    (layer < cfg->snapshot_bytes - used ? layer : 0));
	cb.arg = &t;
	/*
	 * GNU tar in a helper: the difference since the base's state when
	 * there is one, else all of /sandbox with its state kept. Without
	 * GNU tar in the image, the engine's archive of all of it.
	 */
	snprintf(helper, sizeof(helper), "%.100s-snap-%s", sb->container,
	    id + 5);
	if (snapshot_tar_helper(sb, helper, sb->volume, true, &gnu, err) == -1)
		goto out;
	t_helper = clock_ms();
	if (gnu) {
		helper_up = true;
		if (pick_base(cfg, db, sb, base, sizeof(base), snar,
		    sizeof(snar)) == -1) {
			error_set(err, "cannot read the snapshots' table");
			goto out;
		}
		form = base[0] != '\0' ? "diff" : "full";
	}
	if (gnu && base[0] != '\0') {
		/* What changed since the base, streamed out of GNU tar. */
		tar_check_incremental(t.check);
		if (snapshot_tar_create(cfg, sb, helper, snar, NULL, take_body,
		    &t, err) == -1)
			goto out;
		status = 200;
		stopped = false;
	} else {
		/*
		 * All of it: GNU tar's state first (a walk that reads no file),
		 * then the engine's archive, the faster way out for all the
		 * data. A file changed between the two is newer than the state,
		 * so the next difference takes it again: never one missed.
		 */
		if (gnu) {
			if (snapshot_path(cfg, id, ".snar", snar,
			    sizeof(snar)) == -1) {
				error_set(err, "SANDBOX_SNAPSHOT_DIR: the path is "
				    "too long");
				goto out;
			}
			snar_made = true;
			if (snapshot_tar_create(cfg, sb, helper, NULL, snar, NULL,
			    NULL, err) == -1)
				goto out;
		}
		snprintf(url, sizeof(url), "/containers/%s/archive?path=/sandbox",
		    sb->container);
		if (docker_raw(sb->docker, "GET", url, &cb, &status, &stopped,
		    err) == -1)
			goto out;
	}
	if (t.over) {
		error_kind(err, ERR_DENIED, "This snapshot would pass the limit "
		    "of SANDBOX_SNAPSHOT_BYTES (%lld bytes for the snapshots of "
		    "a sandbox; %lld in use): delete one with "
		    "snapshot_delete(snapshot_id), or remove files from "
		    "/sandbox.", cfg->snapshot_bytes, used);
		goto out;
	}
	if (t.bad) {
		error_set(err, "/sandbox cannot be kept as it is: %s",
		    t.cerr.msg);
		goto out;
	}
	if (t.failed) {
		error_set(err, "cannot write %s: %s", part,
		    strerror(t.errnum));
		goto out;
	}
	if (stopped || status != 200) {
		error_kind(err, ERR_UPSTREAM, "Docker engine: the archive of "
		    "/sandbox failed (HTTP %ld)", status);
		goto out;
	}
	t_archive = clock_ms();
	if (tar_check_end(t.check, &entries, &data, err) == -1)
		goto out;
	if (fsync(t.fd) == -1 || close(t.fd) == -1) {
		t.fd = -1;
		error_set(err, "cannot write %s: %s", part, strerror(errno));
		goto out;
	}
	t.fd = -1;
	if (rename(part, final) == -1) {
		error_set(err, "cannot rename %s: %s", part, strerror(errno));
		goto out;
	}
	took = clock_ms() - started;
	/* The state kept beside a full archive counts with it. */
	if (snar_made && stat(snar, &st) == 0)
		t.bytes += (unsigned long long)st.st_size;
	if (db_exec(db, STMT_SNAP_INSERT, "tttittiiittt", id, sb->container,
	    who->owner, (long long)time(NULL), note, image, (long long)t.bytes,
	    layer, took, form, base[0] != '\0' ? base : NULL,
	    sb->volume) != 1) {
		unlink(final);
		error_set(err, "cannot record the snapshot");
		goto out;
	}
	log_info("snapshot %s of %s (%s%s%s): %ld entries, %llu bytes of "
	    "/sandbox (%llu of data), layer %lld bytes, %lld ms: the layer "
	    "committed in %lld, the helper ready %lld later, /sandbox "
	    "archived %lld later", id, sb->container, form,
	    base[0] != '\0' ? " of " : "", base, entries, t.bytes, data, layer,
	    took, t_commit - started, t_helper - t_commit,
	    t_archive - t_helper);
	if (info != NULL) {
		*info = json_object_new_object();
		js_set_str(*info, "snapshot_id", id);
		js_set_int(*info, "created", (long long)time(NULL));
		js_set_str(*info, "note", note);
		js_set_int(*info, "sandbox_bytes", (long long)t.bytes);
		js_set_int(*info, "layer_bytes", layer);
		js_set_int(*info, "took_ms", took);
		js_set_str(*info, "kept_as", form);
	}
	rc = 0;
out:
	if (t.fd != -1)
		close(t.fd);
	if (helper_up)
		snapshot_container_remove(sb, helper);
	if (rc == -1) {
		if (part_made)
			unlink(part);
		if (snar_made)
			unlink(snar);
		if (committed)
			snapshot_image_remove(sb, image);
		id[0] = '\0';
	}
	tar_check_free(t.check);
	json_object_put(r);
	return rc;
}
