/*
 * files.c: see files.h.
 *
 * The archive's format (engine/tar.h) and the engine's callbacks
 * (engine/docker.h) stop here: files_stream hands the sink a struct
 * file_entry made from the tar header, files_put wraps the caller's bytes
 * in the tar stream the engine extracts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/crypto.h"
#include "base/form.h"
#include "base/js.h"
#include "engine/docker.h"
#include "engine/tar.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"

/* Go's os.FileMode type bits, which the engine's stat carries. */
#define GO_MODE_DIR		(1u << 31)
#define GO_MODE_SYMLINK		(1u << 27)
#define GO_MODE_DEVICE		(1u << 26)
#define GO_MODE_NAMED_PIPE	(1u << 25)
#define GO_MODE_SOCKET		(1u << 24)
#define GO_MODE_CHAR_DEVICE	(1u << 21)
#define GO_MODE_IRREGULAR	(1u << 19)

#define STAT_HEADER		"X-Docker-Container-Path-Stat:"
#define STAT_HEADER_MAX		(16 * 1024)	/* base64 of name + linkTarget + ... */

/* "/containers/<container>/archive?path=<path>", percent-encoded. */
static char *
archive_path(const char *container, const char *path)
{
	char	 c[3 * 256 + 1], *p, *url = NULL;
	size_t	 n;

	if (strlen(path) > FILES_PATH_MAX ||
	    form_encode(container, c, sizeof(c)) < 0)
		return NULL;
	n = 3 * strlen(path) + 1;
	if ((p = malloc(n)) == NULL)
		return NULL;
	if (form_encode(path, p, n) >= 0) {
		n = strlen(c) + strlen(p) + 40;
		if ((url = malloc(n)) != NULL)
			snprintf(url, n, "/containers/%s/archive?path=%s", c, p);
	}
	free(p);
	return url;
}

int
files_parse_time(const char *s, long long *out)
{
	struct tm	 tm;
	const char	*p = s;
	long long	 t;
	int		 v[6], i, off = 0;
	static const int width[6] = { 4, 2, 2, 2, 2, 2 };
	static const char sep[6] = { '-', '-', 'T', ':', ':', '\0' };

	for (i = 0; i < 6; i++) {
		int j;

		v[i] = 0;
		for (j = 0; j < width[i]; j++, p++) {
			if (*p < '0' || *p > '9')
				return -1;
			v[i] = v[i] * 10 + (*p - '0');
		}
		if (sep[i] != '\0') {
			if (*p != sep[i] && !(sep[i] == 'T' && *p == 't'))
				return -1;
			p++;
		}
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -1;
		for (i = 0; *p >= '0' && *p <= '9'; p++)
			if (++i > 9)
				return -1;
	}
	if (*p == 'Z' || *p == 'z')
		p++;
	else if ((*p == '+' || *p == '-') && p[1] >= '0' && p[1] <= '9' &&
	    p[2] >= '0' && p[2] <= '9' && p[3] == ':' && p[4] >= '0' &&
	    p[4] <= '9' && p[5] >= '0' && p[5] <= '9') {
		off = ((p[1] - '0') * 10 + (p[2] - '0')) * 3600 +
		    ((p[4] - '0') * 10 + (p[5] - '0')) * 60;
		if (*p == '-')
			off = -off;
		p += 6;
	} else
		return -1;
	if (*p != '\0' || v[1] < 1 || v[1] > 12 || v[2] < 1 || v[2] > 31 ||
	    v[3] > 23 || v[4] > 59 || v[5] > 60)
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = v[0] - 1900;
	tm.tm_mon = v[1] - 1;
	tm.tm_mday = v[2];
	tm.tm_hour = v[3];
	tm.tm_min = v[4];
	tm.tm_sec = v[5];
	t = (long long)timegm(&tm);
	*out = t - off;
	return 0;
}

/* HEAD: keep the stat header's value. */
struct stat_ctx {
	char	*value;		/* as sent, malloc'd */
	size_t	 len;
	bool	 too_big;
};

static int
stat_header(void *arg, const char *line, size_t len)
{
	struct stat_ctx	*s = arg;
	size_t		 n = sizeof(STAT_HEADER) - 1;

	if (len < n || strncasecmp(line, STAT_HEADER, n) != 0)
		return 0;
	line += n;
	len -= n;
	/* Room for the blanks and line end around the largest value. */
	if (len > STAT_HEADER_MAX + 64) {
		s->too_big = true;
		return 0;
	}
	free(s->value);
	if ((s->value = malloc(len + 1)) == NULL)
		return -1;
	memcpy(s->value, line, len);
	s->value[len] = '\0';
	s->len = len;
	return 0;
}

int
files_stat_parse(const char *value, size_t len, struct file_stat *st)
{
	struct json_object	*obj = NULL;
	struct error		 perr;
	char			*json = NULL;
	const char		*mtime, *target;
	long long		 v;
	long			 jlen;
	int			 rc = -1;

	memset(st, 0, sizeof(*st));
	while (len > 0 && (*value == ' ' || *value == '\t'))
		value++, len--;
	while (len > 0 && (value[len - 1] == '\r' || value[len - 1] == '\n' ||
	    value[len - 1] == ' ' || value[len - 1] == '\t'))
		len--;
	if (len == 0 || len > STAT_HEADER_MAX ||
	    (json = malloc(len + 1)) == NULL ||
	    (jlen = crypto_b64_decode(value, len, json, len)) < 0 ||
	    (obj = js_parse(json, (size_t)jlen, 4, &perr)) == NULL ||
	    js_int(obj, "size", &v) == -1 || v < 0)
		goto out;
	st->size = (unsigned long long)v;
	if (js_int(obj, "mode", &v) == -1 || v < 0 || v > UINT32_MAX)
		goto out;
	st->mode = (uint32_t)v;
	if ((mtime = js_str(obj, "mtime")) == NULL ||
	    files_parse_time(mtime, &st->mtime) == -1)
		st->mtime = 0;
	if (st->mode & GO_MODE_DIR)
		st->kind = FILE_DIRECTORY;
	else if (st->mode & GO_MODE_SYMLINK)
		st->kind = FILE_SYMLINK;
	else if (st->mode & (GO_MODE_DEVICE | GO_MODE_NAMED_PIPE |
	    GO_MODE_SOCKET | GO_MODE_CHAR_DEVICE | GO_MODE_IRREGULAR))
		st->kind = FILE_OTHER;
	else
		st->kind = FILE_REGULAR;
	if ((target = js_str_max(obj, "linkTarget", FILES_PATH_MAX)) != NULL)
		memcpy(st->link_target, target, strlen(target) + 1);
	rc = 0;
out:
	json_object_put(obj);
	free(json);
	return rc;
}

int
files_stat(struct sandbox *sb, const char *path,
    struct file_stat *st, struct error *err)
{
	struct docker_raw_cb	 cb = { stat_header, NULL, NULL };
	struct stat_ctx		 s = { NULL, 0, false };
	char			*url = NULL;
	long			 status;
	bool			 stopped;
	int			 rc = -1;

	memset(st, 0, sizeof(*st));
	cb.arg = &s;
	if ((url = archive_path(sandbox_container(sb), path)) == NULL) {
		error_kind(err, ERR_NOT_FOUND, "the path is too long");
		goto out;
	}
	if (docker_raw(sandbox_docker(sb), "HEAD", url, &cb, &status, &stopped, err) == -1)
		goto out;
	if (stopped) {
		error_kind(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (status == 404) {
		error_kind(err, ERR_NOT_FOUND, "no such file");
		goto out;
	}
	if (status == 500) {
		/* HEAD has no body to say why: a link loop is the usual cause. */
		error_kind(err, ERR_INTERNAL, "the Docker engine cannot resolve the "
		    "path (a symbolic link loop?)");
		goto out;
	}
	if (status != 200 || s.value == NULL || s.too_big) {
		error_kind(err, ERR_UPSTREAM, "Docker engine: unexpected answer to a "
		    "file stat (HTTP %ld)", status);
		goto out;
	}
	if (files_stat_parse(s.value, s.len, st) == -1) {
		error_kind(err, ERR_UPSTREAM, "Docker engine: malformed file stat");
		goto out;
	}
	rc = 0;
out:
	free(s.value);
	free(url);
	return rc;
}

/* GET: feed the tar stream to the extractor, its entry to the sink. */
struct stream_ctx {
	struct tar_extract	*tar;
	enum tar_rc		 rc;
	struct error		 terr;
	const struct file_sink	*sink;
};

static int
stream_begin(void *arg, const struct tar_entry *e)
{
	struct stream_ctx	*s = arg;
	struct file_entry	 fe = { e->name, e->size, e->mtime };

	return s->sink->begin(s->sink->arg, &fe);
}

static int
stream_data(void *arg, const void *buf, size_t len)
{
	struct stream_ctx *s = arg;

	return s->sink->data(s->sink->arg, buf, len);
}

static int
stream_body(void *arg, const char *buf, size_t len)
{
	struct stream_ctx *s = arg;

	s->rc = tar_extract_feed(s->tar, buf, len, &s->terr);
	/* Done, or stopped, or broken: no need for the rest of the stream. */
	return s->rc == TAR_MORE ? 0 : -1;
}

enum stream_end
files_stream(struct sandbox *sb, const char *path,
    const struct file_sink *sink, struct error *err)
{
	struct docker_raw_cb	 cb = { NULL, stream_body, NULL };
	struct tar_sink		 ts = { stream_begin, stream_data, NULL };
	struct stream_ctx	 s;
	char			*url = NULL;
	long			 status;
	bool			 stopped;
	enum stream_end		 rc = STREAM_FAILED;

	memset(&s, 0, sizeof(s));
	cb.arg = &s;
	ts.arg = &s;
	s.sink = sink;
	s.rc = TAR_MORE;
	if ((url = archive_path(sandbox_container(sb), path)) == NULL) {
		error_kind(err, ERR_NOT_FOUND, "the path is too long");
		goto out;
	}
	if ((s.tar = tar_extract_new(files_basename(path), &ts)) == NULL) {
		error_kind(err, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (docker_raw(sandbox_docker(sb), "GET", url, &cb, &status, &stopped, err) == -1)
		goto out;
	if (status == 404) {
		error_kind(err, ERR_NOT_FOUND, "no such file");
		goto out;
	}
	if (status != 200) {
		error_kind(err, ERR_UPSTREAM, "Docker engine: unexpected answer to an "
		    "archive request (HTTP %ld)", status);
		goto out;
	}
	if (!stopped)
		s.rc = tar_extract_end(s.tar, &s.terr);
	switch (s.rc) {
	case TAR_DONE:
		rc = STREAM_DONE;
		break;
	case TAR_STOPPED:
		rc = STREAM_STOPPED;
		break;
	case TAR_NOT_FOUND:
		error_kind(err, ERR_NOT_FOUND, "no such file");
		break;
	case TAR_MORE:
		/* The connection broke mid-stream, between our callbacks. */
		error_kind(err, ERR_UPSTREAM, "the archive stream was cut short");
		break;
	case TAR_ERROR:
		/* A directory or special file is "not found" as a file. */
		if (strncmp(s.terr.msg, "the path is", 11) == 0)
			error_kind(err, ERR_NOT_FOUND, "%s", s.terr.msg);
		else
			error_kind(err, ERR_UPSTREAM, "Docker engine: %s", s.terr.msg);
		break;
	}
out:
	tar_extract_free(s.tar);
	free(url);
	return rc;
}

/*
 * PUT: the archive files_put sends, made as the engine takes it: the
 * folder's and the file's headers, the file's bytes from the source, then
 * the padding of its last block and the two zero blocks that end a tar.
 */
struct put_ctx {
	const struct file_source	*src;
	char				 hdr[2 * TAR_HEADER_MAX];
	size_t				 hlen, hoff;
	unsigned long long		 size;
	unsigned long long		 done;	/* data bytes passed on */
	size_t				 tail, toff;
};

static long
put_read(void *arg, char *buf, size_t len)
{
	struct put_ctx	*p = arg;
	size_t		 n;
	long		 got;

	if (p->hoff < p->hlen) {
		n = p->hlen - p->hoff < len ? p->hlen - p->hoff : len;
		memcpy(buf, p->hdr + p->hoff, n);
		p->hoff += n;
		return (long)n;
	}
	if (p->done < p->size) {
		n = p->size - p->done < len ? (size_t)(p->size - p->done) : len;
		if ((got = p->src->read(p->src->arg, buf, n)) > 0)
			p->done += (unsigned long long)got;
		return got;
	}
	if (p->toff < p->tail) {
		n = p->tail - p->toff < len ? p->tail - p->toff : len;
		memset(buf, 0, n);
		p->toff += n;
		return (long)n;
	}
	return 0;
}

int
files_put(struct sandbox *sb, const char *dir, const char *folder,
    const char *name, unsigned long long size, const struct file_source *src,
    long *status, bool *aborted, struct error *err)
{
	struct put_ctx		 p;
	struct docker_put_cb	 cb = { put_read, &p };
	char			 entry[TAR_WRITE_NAME_MAX + 2], *url;
	long			 h1, h2;
	int			 rc;

	*status = 0;
	*aborted = false;
	memset(&p, 0, sizeof(p));
	p.src = src;
	p.size = size;
	/* The folder, then the file in it. */
	if ((size_t)snprintf(entry, sizeof(entry), "%s/", folder) >= sizeof(entry))
		entry[0] = '\0';	/* refused below */
	h1 = tar_header_write(p.hdr, entry, '5', 0, (long long)time(NULL), 0700);
	if ((size_t)snprintf(entry, sizeof(entry), "%s/%s", folder, name) >=
	    sizeof(entry))
		entry[0] = '\0';
	h2 = h1 < 0 ? -1 : tar_header_write(p.hdr + h1, entry, '0', size,
	    (long long)time(NULL), 0644);
	if (h2 < 0)
		return error_kind(err, ERR_INTERNAL, "cannot make a tar header");
	p.hlen = (size_t)(h1 + h2);
	p.tail = tar_padding(size) + 2 * TAR_BLOCK;
	if ((url = archive_path(sandbox_container(sb), dir)) == NULL)
		return error_kind(err, ERR_INTERNAL, "the folder name is too long");
	rc = docker_put_stream(sandbox_docker(sb), url, "application/x-tar",
	    (unsigned long long)p.hlen + size + p.tail, &cb, status, aborted,
	    err);
	free(url);
	return rc;
}

const char *
files_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s != NULL ? s + 1 : path;
}
