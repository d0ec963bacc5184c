/*
 * sandbox/snapshot_tar.c: /sandbox's archives in GNU tar's incremental
 * form (sql/027-snapshot-forms.sql), made and extracted by GNU tar in a
 * helper container: the operator's image (SANDBOX_IMAGE, never a
 * snapshot's, whose tar the sandbox could have changed), no network, the
 * volume at /sandbox. The archive's bytes pass through exec streams of the
 * Engine API only, so a remote engine works the same; the server checks
 * them as hostile (tar_check) on the way in and again on the way back.
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
#include "base/log.h"
#include "engine/docker.h"
#include "engine/tar.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"

#define STALL_MS	60000		/* no byte moved this long: stopped */
#define STDERR_KEEP	600		/* of tar's messages, for the error */
#define PIECE		(256 * 1024)	/* an extracted archive, per send */
#define SNAR		"/tmp/code-sandbox.snar"

/* sb, as a handle on the helper container name for exec calls. */
static struct sandbox
on_helper(struct sandbox *sb, const char *name)
{
	struct sandbox h = *sb;

	h.container = (char *)name;
	return h;
}

/* tar's standard error, kept for the message. */
struct errtext {
	char	buf[STDERR_KEEP + 1];
	size_t	len;
};

static void
errtext_add(struct errtext *e, const char *buf, size_t len)
{
	size_t i;

	for (i = 0; i < len && e->len < STDERR_KEEP; i++)
		e->buf[e->len++] = buf[i] == '\n' || (unsigned char)buf[i] <
		    0x20 ? ' ' : buf[i];
	e->buf[e->len] = '\0';
}

int
snapshot_tar_helper(struct sandbox *sb, const char *name, const char *volume,
    bool ro, bool *gnu, struct error *err)
{
	static const char *const version[] = { "tar", "--version", NULL };
	static const long	 ok[] = { 204, 304, 0 };
	struct sandbox		 h = on_helper(sb, name);
	struct small_out	 o;
	int			 code;

	*gnu = false;
	if (snapshot_helper_create(sb, name, sb->cfg->image, volume,
	    "snapshot", ro ? SNAP_HELPER_RUN | SNAP_HELPER_RO :
	    SNAP_HELPER_RUN, err) == -1)
		return -1;
	if (sandbox_call(sb, "POST", NULL, ok, NULL, "cannot start a "
	    "snapshot's helper container", err, "/containers/%s/start",
	    name) == -1 ||
	    sandbox_helper(&h, NULL, version, &o, &code, err) == -1) {
		snapshot_container_remove(sb, name);
		return -1;
	}
	*gnu = code == 0 && strncmp(o.buf, "tar (GNU tar) ", 14) == 0;
	if (!*gnu)
		snapshot_container_remove(sb, name);
	return 0;
}

/* --- making an archive --- */

struct make {
	int		(*out)(void *, const char *, size_t);
	void		*arg;
	struct errtext	 e;
	long long	 moved_ms;
	bool		 refused;	/* out said no */
};

static void
make_output(void *arg, int stream, const char *buf, size_t len)
{
	struct make *m = arg;

	m->moved_ms = clock_ms();
	if (stream == 2)
		errtext_add(&m->e, buf, len);
	else if (!m->refused && m->out != NULL &&
	    m->out(m->arg, buf, len) == -1)
		m->refused = true;
}

static int
make_tick(void *arg)
{
	struct make *m = arg;

	return m->refused || clock_ms() - m->moved_ms >= STALL_MS;
}

/* The host file path (at most SNAR_MAX bytes) into the helper as SNAR. */
static int
snar_put(struct sandbox *sb, const char *helper, const char *path,
    struct error *err)
{
	struct stat	 st;
	char		 url[SANDBOX_NAME_MAX + 64], *buf = NULL;
	long		 hl, status;
	size_t		 len, pad;
	ssize_t		 n;
	int		 fd, rc = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1 ||
	    fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size > SNAPSHOT_SNAR_MAX) {
		error_set(err, "the state of the base snapshot is missing or "
		    "too large on the host (%s)", path);
		goto out;
	}
	pad = tar_padding((unsigned long long)st.st_size);
	if ((buf = calloc(1, TAR_HEADER_MAX + (size_t)st.st_size + pad +
	    2 * TAR_BLOCK)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	if ((hl = tar_header_write(buf, &SNAR[1], '0',
	    (unsigned long long)st.st_size, (long long)time(NULL), 0600)) < 0) {
		error_set(err, "cannot write a tar header");
		goto out;
	}
	len = (size_t)hl;
	for (; len < (size_t)hl + (size_t)st.st_size; len += (size_t)n)
		if ((n = read(fd, buf + len, (size_t)hl + (size_t)st.st_size -
		    len)) <= 0) {
			error_set(err, "cannot read %s", path);
			goto out;
		}
	len += pad + 2 * TAR_BLOCK;
	snprintf(url, sizeof(url), "/containers/%s/archive?path=/", helper);
	if (docker_upload(sb->docker, url, buf, len, &status, err) == -1)
		goto out;
	if (status != 200) {
		error_kind(err, ERR_UPSTREAM, "Docker engine: the base snapshot's "
		    "state could not be put in the helper (HTTP %ld)", status);
		goto out;
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	free(buf);
	return rc;
}

/* The state file written to path, as it comes out of the helper's archive. */
struct snar_out {
	int			 fd;
	unsigned long long	 bytes;
	int			 errnum;
	bool			 bad;
};

static int
snar_begin(void *arg, const struct tar_entry *e)
{
	struct snar_out *s = arg;

	if (e->size > SNAPSHOT_SNAR_MAX) {
		s->bad = true;
		return -1;
	}
	return 0;
}

static int
snar_data(void *arg, const void *buf, size_t len)
{
	struct snar_out *s = arg;

	if ((s->bytes += len) > SNAPSHOT_SNAR_MAX) {
		s->bad = true;
		return -1;
	}
	return snapshot_write(s->fd, buf, len, &s->errnum);
}

struct snar_feed {
	struct tar_extract	*x;
	struct error		 err;
	enum tar_rc		 rc;
};

static int
snar_body(void *arg, const char *buf, size_t len)
{
	struct snar_feed *f = arg;

	f->rc = tar_extract_feed(f->x, buf, len, &f->err);
	return f->rc == TAR_ERROR || f->rc == TAR_STOPPED ? -1 : 0;
}

/* SNAR out of the helper into the host file path (mode 0600). */
static int
snar_get(const struct config *cfg, struct sandbox *sb, const char *helper,
    const char *path, struct error *err)
{
	struct snar_out		 s = { -1, 0, 0, false };
	struct tar_sink		 sink = { snar_begin, snar_data, &s };
	struct snar_feed	 f;
	struct docker_raw_cb	 cb = { NULL, snar_body, &f };
	char			 url[SANDBOX_NAME_MAX + 64], part[4200];
	long			 status;
	bool			 stopped;
	int			 rc = -1;

	memset(&f, 0, sizeof(f));
	snprintf(part, sizeof(part), "%s.part", path);
	if ((f.x = tar_extract_new(strrchr(SNAR, '/') + 1, &sink)) == NULL)
		return error_set(err, "out of memory");
	if ((s.fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
	    O_NOFOLLOW, 0600)) == -1 || snapshot_own_like(s.fd,
	    cfg->snapshot_dir) == -1) {
		error_set(err, "cannot create %s: %s", part, strerror(errno));
		goto out;
	}
	snprintf(url, sizeof(url), "/containers/%s/archive?path=" SNAR, helper);
	if (docker_raw(sb->docker, "GET", url, &cb, &status, &stopped,
	    err) == -1)
		goto out;
	if (status != 200 || s.bad || s.errnum != 0 ||
	    (f.rc != TAR_DONE && tar_extract_end(f.x, &f.err) != TAR_DONE)) {
		error_set(err, "the archive's state could not be kept (HTTP "
		    "%ld%s%s)", status, s.bad ? ", too large" : "",
		    s.errnum != 0 ? ", a write failed" : "");
		goto out;
	}
	if (fsync(s.fd) == -1 || close(s.fd) == -1) {
		s.fd = -1;
		error_set(err, "cannot write %s: %s", part, strerror(errno));
		goto out;
	}
	s.fd = -1;
	if (rename(part, path) == -1) {
		error_set(err, "cannot rename %s: %s", part, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (s.fd != -1)
		close(s.fd);
	if (rc == -1)
		unlink(part);
	tar_extract_free(f.x);
	return rc;
}

int
snapshot_tar_create(const struct config *cfg, struct sandbox *sb,
    const char *helper, const char *base_snar, const char *snar_out,
    int (*out)(void *, const char *, size_t), void *arg, struct error *err)
{
	/* No out: GNU tar reads no file's contents for /dev/null. */
	const char *const tar[] = { "tar", "--create", out != NULL ?
	    "--file=-" : "--file=/dev/null", "--listed-incremental=" SNAR,
	    "--no-check-device", "--numeric-owner", "--directory=/",
	    "sandbox", NULL };
	struct docker_exec_cb	 cb = { make_output, make_tick, NULL };
	struct sandbox		 h = on_helper(sb, helper);
	struct json_object	*cmd;
	struct make		 m;
	char			*id = NULL;
	bool			 stopped = false;
	int			 code = -1, rc = -1;

	memset(&m, 0, sizeof(m));
	m.out = out;
	m.arg = arg;
	m.moved_ms = clock_ms();
	cb.arg = &m;
	if (base_snar != NULL && snar_put(sb, helper, base_snar, err) == -1)
		return -1;
	cmd = sandbox_str_array(tar);
	if (sandbox_exec_create(&h, cmd, EXEC_ENV_NONE, &id, err) == -1 ||
	    docker_exec_start(sb->docker, id, &cb, &stopped, err) == -1)
		goto out;
	if (m.refused) {
		rc = 0;		/* out's own error says why */
		goto out;
	}
	if (stopped) {
		error_kind(err, ERR_TIMEOUT, "archiving /sandbox stalled for "
		    "%d s", STALL_MS / 1000);
		goto out;
	}
	if (sandbox_exec_wait(&h, id, &code, err) == -1)
		goto out;
	/* 1: a file changed as it was read; it is kept as it was read. */
	if (code != 0 && code != 1) {
		error_set(err, "GNU tar could not archive /sandbox (exit %d): "
		    "%s", code, m.e.buf);
		goto out;
	}
	if (code == 1)
		log_info("snapshot of %s: %s", sb->container, m.e.buf);
	if (snar_out != NULL && snar_get(cfg, sb, helper, snar_out, err) == -1)
		goto out;
	rc = 0;
out:
	json_object_put(cmd);
	free(id);
	return rc;
}

/* --- extracting one --- */

static void
ext_frame(void *arg, int stream, const char *buf, size_t len)
{
	if (stream == 2 || stream == 1)
		errtext_add(arg, buf, len);
}

/* What the helper said so far, without waiting. -1 when it has left. */
static int
drain(struct docker_conn *c, struct docker_frames *fr, struct errtext *e,
    int wait_ms)
{
	char	buf[4096];
	long	n;

	while ((n = docker_conn_recv(c, buf, sizeof(buf), wait_ms)) > 0)
		if (docker_frames_feed(fr, buf, (size_t)n, ext_frame, e) == -1)
			return -1;
	return n < 0 ? -1 : 0;
}

int
snapshot_tar_extract(struct sandbox *sb, const char *helper,
    long (*in)(void *, char *, size_t), void *arg, struct error *err)
{
	static const char *const tar[] = { "tar", "--extract", "--file=-",
	    "--listed-incremental=/dev/null", "--numeric-owner",
	    "--same-owner", "--preserve-permissions", "--directory=/", NULL };
	struct sandbox		 h = on_helper(sb, helper);
	struct json_object	*cmd;
	struct docker_conn	*c = NULL;
	struct docker_frames	 fr;
	struct errtext		 e;
	char			*id = NULL, *buf = NULL;
	long long		 until;
	long			 n;
	int			 code = -1, rc = -1;

	memset(&e, 0, sizeof(e));
	docker_frames_init(&fr);
	cmd = sandbox_str_array(tar);
	if ((buf = malloc(PIECE)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	if (sandbox_exec_create(&h, cmd, EXEC_ENV_INPUT, &id, err) == -1 ||
	    docker_exec_attach(sb->docker, id, &c, err) == -1)
		goto out;
	for (;;) {
		if ((n = in(arg, buf, PIECE)) < 0) {
			error_set(err, "stopped");	/* in's own error says why */
			goto out;
		}
		if (n == 0)
			break;
		if (docker_conn_send(c, buf, (size_t)n, clock_ms() + STALL_MS,
		    err) == -1) {
			error_set(err, "GNU tar stopped taking the archive: %s",
			    e.buf[0] != '\0' ? e.buf : err->msg);
			goto out;
		}
		if (drain(c, &fr, &e, 0) == -1)
			break;
	}
	/* Its end: the helper's tar leaves once it has read the end blocks. */
	for (until = clock_ms() + STALL_MS; clock_ms() < until;)
		if (drain(c, &fr, &e, 1000) == -1)
			break;
	if (sandbox_exec_wait(&h, id, &code, err) == -1)
		goto out;
	if (code != 0) {
		error_set(err, "GNU tar could not restore /sandbox (exit %d): %s",
		    code, e.buf);
		goto out;
	}
	rc = 0;
out:
	if (c != NULL)
		docker_conn_close(c);
	json_object_put(cmd);
	free(id);
	free(buf);
	return rc;
}
