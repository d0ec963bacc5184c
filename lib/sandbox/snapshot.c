/*
 * sandbox/snapshot.c: snapshots of a sandbox and their restore; see
 * snapshot.h. The engine calls go through sandbox_call (each with the
 * client's absolute deadline) and the archive streams through docker_raw
 * and docker_put_stream (each with its stall deadline); the archive is
 * checked by tar_check as it is written and again as it is read back.
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

_Static_assert(SNAPSHOT_ID_MAX == DB_SNAP_ID_MAX, "snapshot id sizes");

/* "snap-" and 16 lowercase hex digits. */
static bool
valid_id(const char *s)
{
	return s != NULL && strlen(s) == 21 && strncmp(s, "snap-", 5) == 0 &&
	    strspn(s + 5, "0123456789abcdef") == 16;
}

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

/*
 * A file or folder made here takes the owner of the folder it is in, so
 * sandboxctl run as root and the programs run as their user (mod_fcgid's
 * www-data) share what either made. EPERM (not root) is fine: then the
 * maker is that owner already.
 */
static int
own_like(int fd, const char *dir)
{
	struct stat st;

	if (stat(dir, &st) == -1)
		return -1;
	if (fchown(fd, st.st_uid, st.st_gid) == -1 && errno != EPERM)
		return -1;
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
			if (own_like(fd, parent) == -1)
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

static int
file_path(const struct config *cfg, const char *name, const char *ext,
    char *out, size_t n)
{
	int w = snprintf(out, n, "%s/%s%s", cfg->snapshot_dir, name, ext);

	return w < 0 || (size_t)w >= n ? -1 : 0;
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
	size_t		 off;
	ssize_t		 w;

	if ((t->bytes += len) > t->cap) {
		t->over = true;
		return -1;
	}
	if (tar_check_feed(t->check, buf, len, &t->cerr) == -1) {
		t->bad = true;
		return -1;
	}
	for (off = 0; off < len; off += (size_t)w)
		if ((w = write(t->fd, buf + off, len - off)) <= 0) {
			t->failed = true;
			t->errnum = errno;
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

static void	container_remove(struct sandbox *, const char *);
static int	flatten(const struct config *, struct sandbox *, const char *,
		    const char *, struct error *);

static void
image_remove(struct sandbox *sb, const char *image)
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
	char			 url[SANDBOX_NAME_MAX + 64];
	long long		 count, used, layer, started = clock_ms(), took;
	long			 status, entries;
	unsigned long long	 data;
	bool			 stopped, committed = false, part_made = false;
	int			 rc = -1;

	memset(&t, 0, sizeof(t));
	t.fd = -1;
	part[0] = '\0';
	id[0] = '\0';
	if (info != NULL)
		*info = NULL;
	if (note == NULL)
		note = "";
	if (cfg->snapshot_max == 0)
		return error_kind(err, ERR_DENIED, "Snapshots are turned off on "
		    "this server (SANDBOX_SNAPSHOTS=0).");
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
	if (flatten(cfg, sb, id, image, err) == -1)
		goto out;

	/* /sandbox: the engine's archive, checked, to a file of our own. */
	if (file_path(cfg, id, ".tar.part", part, sizeof(part)) == -1 ||
	    file_path(cfg, id, ".tar", final, sizeof(final)) == -1) {
		error_set(err, "SANDBOX_SNAPSHOT_DIR: the path is too long");
		goto out;
	}
	if ((t.fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1) {
		error_set(err, "cannot create %s: %s", part, strerror(errno));
		goto out;
	}
	part_made = true;
	if (own_like(t.fd, cfg->snapshot_dir) == -1) {
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
	snprintf(url, sizeof(url), "/containers/%s/archive?path=/sandbox",
	    sb->container);
	if (docker_raw(sb->docker, "GET", url, &cb, &status, &stopped,
	    err) == -1)
		goto out;
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
	if (db_exec(db, STMT_SNAP_INSERT, "tttittiii", id, sb->container,
	    who->owner, (long long)time(NULL), note, image, (long long)t.bytes,
	    layer, took) != 1) {
		unlink(final);
		error_set(err, "cannot record the snapshot");
		goto out;
	}
	log_info("snapshot %s of %s: %ld entries, %llu bytes of /sandbox "
	    "(%llu of data), layer %lld bytes, %lld ms", id, sb->container,
	    entries, t.bytes, data, layer, took);
	if (info != NULL) {
		*info = json_object_new_object();
		js_set_str(*info, "snapshot_id", id);
		js_set_int(*info, "created", (long long)time(NULL));
		js_set_str(*info, "note", note);
		js_set_int(*info, "sandbox_bytes", (long long)t.bytes);
		js_set_int(*info, "layer_bytes", layer);
		js_set_int(*info, "took_ms", took);
	}
	rc = 0;
out:
	if (t.fd != -1)
		close(t.fd);
	if (rc == -1) {
		if (part_made)
			unlink(part);
		if (committed)
			image_remove(sb, image);
		id[0] = '\0';
	}
	tar_check_free(t.check);
	json_object_put(r);
	return rc;
}

/* --- the layer depth: a snapshot's image flattened past the bound --- */

/* The layers of an image, or -1; *inspect (may be NULL) its answer. */
static long
image_layers(struct sandbox *sb, const char *image, struct json_object **inspect,
    struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*r = NULL, *layers;
	long			 n = -1;

	if (inspect != NULL)
		*inspect = NULL;
	if (sandbox_call(sb, "GET", NULL, ok, &r, "cannot inspect an image",
	    err, "/images/%s/json", image) == -1)
		return -1;
	if ((layers = js_get(js_get(r, "RootFS", json_type_object), "Layers",
	    json_type_array)) != NULL)
		n = (long)json_object_array_length(layers);
	if (n < 0)
		error_kind(err, ERR_UPSTREAM, "the engine gave no layers of %s",
		    image);
	if (inspect != NULL && n >= 0)
		*inspect = r;
	else
		json_object_put(r);
	return n;
}

/* Append s percent-encoded (RFC 3986 unreserved kept) to out. */
static bool
pct_append(char *out, size_t n, size_t *len, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
		    c == '~') {
			if (*len + 1 >= n)
				return false;
			out[(*len)++] = (char)c;
		} else {
			if (*len + 3 >= n)
				return false;
			out[(*len)++] = '%';
			out[(*len)++] = hex[c >> 4];
			out[(*len)++] = hex[c & 15];
		}
	}
	out[*len] = '\0';
	return true;
}

/* "&changes=" and one Dockerfile instruction, KEY "VALUE" quoted. */
static bool
change_append(char *out, size_t n, size_t *len, const char *instr,
    const char *value, bool quote)
{
	char	 line[8192];
	size_t	 l = 0;
	int	 w;

	w = snprintf(line, sizeof(line), "%s ", instr);
	if (w < 0 || (size_t)w >= sizeof(line))
		return false;
	l = (size_t)w;
	if (quote) {
		const char *eq = strchr(value, '=');

		if (eq == NULL || eq == value)
			return true;	/* not KEY=VALUE: left out */
		if (l + (size_t)(eq - value) + 2 >= sizeof(line))
			return false;
		memcpy(line + l, value, (size_t)(eq - value) + 1);
		l += (size_t)(eq - value) + 1;
		line[l++] = '"';
		for (value = eq + 1; *value != '\0'; value++) {
			if (l + 3 >= sizeof(line))
				return false;
			if (*value == '"' || *value == '\\')
				line[l++] = '\\';
			line[l++] = *value;
		}
		line[l++] = '"';
		line[l] = '\0';
	} else if ((size_t)snprintf(line + l, sizeof(line) - l, "%s", value) >=
	    sizeof(line) - l)
		return false;
	if (*len + 9 >= n)
		return false;
	memcpy(out + *len, "&changes=", 9);
	*len += 9;
	return pct_append(out, n, len, line);
}

/* The import's answer: progress lines, or one with "error". */
struct import_out {
	char	buf[65536];
	size_t	len;
};

static int
import_body(void *arg, const char *buf, size_t len)
{
	struct import_out *o = arg;

	if (len > sizeof(o->buf) - 1 - o->len)
		len = sizeof(o->buf) - 1 - o->len;
	memcpy(o->buf + o->len, buf, len);
	o->len += len;
	o->buf[o->len] = '\0';
	return 0;
}

/* The export as it arrives, to the spool file, within a cap. */
static int
spool_body(void *arg, const char *buf, size_t len)
{
	struct take_out	*t = arg;
	size_t		 off;
	ssize_t		 w;

	if ((t->bytes += len) > t->cap) {
		t->over = true;
		return -1;
	}
	for (off = 0; off < len; off += (size_t)w)
		if ((w = write(t->fd, buf + off, len - off)) <= 0) {
			t->failed = true;
			t->errnum = errno;
			return -1;
		}
	return 0;
}

static long
spool_read(void *arg, char *buf, size_t len)
{
	int	*fd = arg;
	ssize_t	 n = read(*fd, buf, len);

	return n < 0 ? -1 : (long)n;
}

/*
 * When image has more layers than the sandbox image's and
 * SANDBOX_SNAPSHOT_DEPTH, make it one layer: the file system of a
 * container of it, exported through the engine to a spool file beside the
 * archives and imported again under the same tag, with the image's Env,
 * User, WorkingDir and Entrypoint. The deep image goes. 0 (also when
 * nothing was needed), or -1 with the deep image left as it was.
 */
static int
flatten(const struct config *cfg, struct sandbox *sb, const char *id,
    const char *image, struct error *err)
{
	static const char *const cmd[] = { "true", NULL };
	static const long	 create_ok[] = { 201, 0 };
	struct json_object	*ins = NULL, *conf, *a, *body, *host;
	struct docker_raw_cb	 cb = { NULL, spool_body, NULL };
	struct docker_raw_cb	 icb = { NULL, import_body, NULL };
	struct docker_put_cb	 pcb = { spool_read, NULL };
	struct import_out	*io = NULL;
	struct take_out		 t;
	struct error		 e;
	char			 helper[SANDBOX_NAME_MAX], spool[4096];
	char			 url[16384], old_id[80];
	const char		*s;
	long			 n, base, status;
	size_t			 len, i;
	bool			 stopped, aborted, made = false;
	int			 rc = -1;

	memset(&t, 0, sizeof(t));
	t.fd = -1;
	spool[0] = '\0';
	if ((base = image_layers(sb, cfg->image, NULL, &e)) == -1)
		base = 0;	/* the setting's image is gone: count from 0 */
	if ((n = image_layers(sb, image, &ins, err)) == -1)
		return -1;
	if (n <= base + cfg->snapshot_depth) {
		json_object_put(ins);
		return 0;
	}
	snprintf(old_id, sizeof(old_id), "%.79s", js_str(ins, "Id") != NULL ?
	    js_str(ins, "Id") : "");
	conf = js_get(ins, "Config", json_type_object);

	/* The import's URL: the tag and the configuration kept. */
	len = (size_t)snprintf(url, sizeof(url), "/images/create?fromSrc=-&"
	    "repo=%s&tag=%s", SANDBOX_SNAP_REPO, id);
	if ((a = js_get(conf, "Env", json_type_array)) != NULL)
		for (i = 0; i < json_object_array_length(a) && i < 256; i++) {
			s = json_object_get_string(json_object_array_get_idx(a,
			    i));
			if (s != NULL && !change_append(url, sizeof(url), &len,
			    "ENV", s, true))
				goto toolong;
		}
	if ((s = js_str(conf, "User")) != NULL && *s != '\0' &&
	    !change_append(url, sizeof(url), &len, "USER", s, false))
		goto toolong;
	if ((s = js_str(conf, "WorkingDir")) != NULL && *s != '\0' &&
	    !change_append(url, sizeof(url), &len, "WORKDIR", s, false))
		goto toolong;
	if ((a = js_get(conf, "Entrypoint", json_type_array)) != NULL &&
	    !change_append(url, sizeof(url), &len, "ENTRYPOINT",
	    json_object_to_json_string_ext(a, JSON_C_TO_STRING_PLAIN |
	    JSON_C_TO_STRING_NOSLASHESCAPE), false))
		goto toolong;

	/* A stopped container of the deep image, exported. */
	snprintf(helper, sizeof(helper), "%.100s-flat-%s", sb->container,
	    id + 5);
	body = json_object_new_object();
	js_set_str(body, "Image", image);
	js_set(body, "Cmd", sandbox_str_array(cmd));
	js_set_bool(body, "NetworkDisabled", true);
	host = json_object_new_object();
	js_set_str(host, "NetworkMode", "none");
	js_set(body, "HostConfig", host);
	container_remove(sb, helper);
	if (sandbox_call(sb, "POST", body, create_ok, NULL, "cannot create the "
	    "flattening's helper container", err, "/containers/create?name=%s",
	    helper) == -1) {
		json_object_put(body);
		goto out;
	}
	json_object_put(body);
	made = true;
	if (file_path(cfg, id, ".layer.part", spool, sizeof(spool)) == -1 ||
	    (t.fd = open(spool, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1) {
		error_set(err, "cannot create the spool file of the layer: %s",
		    strerror(errno));
		spool[0] = '\0';
		goto out;
	}
	t.cap = (unsigned long long)cfg->snapshot_bytes;
	cb.arg = &t;
	{
		char path[SANDBOX_NAME_MAX + 32];

		snprintf(path, sizeof(path), "/containers/%s/export", helper);
		if (docker_raw(sb->docker, "GET", path, &cb, &status, &stopped,
		    err) == -1)
			goto out;
	}
	if (t.over || t.failed || stopped || status != 200) {
		error_set(err, "exporting the container's file system failed%s",
		    t.over ? ": larger than SANDBOX_SNAPSHOT_BYTES" : "");
		goto out;
	}
	if (lseek(t.fd, 0, SEEK_SET) == -1) {
		error_set(err, "spool file: %s", strerror(errno));
		goto out;
	}
	if ((io = calloc(1, sizeof(*io))) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	pcb.arg = &t.fd;
	icb.arg = io;
	if (docker_post_stream(sb->docker, url, "application/x-tar", t.bytes,
	    &pcb, &icb, &status, &aborted, err) == -1)
		goto out;
	if (aborted || status != 200 || strstr(io->buf, "\"error\"") != NULL) {
		error_kind(err, ERR_UPSTREAM, "importing the flattened layer "
		    "failed (HTTP %ld): %.200s", status, io->buf);
		goto out;
	}
	/* The deep image lost its tag to the flat one: it goes. */
	if (old_id[0] != '\0')
		image_remove(sb, old_id);
	log_info("snapshot %s: its image had %ld layers (the sandbox image "
	    "%ld, SANDBOX_SNAPSHOT_DEPTH %ld): flattened to one, %llu bytes "
	    "through the server", id, n, base, cfg->snapshot_depth, t.bytes);
	rc = 0;
	goto out;
toolong:
	error_set(err, "the image's configuration is too long to flatten");
out:
	if (t.fd != -1)
		close(t.fd);
	if (spool[0] != '\0')
		unlink(spool);
	if (made)
		container_remove(sb, helper);
	free(io);
	json_object_put(ins);
	return rc;
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

/*
 * A snapshot's image, archive and row. The image the container runs from
 * now (its last restore's) stays until a restore moves it to another.
 */
static void
remove_one(const struct config *cfg, struct db *db, struct sandbox *sb,
    const char *id, const char *image)
{
	char path[4096];

	if (strcmp(image, sb->image) != 0)
		image_remove(sb, image);
	if (file_path(cfg, id, ".tar", path, sizeof(path)) == 0 &&
	    unlink(path) == -1 && errno != ENOENT)
		log_warn("snapshot %s: %s: %s", id, path, strerror(errno));
	db_exec(db, STMT_SNAP_DELETE, "tt", id, sb->container);
}

int
snapshot_delete(const struct config *cfg, struct db *db, struct sandbox *sb,
    const char *id, struct error *err)
{
	struct db_snap		 s;
	enum lookup_result	 r;

	if (!valid_id(id) ||
	    (r = db_snap_get(db, id, sb->container, &s)) == LOOKUP_NONE)
		return error_kind(err, ERR_NOT_FOUND, "No snapshot %.40s of this "
		    "sandbox: snapshots() lists them.", id);
	if (r == LOOKUP_ERROR)
		return error_set(err, "cannot read the snapshots' table");
	remove_one(cfg, db, sb, id, s.image);
	log_info("snapshot %s of %s deleted", id, sb->container);
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
		image_remove(sb, sb->image);
	if (file_path(cfg, sb->container, ".current", path, sizeof(path)) == 0)
		unlink(path);
	return all;
}

/* --- restoring --- */

/* The archive file as the PUT body: checked again as it is read. */
struct put_in {
	int			 fd;
	struct tar_check	*check;
	struct error		 cerr;
	bool			 bad;
};

static long
put_read(void *arg, char *buf, size_t len)
{
	struct put_in	*p = arg;
	ssize_t		 n;

	if ((n = read(p->fd, buf, len)) < 0)
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
    struct error *err)
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
container_remove(struct sandbox *sb, const char *name)
{
	static const long	 ok[] = { 204, 404, 0 };
	struct error		 e;

	if (sandbox_call(sb, "DELETE", NULL, ok, NULL, "cannot remove a "
	    "container", &e, "/containers/%s?force=1&v=0", name) == -1)
		log_warn("restore: %s", e.msg);
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

/*
 * A stopped helper container of image with volume at /sandbox and no
 * network, to fill the volume through the archive API.
 */
static int
helper_create(struct sandbox *sb, const char *name, const char *image,
    const char *volume, struct error *err)
{
	static const char *const cmd[] = { "true", NULL };
	static const long	 ok[] = { 201, 0 };
	struct json_object	*body, *host, *mounts, *m, *labels;
	int			 rc;

	body = json_object_new_object();
	js_set_str(body, "Image", image);
	js_set(body, "Cmd", sandbox_str_array(cmd));
	js_set_bool(body, "NetworkDisabled", true);
	labels = json_object_new_object();
	js_set_str(labels, "code-sandbox", "restore");
	js_set(body, "Labels", labels);
	host = json_object_new_object();
	mounts = json_object_new_array();
	m = json_object_new_object();
	js_set_str(m, "Type", "volume");
	js_set_str(m, "Source", volume);
	js_set_str(m, "Target", "/sandbox");
	/* The image's own /sandbox is not copied in: only the archive's. */
	{
		struct json_object *vo = json_object_new_object();

		js_set_bool(vo, "NoCopy", true);
		js_set(m, "VolumeOptions", vo);
	}
	json_object_array_add(mounts, m);
	js_set(host, "Mounts", mounts);
	js_set_str(host, "NetworkMode", "none");
	js_set(body, "HostConfig", host);
	rc = sandbox_call(sb, "POST", body, ok, NULL, "cannot create the "
	    "restore's helper container", err, "/containers/create?name=%s",
	    name) == -1 ? -1 : 0;
	json_object_put(body);
	return rc;
}

/* Fill volume from the archive at path (size bytes), checking it. */
static int
fill_volume(const struct config *cfg, struct sandbox *sb, const char *id,
    const char *image, const char *volume, long long size, struct error *err)
{
	struct docker_put_cb	 cb = { put_read, NULL };
	struct put_in		 p;
	struct stat		 st;
	char			 path[4096], helper[SANDBOX_NAME_MAX];
	char			 url[SANDBOX_NAME_MAX + 64];
	long			 status, entries;
	unsigned long long	 data;
	bool			 aborted;
	int			 rc = -1;

	memset(&p, 0, sizeof(p));
	p.fd = -1;
	snprintf(helper, sizeof(helper), "%.100s-restore-%s", sb->container,
	    id + 5);
	if (file_path(cfg, id, ".tar", path, sizeof(path)) == -1 ||
	    (p.fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1) {
		error_kind(err, ERR_NOT_FOUND, "the archive of snapshot %s is "
		    "missing on the host (%s)", id, cfg->snapshot_dir);
		goto out;
	}
	/* The file is as recorded, or it is not used. */
	if (fstat(p.fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size != size) {
		error_set(err, "the archive of snapshot %s changed on the host "
		    "(%lld bytes, %lld recorded): not used", id,
		    (long long)st.st_size, size);
		goto out;
	}
	if ((p.check = tar_check_new("sandbox")) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	container_remove(sb, helper);
	if (helper_create(sb, helper, image, volume, err) == -1)
		goto out;
	cb.arg = &p;
	snprintf(url, sizeof(url), "/containers/%s/archive?path=/&"
	    "copyUIDGID=1", helper);
	if (docker_put_stream(sb->docker, url, "application/x-tar",
	    (unsigned long long)size, &cb, &status, &aborted, err) == -1)
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
	if (p.fd != -1)
		close(p.fd);
	tar_check_free(p.check);
	container_remove(sb, helper);
	return rc;
}

/* Write the switch file: VOLUME\nIMAGE\n, whole or not at all. */
static int
switch_write(const struct config *cfg, const char *container,
    const char *volume, const char *image, struct error *err)
{
	char	 path[4096], tmp[4200], text[2 * SANDBOX_NAME_MAX + 4];
	int	 fd, n;

	n = snprintf(text, sizeof(text), "%s\n%s\n", volume, image);
	if (file_path(cfg, container, ".current", path, sizeof(path)) == -1 ||
	    file_path(cfg, container, ".current.tmp", tmp, sizeof(tmp)) == -1)
		return error_set(err, "SANDBOX_SNAPSHOT_DIR: path too long");
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1)
		return error_set(err, "%s: %s", tmp, strerror(errno));
	if (own_like(fd, cfg->snapshot_dir) == -1) {
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

int
snapshot_restore(const struct config *cfg, struct db *db, struct sandbox *sb,
    const struct snapshot_who *who, const char *id, bool force,
    struct error *err)
{
	static const char *const clean[] = { "rm", "-rf", "/run/code-sandbox",
	    NULL };
	struct db_snap		 s;
	struct small_out	 o;
	struct error		 e;
	enum lookup_result	 r;
	char			 volume[SANDBOX_NAME_MAX], old[SANDBOX_NAME_MAX];
	char			 oldvol[SANDBOX_NAME_MAX];
	char			 oldimg[SANDBOX_NAME_MAX], msg[300];
	long long		 log_id = 0, t0 = clock_ms(), t_fill = 0, t_run = 0;
	int			 code, rc = -1;
	bool			 moved = false, made = false, down = false;

	if (!valid_id(id) ||
	    (r = db_snap_get(db, id, sb->container, &s)) == LOOKUP_NONE)
		return error_kind(err, ERR_NOT_FOUND, "No snapshot %.40s of this "
		    "sandbox: snapshots() lists them.", id);
	if (r == LOOKUP_ERROR)
		return error_set(err, "cannot read the snapshots' table");
	/* One restore of a sandbox at a time (a row that is "running"). */
	switch (db_exec(db, STMT_SNAP_RESTORE_BEGIN, "tttti", id, sb->container,
	    who->owner, who->client, (long long)time(NULL))) {
	case 1:
		log_id = db_last_id(db);
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
	if (!force && runs_stop(db, sb, id, false, err) == -1)
		goto out;

	/* 1. The new volume, filled and checked; nothing else touched yet. */
	{
		struct sandbox tmp = *sb;

		tmp.volume = volume;
		if (sandbox_volume_create(&tmp, err) == -1)
			goto out;
	}
	made = true;
	if (fill_volume(cfg, sb, id, s.image, volume, s.archive_bytes,
	    err) == -1)
		goto out;
	t_fill = clock_ms();

	/* 2. No command of the sandbox runs (or, forced, none is left). */
	if (runs_stop(db, sb, id, force, err) == -1)
		goto out;

	/* 3. The old container stopped and set aside, a new one made. */
	down = true;
	if (container_op(sb, sb->container, "stop?t=0", err) == -1)
		goto out;
	container_remove(sb, old);
	{
		char op[SANDBOX_NAME_MAX + 16];

		snprintf(op, sizeof(op), "rename?name=%s", old);
		if (container_op(sb, sb->container, op, err) == -1)
			goto out;
	}
	moved = true;
	if (handle_switch(cfg, sb, volume, s.image, err) == -1)
		goto out;
	guard_forget(sb);
	if (sandbox_create_container(sb, err) == -1 ||
	    sandbox_start_container(sb, false, err) == -1)
		goto out;
	/* The supervisor and its records of the snapshot's time go. */
	if (sandbox_helper(sb, NULL, clean, &o, &code, &e) == -1)
		log_warn("restore: %s", e.msg);

	/* 4. The switch: from now on every process opens the new ones. */
	if (switch_write(cfg, sb->container, volume, s.image, err) == -1)
		goto out;
	t_run = clock_ms();
	rc = 0;
	moved = made = down = false;
	container_remove(sb, old);
	if (strcmp(oldvol, volume) != 0)
		volume_remove(sb, oldvol);
	/* The image of the last restore, when its snapshot was deleted since. */
	if (strncmp(oldimg, SANDBOX_SNAP_REPO ":", sizeof(SANDBOX_SNAP_REPO)) ==
	    0 && strcmp(oldimg, s.image) != 0 && !image_named(db, sb, oldimg))
		image_remove(sb, oldimg);
	log_info("restored %s to snapshot %s (volume %s): /sandbox filled in "
	    "%lld ms, the new container running %lld ms later, the old one "
	    "gone %lld ms later", sb->container, id, volume, t_fill - t0,
	    t_run - t_fill, clock_ms() - t_run);
out:
	if (moved) {
		/* Put the old container back as it was. */
		char op[SANDBOX_NAME_MAX + 16];

		container_remove(sb, sb->container);
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
	if (log_id != 0)
		db_exec(db, STMT_SNAP_RESTORE_END, "itti", (long long)time(NULL),
		    rc == 0 ? "done" : "failed", rc == 0 ? NULL : msg, log_id);
	return rc;
}
