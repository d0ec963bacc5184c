/*
 * sandbox/snapshot_restore.c: restoring a snapshot (snapshot.h): the
 * archive read back as hostile into a new volume of the next generation,
 * then the container replaced by one of the snapshot's image with today's
 * settings; until the switch file is written any failure puts the old
 * container back as it was.
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
#include "sandbox/cspec.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/snapshot.h"
#include "store/db.h"
#include "store/db_snap.h"

#define RUN_WAIT_MS	10000	/* after a forced kill, for runs to end */
#define SNAP_STALE_S	3600	/* a snapshot helper this old is a leftover */

/* Does a snapshot row of sb still name image? */
static bool
image_named(struct db *db, struct sandbox *sb, const char *image)
{
	char		 id[DB_SNAP_ID_MAX], img[DB_SNAP_IMAGE_MAX];
	struct db_q	*q;
	bool		 yes = false;

	if ((q = db_query(db, STMT_SNAP_IDS, "t", sb->container)) == NULL)
		return true;	/* not known: kept */
	while (!yes && db_snap_ids_next(q, id, img) == DB_ROW)
		yes = strcmp(img, image) == 0;
	db_done(q);
	return yes;
}

/* The archive file as the PUT body: checked again as it is read. */
struct put_in {
	int			 fd;
	struct tar_check	*check;
	struct snapshot_lease	*lease;	/* moved on as the archive goes */
	struct error		 cerr;
	bool			 bad;
};

static long
put_read(void *arg, char *buf, size_t len)
{
	struct put_in	*p = arg;
	ssize_t		 n;

	snapshot_lease_renew(p->lease);
	if (snapshot_lease_cancelled(p->lease) ||
	    (n = read(p->fd, buf, len)) < 0)
		return -1;
	if (n > 0 && tar_check_feed(p->check, buf, (size_t)n, &p->cerr) == -1) {
		p->bad = true;
		return -1;
	}
	return (long)n;
}

/*
 * The runs of this container that still run: refused, or with force
 * marked with why and killed. 0 when none is left, -1 with err.
 */
static int
runs_stop(struct db *db, struct sandbox *sb, const char *id, bool force,
    struct snapshot_lease *lease, struct error *err)
{
	char		 cid[SANDBOX_IDENT_MAX], started[SANDBOX_IDENT_MAX];
	char		 runs[16][72], why[160], list[400];
	struct db_q	*q;
	struct error	 e;
	long long	 until = clock_ms() + RUN_WAIT_MS;
	int		 n, i;
	size_t		 len;

	if (sandbox_identity(sb, false, cid, started, &e) == -1)
		return e.kind == ERR_NOT_FOUND ? 0 : error_kind(err, e.kind,
		    "%s", e.msg);
	for (;;) {
		snapshot_lease_renew(lease);
		if ((q = db_query(db, STMT_RUN_ACTIVE_IN, "ti", cid,
		    (long long)time(NULL))) == NULL)
			return error_set(err, "cannot read the runs' table");
		for (n = 0; n < 16 && db_snap_run_next(q, runs[n]) == DB_ROW;
		    n++)
			;
		db_done(q);
		if (n == 0)
			return 0;
		if (!force) {
			list[0] = '\0';
			for (i = 0, len = 0; i < n && len < sizeof(list) - 80;
			    i++)
				len += (size_t)snprintf(list + len,
				    sizeof(list) - len, "%s%s", i ? ", " : "",
				    runs[i]);
			return error_kind(err, ERR_CONFLICT, "Commands still run "
			    "in this sandbox (run_id %s): restore refused. Wait "
			    "for them (get_result), or restore with force: true "
			    "to stop them first.", list);
		}
		if (clock_ms() >= until)
			return 0;	/* the container's stop ends them */
		/*
		 * Marked cancelled with the reason: the worker watching each
		 * kills it and answers with why (the cancellation path). A
		 * run no worker watches any more is killed here after a while.
		 */
		snprintf(why, sizeof(why), "Stopped: the sandbox was restored "
		    "to snapshot %s (restore with force).", id);
		for (i = 0; i < n; i++) {
			db_exec(db, STMT_RUN_STOPPED_BY, "tt", why, runs[i]);
			if (clock_ms() >= until - RUN_WAIT_MS / 2 &&
			    sandbox_kill(sb, runs[i], &e) == -1)
				log_warn("restore: kill %s: %s", runs[i], e.msg);
		}
		usleep(300000);
	}
}

static int
container_op(struct sandbox *sb, const char *name, const char *op,
    struct error *err)
{
	static const long ok[] = { 204, 304, 404, 0 };

	return sandbox_call(sb, "POST", NULL, ok, NULL, "cannot change the "
	    "container", err, "/containers/%s/%s", name, op) == -1 ? -1 : 0;
}

static void
volume_remove(struct sandbox *sb, const char *name)
{
	static const long	 ok[] = { 204, 404, 0 };
	struct error		 e;

	if (sandbox_call(sb, "DELETE", NULL, ok, NULL, "cannot remove a "
	    "volume", &e, "/volumes/%s", name) == -1)
		log_warn("restore: %s", e.msg);
}

/* Is name prefix, then rest and 12 lowercase hex digits, and no more? */
static bool
named_after(const char *name, const char *prefix, const char *rest,
    size_t hex)
{
	size_t n = strlen(prefix), r = strlen(rest);

	return strncmp(name, prefix, n) == 0 &&
	    strncmp(name + n, rest, r) == 0 &&
	    strlen(name + n + r) == hex &&
	    strspn(name + n + r, "0123456789abcdef") == hex;
}

/*
 * After a restore that succeeded, what earlier failed ones left of sb's
 * (the lease keeps any other restore of sb away now): its restore helpers
 * and set-aside containers, snapshot helpers over an hour old (a snapshot
 * that began before this restore may still be using a newer one), then
 * its volumes of other generations (containers first: a volume still
 * mounted by a leftover cannot be removed). Names are matched exactly;
 * the engine's lists are read as hostile.
 */
static void
sweep_leftovers(struct sandbox *sb, const char *volume)
{
	static const long	 ok[] = { 200, 0 };
	static const char *const kinds[] = { "-restore-", "-old-", "-snap-" };
	struct json_object	*r, *list, *names, *item, *created;
	struct error		 e;
	char			 base[SANDBOX_NAME_MAX];
	const char		*name;
	size_t			 i, j, n = strlen(volume);

	if (sandbox_call(sb, "GET", NULL, ok, &r, "cannot list containers",
	    &e, "/containers/json?all=1&filters=%%7B%%22name%%22%%3A%%5B%%22"
	    "%s-%%22%%5D%%7D", sb->container) == -1) {
		log_warn("restore: %s", e.msg);
		return;
	}
	for (i = 0; json_object_is_type(r, json_type_array) &&
	    i < json_object_array_length(r) && i < 1000; i++) {
		item = json_object_array_get_idx(r, i);
		names = js_get(item, "Names", json_type_array);
		if (names == NULL || json_object_array_length(names) != 1 ||
		    (name = json_object_get_string(json_object_array_get_idx(
		    names, 0))) == NULL || *name++ != '/')
			continue;
		for (j = 0; j < sizeof(kinds) / sizeof(kinds[0]); j++)
			if (named_after(name, sb->container, kinds[j], 16))
				break;
		if (j == sizeof(kinds) / sizeof(kinds[0]))
			continue;
		if (strcmp(kinds[j], "-snap-") == 0 && ((created = js_get(item,
		    "Created", json_type_int)) == NULL ||
		    json_object_get_int64(created) > (int64_t)time(NULL) -
		    SNAP_STALE_S))
			continue;
		snapshot_container_remove(sb, name);
	}
	json_object_put(r);
	snprintf(base, sizeof(base), "%s", volume);
	if (n > 14 && named_after(volume + n - 14, "", "-s", 12))
		base[n - 14] = '\0';
	if (sandbox_call(sb, "GET", NULL, ok, &r, "cannot list volumes", &e,
	    "/volumes?filters=%%7B%%22name%%22%%3A%%5B%%22%s%%22%%5D%%7D",
	    base) == -1) {
		log_warn("restore: %s", e.msg);
		return;
	}
	if ((list = js_get(r, "Volumes", json_type_array)) != NULL)
		for (i = 0; i < json_object_array_length(list) && i < 1000;
		    i++) {
			name = js_str_max(json_object_array_get_idx(list, i),
			    "Name", SANDBOX_NAME_MAX);
			if (name != NULL && strcmp(name, volume) != 0 &&
			    (strcmp(name, base) == 0 ||
			    named_after(name, base, "-s", 12)))
				volume_remove(sb, name);
		}
	json_object_put(r);
}

/*
 * The archive file of snapshot id, opened: its size must be as recorded
 * (size bytes, a full GNU tar one's state file beside it counted in).
 */
static int
archive_open(const struct config *cfg, const char *id, const char *form,
    long long size, struct error *err)
{
	struct stat	 st, sst;
	char		 path[4096];
	int		 fd;

	if (snapshot_path(cfg, id, ".tar", path, sizeof(path)) == -1 ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return error_kind(err, ERR_NOT_FOUND, "the archive of snapshot "
		    "%s is missing on the host (%s)", id, cfg->snapshot_dir);
	if (strcmp(form, "full") == 0 && snapshot_path(cfg, id, ".snar", path,
	    sizeof(path)) == 0 && stat(path, &sst) == 0)
		size -= (long long)sst.st_size;
	/* The file is as recorded, or it is not used. */
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size != size) {
		close(fd);
		return error_set(err, "the archive of snapshot %s changed on the "
		    "host (%lld bytes, %lld recorded): not used", id,
		    (long long)st.st_size, size);
	}
	return fd;
}

/*
 * The archive of snapshot id (the engine's form: 'engine' or 'full')
 * through the engine's archive PUT into helper's /sandbox, checked again
 * as it goes.
 */
static int
put_archive(const struct config *cfg, struct sandbox *sb, const char *helper,
    const char *id, const char *form, long long size,
    struct snapshot_lease *lease, struct error *err)
{
	struct docker_put_cb	 cb = { put_read, NULL };
	struct put_in		 p;
	struct stat		 st;
	char			 url[SANDBOX_NAME_MAX + 64];
	long			 status, entries;
	unsigned long long	 data;
	bool			 aborted;
	int			 rc = -1;

	memset(&p, 0, sizeof(p));
	p.lease = lease;
	if ((p.fd = archive_open(cfg, id, form, size, err)) == -1)
		return -1;
	if ((p.check = tar_check_new("sandbox")) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	cb.arg = &p;
	snprintf(url, sizeof(url), "/containers/%s/archive?path=/&"
	    "copyUIDGID=1", helper);
	/* Its length: as recorded (archive_open checked it). */
	if (fstat(p.fd, &st) == -1) {
		error_set(err, "the archive of snapshot %s: %s", id,
		    strerror(errno));
		goto out;
	}
	if (docker_put_stream(sb->docker, url, "application/x-tar",
	    (unsigned long long)st.st_size, &cb, &status, &aborted,
	    err) == -1)
		goto out;
	if (p.bad) {
		error_set(err, "%s", p.cerr.msg);
		goto out;
	}
	if (aborted || status != 200) {
		if (!aborted && err->msg[0] != '\0')
			error_kind(err, ERR_UPSTREAM, "Docker engine: restoring "
			    "/sandbox failed: %s", err->msg);
		else
			error_kind(err, ERR_UPSTREAM, "Docker engine: restoring "
			    "/sandbox failed (HTTP %ld)", status);
		goto out;
	}
	if (tar_check_end(p.check, &entries, &data, err) == -1)
		goto out;
	rc = 0;
out:
	close(p.fd);
	tar_check_free(p.check);
	return rc;
}

/* Fill volume with an 'engine' or 'full' snapshot: a stopped helper. */
static int
fill_engine(const struct config *cfg, struct sandbox *sb, const char *id,
    const struct db_snap *s, const char *volume, struct snapshot_lease *lease,
    struct error *err)
{
	char	helper[SANDBOX_NAME_MAX];
	int	rc;

	snprintf(helper, sizeof(helper), "%.100s-restore-%s", sb->container,
	    id + 5);
	if (snapshot_helper_create(sb, helper, s->image, volume, "restore", 0,
	    err) == -1)
		return -1;
	rc = put_archive(cfg, sb, helper, id, s->form, s->archive_bytes, lease,
	    err);
	snapshot_container_remove(sb, helper);
	return rc;
}

/*
 * Fill volume with a 'diff' snapshot, in a helper running GNU tar: its
 * base's full archive through the engine, then the difference.
 */
static int
fill_gnu(const struct config *cfg, struct db *db, struct sandbox *sb,
    const char *id, const struct db_snap *s, const char *volume,
    struct snapshot_lease *lease, struct error *err)
{
	struct db_snap		 b;
	struct put_in		 p;
	char			 helper[SANDBOX_NAME_MAX];
	long			 entries;
	unsigned long long	 data;
	bool			 gnu, up = false;
	int			 rc = -1;

	memset(&p, 0, sizeof(p));
	p.fd = -1;
	p.lease = lease;
	if (db_snap_get(db, s->base, sb->container, &b) != LOOKUP_FOUND ||
	    strcmp(b.form, "full") != 0)
		return error_set(err, "snapshot %s builds on snapshot %s, which "
		    "is missing", id, s->base);
	snprintf(helper, sizeof(helper), "%.100s-restore-%s", sb->container,
	    id + 5);
	if (snapshot_tar_helper(sb, helper, volume, false, &gnu, err) == -1)
		goto out;
	if (!gnu) {
		error_set(err, "snapshot %s is kept by GNU tar, and the sandbox "
		    "image (SANDBOX_IMAGE) has none to restore it", id);
		goto out;
	}
	up = true;
	if (put_archive(cfg, sb, helper, s->base, b.form, b.archive_bytes,
	    lease, err) == -1)
		goto out;
	if ((p.fd = archive_open(cfg, id, s->form, s->archive_bytes,
	    err)) == -1)
		goto out;
	if ((p.check = tar_check_new("sandbox")) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	tar_check_incremental(p.check);
	if (snapshot_tar_extract(sb, helper, put_read, &p, err) == -1) {
		if (p.bad)
			error_set(err, "%s", p.cerr.msg);
		goto out;
	}
	if (tar_check_end(p.check, &entries, &data, err) == -1)
		goto out;
	rc = 0;
out:
	if (p.fd != -1)
		close(p.fd);
	tar_check_free(p.check);
	if (up)
		snapshot_container_remove(sb, helper);
	return rc;
}

/* Fill volume with snapshot id's /sandbox, checking its archives. */
static int
fill_volume(const struct config *cfg, struct db *db, struct sandbox *sb,
    const char *id, const struct db_snap *s, const char *volume,
    struct snapshot_lease *lease, struct error *err)
{
	if (strcmp(s->form, "diff") != 0)
		return fill_engine(cfg, sb, id, s, volume, lease, err);
	return fill_gnu(cfg, db, sb, id, s, volume, lease, err);
}

/* Write the switch file: VOLUME\nIMAGE\n, whole or not at all. */
static int
switch_write(const struct config *cfg, const char *container,
    const char *volume, const char *image, struct error *err)
{
	char	 path[4096], tmp[4200], text[2 * SANDBOX_NAME_MAX + 4];
	int	 fd, n;

	n = snprintf(text, sizeof(text), "%s\n%s\n", volume, image);
	if (snapshot_path(cfg, container, ".current", path, sizeof(path)) == -1 ||
	    snapshot_path(cfg, container, ".current.tmp", tmp, sizeof(tmp)) == -1)
		return error_set(err, "SANDBOX_SNAPSHOT_DIR: path too long");
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return error_set(err, "%s: %s", tmp, strerror(errno));
	if (snapshot_own_like(fd, cfg->snapshot_dir) == -1) {
		close(fd);
		unlink(tmp);
		return error_set(err, "%s: %s", tmp, strerror(errno));
	}
	if (write(fd, text, (size_t)n) != n || fsync(fd) == -1) {
		close(fd);
		unlink(tmp);
		return error_set(err, "%s: %s", tmp, strerror(errno));
	}
	close(fd);
	if (rename(tmp, path) == -1) {
		unlink(tmp);
		return error_set(err, "%s: %s", path, strerror(errno));
	}
	return 0;
}

/* sb's volume, image and spec now name what; the old ones are freed. */
static int
handle_switch(const struct config *cfg, struct sandbox *sb,
    const char *volume, const char *image, struct error *err)
{
	struct cspec	*spec;
	char		*v, *i;

	if (cspec_new(cfg, sb->container, volume, &spec, err) == -1)
		return -1;
	if ((v = strdup(volume)) == NULL || (i = strdup(image)) == NULL) {
		free(v);
		cspec_free(spec);
		return error_set(err, "out of memory");
	}
	free(sb->volume);
	free(sb->image);
	cspec_free(sb->spec);
	sb->volume = v;
	sb->image = i;
	sb->spec = spec;
	return 0;
}

/*
 * The volume of the next generation: the base name (cur without a
 * generation's "-s" and 12 hex digits), "-s", 12 new hex digits.
 */
static int
new_generation(const char *cur, char volume[SANDBOX_NAME_MAX],
    struct error *err)
{
	unsigned char	 r[6];
	size_t		 n = strlen(cur), i;
	char		 hex[13];

	if (n > 14 && cur[n - 14] == '-' && cur[n - 13] == 's' &&
	    strspn(cur + n - 12, "0123456789abcdef") == 12)
		n -= 14;
	if (crypto_random(r, sizeof(r)) == -1)
		return error_set(err, "no random bytes");
	for (i = 0; i < sizeof(r); i++)
		snprintf(hex + 2 * i, 3, "%02x", r[i]);
	snprintf(volume, SANDBOX_NAME_MAX, "%.*s-s%s", (int)(n > 120 ? 120 : n),
	    cur, hex);
	return 0;
}

static void
guard_forget(struct sandbox *sb)
{
	pthread_mutex_lock(&guard_mu);
	guard_slot_reset(guard_slot(sb->container));
	pthread_mutex_unlock(&guard_mu);
}

/* Cancelled by its client (before the switch): -1 with err saying so. */
static int
stop_asked(struct snapshot_lease *lease, struct error *err)
{
	if (!snapshot_lease_cancelled(lease))
		return 0;
	return error_set(err, "cancelled by its client before the switch; the "
	    "sandbox is as it was");
}

int
snapshot_restore(const struct config *cfg, struct db *db, struct sandbox *sb,
    const struct snapshot_who *who, const char *id, bool force,
    const struct snapshot_watch *watch, struct error *err)
{
	static const char *const clean[] = { "rm", "-rf", "/run/code-sandbox",
	    NULL };
	struct db_snap		 s;
	struct small_out	 o;
	struct snapshot_lease	 lease;
	struct error		 e;
	char			 volume[SANDBOX_NAME_MAX], old[SANDBOX_NAME_MAX];
	char			 oldvol[SANDBOX_NAME_MAX];
	char			 oldimg[SANDBOX_NAME_MAX], msg[300];
	long long		 t0 = clock_ms(), t_fill = 0, t_run = 0;
	int			 code, rc = -1;
	bool			 moved = false, made = false, down = false;

	if (snapshot_find(db, sb, id, &s, err) == -1)
		return -1;
	/*
	 * One restore of a sandbox at a time, and no snapshot meanwhile: the
	 * lease of its row in the restores' log, moved on at every step.
	 */
	switch (snapshot_lease_begin(db, &lease, id, sb->container, who)) {
	case 1:
		break;
	case 0:
		return error_kind(err, ERR_CONFLICT, "Another restore of this "
		    "sandbox is under way: try again when it is done.");
	default:
		return error_set(err, "cannot write the restores' log");
	}
	log_info("restore of %s to snapshot %s asked by %s (%s)",
	    sb->container, id, who->owner != NULL ? who->owner : "operator",
	    who->client != NULL ? who->client : "-");
	snprintf(oldvol, sizeof(oldvol), "%s", sb->volume);
	snprintf(oldimg, sizeof(oldimg), "%s", sb->image);
	/* The next generation: the base volume's name, -s, 12 hex digits. */
	if (new_generation(sb->volume, volume, err) == -1)
		goto out;
	snprintf(old, sizeof(old), "%.100s-old-%s", sb->container, id + 5);

	/* Refused at once, before the long part, while commands run. */
	if (!force && runs_stop(db, sb, id, false, &lease, err) == -1)
		goto out;
	/* Past its refusals: from now on the caller may answer early. */
	lease.watch = watch;

	/* 1. The new volume, filled and checked; nothing else touched yet. */
	{
		struct sandbox tmp = *sb;

		tmp.volume = volume;
		if (sandbox_volume_create(&tmp, err) == -1)
			goto out;
	}
	made = true;
	if (fill_volume(cfg, db, sb, id, &s, volume, &lease, err) == -1) {
		stop_asked(&lease, err);	/* why the archive stopped */
		goto out;
	}
	t_fill = clock_ms();
	snapshot_lease_renew(&lease);
	if (stop_asked(&lease, err) == -1)
		goto out;

	/* 2. No command of the sandbox runs (or, forced, none is left). */
	if (runs_stop(db, sb, id, force, &lease, err) == -1)
		goto out;
	snapshot_lease_renew(&lease);
	if (stop_asked(&lease, err) == -1)
		goto out;

	/* 3. The old container stopped and set aside, a new one made. */
	down = true;
	if (container_op(sb, sb->container, "stop?t=0", err) == -1)
		goto out;
	snapshot_container_remove(sb, old);
	{
		char op[SANDBOX_NAME_MAX + 16];

		snprintf(op, sizeof(op), "rename?name=%s", old);
		if (container_op(sb, sb->container, op, err) == -1)
			goto out;
	}
	moved = true;
	snapshot_lease_renew(&lease);
	if (handle_switch(cfg, sb, volume, s.image, err) == -1)
		goto out;
	guard_forget(sb);
	if (sandbox_create_container(sb, err) == -1 ||
	    sandbox_start_container(sb, false, err) == -1)
		goto out;
	snapshot_lease_renew(&lease);
	/* The supervisor and its records of the snapshot's time go. */
	if (sandbox_helper(sb, NULL, clean, &o, &code, &e) == -1)
		log_warn("restore: %s", e.msg);

	/* 4. The switch: from now on every process opens the new ones. */
	if (stop_asked(&lease, err) == -1 ||
	    switch_write(cfg, sb->container, volume, s.image, err) == -1)
		goto out;
	t_run = clock_ms();
	rc = 0;
	moved = made = down = false;
	snapshot_container_remove(sb, old);
	if (strcmp(oldvol, volume) != 0)
		volume_remove(sb, oldvol);
	sweep_leftovers(sb, volume);
	/* The image of the last restore, when its snapshot was deleted since. */
	if (strncmp(oldimg, SANDBOX_SNAP_REPO ":", sizeof(SANDBOX_SNAP_REPO)) ==
	    0 && strcmp(oldimg, s.image) != 0 && !image_named(db, sb, oldimg))
		snapshot_image_remove(sb, oldimg);
	log_info("restored %s to snapshot %s (volume %s): /sandbox filled in "
	    "%lld ms, the new container running %lld ms later, the old one "
	    "gone %lld ms later", sb->container, id, volume, t_fill - t0,
	    t_run - t_fill, clock_ms() - t_run);
out:
	if (moved) {
		/* Put the old container back as it was. */
		char op[SANDBOX_NAME_MAX + 16];

		snapshot_container_remove(sb, sb->container);
		snprintf(op, sizeof(op), "rename?name=%s", sb->container);
		if (container_op(sb, old, op, &e) == -1 ||
		    container_op(sb, sb->container, "start", &e) == -1)
			log_warn("restore: putting the old container back: %s",
			    e.msg);
		if (handle_switch(cfg, sb, oldvol, oldimg, &e) == -1)
			log_warn("restore: %s", e.msg);
		guard_forget(sb);
	} else if (down && container_op(sb, sb->container, "start", &e) == -1)
		log_warn("restore: starting the old container again: %s",
		    e.msg);
	if (made && strcmp(volume, oldvol) != 0)
		volume_remove(sb, volume);
	if (rc == -1)
		snprintf(msg, sizeof(msg), "%.290s", err->msg);
	snapshot_lease_end(&lease, rc == 0, msg);
	return rc;
}
