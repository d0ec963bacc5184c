/*
 * sandbox/snapshot_flat.c: a snapshot's image kept to a bounded depth of
 * layers (SANDBOX_SNAPSHOT_DEPTH), flattened through the engine's export
 * and import; see snapshot_flatten in extern.h.
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

#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"

/* The export as it arrives: counted, written to the spool file. */
struct spool_out {
	int			 fd;
	unsigned long long	 bytes, cap;
	bool			 over, failed;
	int			 errnum;
};

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
	struct spool_out	*t = arg;

	if ((t->bytes += len) > t->cap) {
		t->over = true;
		return -1;
	}
	if (snapshot_write(t->fd, buf, len, &t->errnum) == -1) {
		t->failed = true;
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
int
snapshot_flatten(const struct config *cfg, struct sandbox *sb, const char *id,
    const char *image, struct error *err)
{
	struct json_object	*ins = NULL, *conf, *a;
	struct docker_raw_cb	 cb = { NULL, spool_body, NULL };
	struct docker_raw_cb	 icb = { NULL, import_body, NULL };
	struct docker_put_cb	 pcb = { spool_read, NULL };
	struct import_out	*io = NULL;
	struct spool_out	 t;
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
	if (snapshot_helper_create(sb, helper, image, NULL, "flatten", 0,
	    err) == -1)
		goto out;
	made = true;
	if (snapshot_path(cfg, id, ".layer.part", spool, sizeof(spool)) == -1 ||
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
		snapshot_image_remove(sb, old_id);
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
		snapshot_container_remove(sb, helper);
	free(io);
	json_object_put(ins);
	return rc;
}
