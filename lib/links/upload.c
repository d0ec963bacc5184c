/*
 * upload.c: the /up endpoint; see upload.h for the requests and the way a
 * file is stored.
 *
 * Order of work for a request, so that nothing reaches Docker unless the
 * link is good and the bytes fit:
 *   1. method (GET, POST, PUT; else 405);
 *   2. the link, from the URL and the database (uplinks_check);
 *   3. the size: a known Content-Length is reserved against the link's cap
 *      at once (413 before reading); an unknown one is spooled to disk up
 *      to what is left, then reserved;
 *   4. the container (sandbox_ensure), the hidden folder, the file put
 *      into it as the engine takes it (files_put), the rename into place.
 * Memory stays constant: the body passes through a fixed buffer (the
 * engine client's upload piece) or a spool file, never a heap copy of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/form.h"
#include "base/log.h"
#include "http/http.h"
#include "links/extern.h"
#include "links/multipart.h"
#include "links/uplinks.h"
#include "links/upload.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "sandbox/scripts.h"
#include "store/db.h"

#define SCRIPT_DEADLINE_S	60	/* mkdir, rename, clean-up in the container */
#define SPOOL_CHUNK		(64 * 1024)

/* One request being served. */
struct up {
	struct http_req		*r;
	const struct config	*cfg;
	struct db		*db;
	struct uplink_row	 row;
	struct uplink_url	 url;
	struct sandbox		*sb;	/* the owner's: the one door to the engine */
	const char		*method;
	char			 remote[64];
};

/* One file to store: its bytes come from the request or a spool file. */
struct src {
	struct http_req		*r;		/* or NULL: from f */
	FILE			*f;
	unsigned long long	 size;
	unsigned long long	 done;		/* data bytes passed on */
	bool			 short_body;	/* the body ended early */
};

/* Names. */

long
upload_name(const char *in, size_t len, bool percent, char *out,
    struct error *err)
{
	unsigned char	 b[UPLOAD_NAME_MAX * 3 + 4];
	size_t		 n = 0, i = 0, o = 0, k, need;
	unsigned	 c, cp;
	int		 d;

	/* Decode all of it (strict); keep what can fit anyway. */
	while (i < len) {
		if (!percent)
			d = (unsigned char)in[i++];
		else if ((d = form_decode_char(in, len, &i, false)) < 0)
			return error_kind(err, ERR_INVALID, "The file name has a '%%' "
			    "that is not followed by two hexadecimal digits "
			    "(write a %% sign as %%25).");
		if (d == 0)
			return error_kind(err, ERR_INVALID, "The file name holds a "
			    "NUL byte%s.", percent ? " (%00)" : "");
		if (n < sizeof(b))
			b[n++] = (unsigned char)d;
	}
	for (i = 0; i < n;) {
		c = b[i];
		need = 0;
		if (c >= 0x80) {
			/* A whole valid UTF-8 sequence, or '_' for this byte. */
			if (c >= 0xc2 && c <= 0xdf)
				need = 1, cp = c & 0x1f;
			else if (c >= 0xe0 && c <= 0xef)
				need = 2, cp = c & 0x0f;
			else if (c >= 0xf0 && c <= 0xf4)
				need = 3, cp = c & 0x07;
			else
				cp = 0, need = 9;
			for (k = 1; need != 9 && k <= need; k++) {
				if (i + k >= n || (b[i + k] & 0xc0) != 0x80) {
					need = 9;
					break;
				}
				cp = cp << 6 | (b[i + k] & 0x3f);
			}
			if (need != 9 && ((need == 2 && cp < 0x800) ||
			    (need == 3 && cp < 0x10000) || cp > 0x10ffff ||
			    (cp >= 0xd800 && cp <= 0xdfff)))
				need = 9;
			if (need == 9) {
				if (o + 1 > UPLOAD_NAME_MAX)
					break;
				out[o++] = '_';
				i++;
				continue;
			}
			if (o + need + 1 > UPLOAD_NAME_MAX)
				break;
			memcpy(out + o, b + i, need + 1);
			o += need + 1;
			i += need + 1;
			continue;
		}
		if (o + 1 > UPLOAD_NAME_MAX)
			break;
		if (c < 0x20 || c == 0x7f || c == '/' || c == '\\')
			c = '_';
		out[o++] = (char)c;
		i++;
	}
	if (o > 0 && out[0] == '.')
		out[0] = '_';
	if (o == 0) {
		memcpy(out, "upload", 6);
		o = 6;
	}
	out[o] = '\0';
	return (long)o;
}

/* Audit (sql/010-uploads.sql). */

static long long
audit_begin(struct up *u, const char *sent_name, size_t len)
{
	char esc[256 * 4 + 1];

	log_escape(esc, sizeof(esc), sent_name, len > 255 ? 255 : len);
	if (db_exec(u->db, STMT_UPLOAD_INSERT, "ttttti", u->row.id, u->row.client_id, u->remote, u->method, esc,
	    (long long)time(NULL)) != 1)
		return 0;
	return db_last_id(u->db);
}

static void
audit_end(struct up *u, long long id, const char *state, const char *stored,
    long long size, const char *message)
{
	if (id > 0)
		db_exec(u->db, STMT_UPLOAD_FINISH, "ittiti", (long long)time(NULL),
		    state, stored, size, message, id);
}

/* The container. */

struct deadline {
	time_t end;
};

static bool
past_deadline(void *arg)
{
	const struct deadline *d = arg;

	return http_stopping() || time(NULL) >= d->end;
}

static int
script(struct up *u, const char *text, const char *const args[], char *out,
    size_t outsz, struct error *err)
{
	struct deadline	d = { time(NULL) + SCRIPT_DEADLINE_S };
	int		code;

	if (sandbox_script(u->sb, text, args, out, outsz, past_deadline, &d,
	    SCRIPT_DEADLINE_S, &code, err) == -1)
		return -1;
	if (code != 0)
		return error_kind(err, ERR_INTERNAL, "script exited with %d", code);
	return 0;
}


/* The file's bytes as files_put asks for them (never past s->size). */
static long
src_read(void *arg, char *buf, size_t len)
{
	struct src	*s = arg;
	long		 got;

	if (s->r != NULL)
		got = http_read(s->r, buf, len);
	else
		got = (long)fread(buf, 1, len, s->f);
	if (got <= 0 || http_stopping()) {
		s->short_body = true;
		return -1;	/* cut: the engine gets a short tar */
	}
	s->done += (unsigned long long)got;
	return got;
}

/*
 * Store one file of s->size bytes as name in the link's folder. Returns 0
 * with the stored path in stored; 1 when the body was cut (nothing is
 * left); -1 with err (status 500, 502 or 503).
 */
static int
store(struct up *u, const char *name, struct src *s, char *stored,
    size_t storedsz, struct error *err)
{
	char		 tmp[8 + 24], final[UPLOAD_NAME_MAX + 16];
	const char	*args[5];
	struct file_source src = { src_read, s };
	struct error	 e2;
	long		 status;
	bool		 aborted;
	int		 ret = -1;

	memcpy(tmp, ".cs-up-", 7);
	if (crypto_token(tmp + 7, sizeof(tmp) - 7, 12) == -1)
		return error_kind(err, ERR_INTERNAL, "no randomness");
	args[0] = u->row.dir;
	args[1] = NULL;
	if (script(u, SCRIPT_UPLOAD_PREPARE, args, final, sizeof(final), err) == -1) {
		/* The script ran and failed: the folder cannot be made there. */
		if (err->kind == ERR_INTERNAL)
			error_kind(err, ERR_CONFLICT, "The folder %s cannot be made in "
			    "the sandbox (a file of that name?).", u->row.dir);
		return -1;
	}

	/*
	 * The hidden folder with the file in it, through the owner's sandbox
	 * handle: the one door to the engine.
	 */
	if (files_put(u->sb, u->row.dir, tmp, name, s->size, &src, &status,
	    &aborted, err) == -1)
		goto discard;
	if (aborted) {
		ret = 1;
		goto discard;
	}
	if (status < 200 || status > 299) {
		err->kind = status == 404 ? ERR_UNAVAILABLE : ERR_UPSTREAM;
		goto discard;
	}
	args[1] = tmp;
	args[2] = name;
	args[3] = u->row.overwrite ? "1" : "0";
	args[4] = NULL;
	if (script(u, SCRIPT_UPLOAD_FINISH, args, final, sizeof(final), err) == -1) {
		err->kind = ERR_INTERNAL;
		goto discard;
	}
	if (final[0] == '\0' || strchr(final, '/') != NULL) {
		error_kind(err, ERR_INTERNAL, "the file could not be named");
		goto discard;
	}
	if ((size_t)snprintf(stored, storedsz, "%s%s%s", u->row.dir,
	    strcmp(u->row.dir, "/") == 0 ? "" : "/", final) >= storedsz)
		stored[storedsz - 1] = '\0';	/* only the message is cut */
	return 0;
discard:
	args[1] = tmp;
	args[2] = NULL;
	error_clear(&e2);
	if (script(u, SCRIPT_UPLOAD_DISCARD, args, final, sizeof(final), &e2) == -1)
		log_warn("up: cannot remove %s/%s: %s", u->row.dir, tmp, e2.msg);
	return ret;
}

/* The engine, once per request that stores something. */
static int
open_engine(struct up *u, struct error *err)
{
	/* Claimed: counted against the cap and idle-stopped (sandboxes.h). */
	if (u->sb == NULL && (sandboxes_open(u->cfg, u->db, u->row.owner, &u->sb,
	    err) == -1 ||
	    sandbox_ensure(u->sb, err) == -1)) {
		sandbox_close(u->sb);
		u->sb = NULL;
		return error_kind(err, ERR_UNAVAILABLE, "%s", err->msg);
	}
	return 0;
}

/* A spool file: unnamed, so nothing is left behind whatever happens. */
static FILE *
spool_open(const struct config *cfg)
{
	char	 path[4200];
	int	 fd;
	FILE	*f;

	fd = open(cfg->spool_dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd == -1) {
		snprintf(path, sizeof(path), "%s/cs-up-XXXXXX", cfg->spool_dir);
		if ((fd = mkostemp(path, O_CLOEXEC)) == -1)
			return NULL;
		unlink(path);
	}
	if ((f = fdopen(fd, "w+")) == NULL)
		close(fd);
	return f;
}

static void
answer_error(struct up *u, const struct error *err)
{
	switch (err->kind) {
	case ERR_TOO_LARGE:
	case ERR_INVALID:
	case ERR_CONFLICT:
	case ERR_GONE:
		http_send_error(u->r, error_http_status(err->kind), err->msg);
		break;
	case ERR_UNAVAILABLE:
		log_warn("up: %s", err->msg);
		http_send_error(u->r, 503, "The sandbox cannot be reached now; "
		    "try again later.");
		break;
	default:
		log_warn("up: link %s: %s", u->row.id, err->msg);
		http_send_error(u->r, error_http_status(err->kind) >= 500 ?
		    error_http_status(err->kind) : 500,
		    "The file could not be stored.");
		break;
	}
}

/* PUT: one file. */

/*
 * A body of unknown length (chunked) into a spool file, s->f, within what
 * the link has left; s->size counts it. 0, rewound to its start, or -1.
 */
static int
spool_body(struct up *u, struct src *s, long long left, struct error *err)
{
	char	buf[SPOOL_CHUNK];
	long	n;

	if ((s->f = spool_open(u->cfg)) == NULL)
		return error_kind(err, ERR_INTERNAL, "cannot open a spool file in "
		    "%s: %s", u->cfg->spool_dir, strerror(errno));
	while ((n = http_read(u->r, buf, sizeof(buf))) > 0) {
		if ((long long)(s->size + (unsigned long long)n) > left)
			return error_kind(err, ERR_TOO_LARGE, "The file is larger "
			    "than this link accepts (%lld bytes left).", left);
		if (fwrite(buf, 1, (size_t)n, s->f) != (size_t)n)
			return error_kind(err, ERR_INTERNAL, "cannot spool: %s",
			    strerror(errno));
		s->size += (unsigned long long)n;
	}
	if (fflush(s->f) != 0 || fseeko(s->f, 0, SEEK_SET) != 0)
		return error_kind(err, ERR_INTERNAL, "cannot spool: %s",
		    strerror(errno));
	return 0;
}

static void
do_put(struct up *u)
{
	struct src		 s;
	struct error		 err;
	unsigned long long	 len;
	char			 name[UPLOAD_NAME_MAX + 1], stored[LINK_PATH_MAX + 64];
	char			 msg[LINK_PATH_MAX + 160];
	long long		 audit, left;
	enum http_length	 cl;
	int			 rc;
	bool			 reserved = false;

	memset(&s, 0, sizeof(s));
	error_clear(&err);
	if (u->url.name_len == 0) {
		http_send_error(u->r, 400, "Put the file's name after the link: "
		    "curl -T FILE LINK/NAME");
		return;
	}
	audit = audit_begin(u, u->url.name, u->url.name_len);
	left = u->row.max_bytes - u->row.used_bytes;
	if (upload_name(u->url.name, u->url.name_len, true, name, &err) == -1)
		goto fail;

	if ((cl = http_content_length(u->r, &len)) == HTTP_LENGTH_MALFORMED) {
		error_kind(&err, ERR_INVALID, "The Content-Length is malformed.");
		goto fail;
	}
	if (cl == HTTP_LENGTH_KNOWN) {
		s.r = u->r;
		s.size = len;
	} else if (spool_body(u, &s, left, &err) == -1)
		goto fail;
	if ((rc = uplinks_reserve(u->db, u->row.id, (long long)s.size)) !=
	    UPLINKS_RESERVED) {
		if (rc == UPLINKS_NO_ROOM)
			error_kind(&err, ERR_TOO_LARGE, "The file (%llu bytes) is larger "
			    "than this link accepts (%lld bytes left).", s.size,
			    left < 0 ? 0 : left);
		else
			error_kind(&err, ERR_INTERNAL, "cannot reserve the bytes");
		goto fail;
	}
	reserved = true;
	if (open_engine(u, &err) == -1)
		goto fail;
	rc = store(u, name, &s, stored, sizeof(stored), &err);
	if (rc != 0) {
		uplinks_release(u->db, u->row.id, (long long)s.size);
		reserved = false;
		if (rc == 1) {
			audit_end(u, audit, "interrupted", NULL, (long long)s.done,
			    "the body ended early");
			if (!http_stopping())
				http_send_error(u->r, 400, "The body ended before "
				    "Content-Length bytes; nothing was stored.");
			goto out;
		}
		goto fail;
	}
	uplinks_count(u->db, u->row.id);
	audit_end(u, audit, "ok", stored, (long long)s.size, NULL);
	log_info("up: link %s stored %llu bytes", u->row.id, s.size);
	snprintf(msg, sizeof(msg), "Stored %s (%llu bytes).\n", stored, s.size);
	http_header_add(u->r, "Cache-Control", "no-store");
	http_send(u->r, 201, "text/plain; charset=utf-8", msg, strlen(msg));
	goto out;
fail:
	if (reserved)
		uplinks_release(u->db, u->row.id, (long long)s.size);
	audit_end(u, audit, err.kind == ERR_TOO_LARGE || err.kind == ERR_INVALID ||
	    err.kind == ERR_CONFLICT ? "refused" : "failed", NULL, (long long)s.size,
	    err.msg);
	answer_error(u, &err);
out:
	if (s.f != NULL)
		fclose(s.f);
}

/* POST: the page's form. */

struct spooled {
	char			 name[UPLOAD_NAME_MAX + 1];
	char			 sent[MULTIPART_PARAM_MAX + 1];
	FILE			*f;
	unsigned long long	 size;
	long long		 audit;
	char			 stored[LINK_PATH_MAX + 64];
	bool			 ok;
};

struct form_state {
	struct up		*u;
	struct spooled		 files[UPLOAD_FILES_MAX];
	struct upload_result	 res[UPLOAD_FILES_MAX];
	size_t			 nfiles;
	struct spooled		*cur;		/* the file part being read */
	unsigned long long	 total;
	long long		 left;
	struct error		 err;
};

static int
part_begin(void *arg, const struct multipart_part *p)
{
	struct form_state	*fs = arg;
	struct spooled		*sp;

	fs->cur = NULL;
	if (!p->has_filename || p->filename[0] == '\0')
		return 0;		/* not a file, or no file chosen */
	if (fs->nfiles == UPLOAD_FILES_MAX) {
		error_kind(&fs->err, ERR_TOO_LARGE, "At most %d files at once.",
		    UPLOAD_FILES_MAX);
		return -1;
	}
	sp = &fs->files[fs->nfiles];
	memset(sp, 0, sizeof(*sp));
	snprintf(sp->sent, sizeof(sp->sent), "%s", p->filename);
	if (upload_name(p->filename, strlen(p->filename), false, sp->name,
	    &fs->err) == -1)
		return -1;
	if ((sp->f = spool_open(fs->u->cfg)) == NULL) {
		error_kind(&fs->err, ERR_INTERNAL, "cannot open a spool file in %s: %s",
		    fs->u->cfg->spool_dir, strerror(errno));
		return -1;
	}
	fs->nfiles++;
	fs->cur = sp;
	return 0;
}

static int
part_data(void *arg, const char *buf, size_t len)
{
	struct form_state *fs = arg;

	if (fs->cur == NULL)
		return 0;
	if ((long long)(fs->total + len) > fs->left) {
		error_kind(&fs->err, ERR_TOO_LARGE, "The files are larger than this link "
		    "accepts (%lld bytes left).", fs->left < 0 ? 0 : fs->left);
		return -1;
	}
	if (fwrite(buf, 1, len, fs->cur->f) != len) {
		error_kind(&fs->err, ERR_INTERNAL, "cannot spool: %s", strerror(errno));
		return -1;
	}
	fs->cur->size += len;
	fs->total += len;
	return 0;
}

static int
part_end(void *arg)
{
	struct form_state *fs = arg;

	fs->cur = NULL;
	return 0;
}

/*
 * Read the form's body into fs, spooling its files (part_begin). 0, or -1
 * when the answer was sent: not a form, malformed, too large.
 */
static int
read_form(struct up *u, struct form_state *fs)
{
	struct multipart	*mp = NULL;
	struct multipart_cb	 cb = { part_begin, part_data, part_end, NULL };
	char			 boundary[MULTIPART_BOUNDARY_MAX + 1], buf[SPOOL_CHUNK];
	enum multipart_rc	 rc = MULTIPART_MORE;
	size_t			 i;
	long			 n;
	int			 ret = -1;

	cb.arg = fs;
	if (multipart_boundary(http_param(u->r, "CONTENT_TYPE"), boundary) == -1) {
		http_send_error(u->r, 415, "Send the page's form "
		    "(multipart/form-data), or PUT one file to LINK/NAME.");
		goto out;
	}
	if ((mp = multipart_new(boundary, &cb)) == NULL) {
		http_send_error(u->r, 500, "Out of memory.");
		goto out;
	}
	while (rc == MULTIPART_MORE && (n = http_read(u->r, buf, sizeof(buf))) > 0)
		rc = multipart_feed(mp, buf, (size_t)n, &fs->err);
	if (rc == MULTIPART_MORE)
		rc = multipart_end(mp, &fs->err);
	if (rc != MULTIPART_DONE) {
		if (fs->err.kind == ERR_NONE)
			error_kind(&fs->err, ERR_INVALID, "The form data is malformed.");
		for (i = 0; i < fs->nfiles; i++) {
			fs->files[i].audit = audit_begin(u, fs->files[i].sent,
			    strlen(fs->files[i].sent));
			audit_end(u, fs->files[i].audit, fs->err.kind == ERR_TOO_LARGE ||
			    fs->err.kind == ERR_INVALID ? "refused" : "failed", NULL,
			    (long long)fs->files[i].size, fs->err.msg);
		}
		answer_error(u, &fs->err);
		goto out;
	}
	ret = 0;
out:
	multipart_free(mp);
	return ret;
}

/*
 * Store each spooled file of fs, one by one, each audited; a file that
 * fails gives its reserved bytes back and the others go on.
 */
static void
store_spooled(struct up *u, struct form_state *fs)
{
	struct spooled	*sp;
	struct src	 s;
	struct error	 err;
	size_t		 i;

	for (i = 0; i < fs->nfiles; i++) {
		sp = &fs->files[i];
		sp->audit = audit_begin(u, sp->sent, strlen(sp->sent));
		memset(&s, 0, sizeof(s));
		s.f = sp->f;
		s.size = sp->size;
		error_clear(&err);
		if (fflush(sp->f) != 0 || fseeko(sp->f, 0, SEEK_SET) != 0 ||
		    store(u, sp->name, &s, sp->stored, sizeof(sp->stored),
		    &err) != 0) {
			uplinks_release(u->db, u->row.id, (long long)sp->size);
			audit_end(u, sp->audit, "failed", NULL,
			    (long long)sp->size, err.msg[0] != '\0' ? err.msg :
			    "cannot read the spool file");
			continue;
		}
		sp->ok = true;
		uplinks_count(u->db, u->row.id);
		audit_end(u, sp->audit, "ok", sp->stored, (long long)sp->size,
		    NULL);
	}
}

static void
do_post(struct up *u)
{
	struct form_state	*fs;
	struct error		 err;
	size_t			 i;
	enum uplinks_reserve	 r;
	bool			 reserved = false;

	if ((fs = calloc(1, sizeof(*fs))) == NULL) {
		http_send_error(u->r, 500, "Out of memory.");
		return;
	}
	fs->u = u;
	fs->left = u->row.max_bytes - u->row.used_bytes;
	error_clear(&fs->err);
	if (read_form(u, fs) == -1)
		goto out;
	if (fs->nfiles == 0) {
		upload_page(u->r, &u->row, 400, fs->res, 0);
		goto out;
	}
	if ((r = uplinks_reserve(u->db, u->row.id, (long long)fs->total)) !=
	    UPLINKS_RESERVED) {
		error_kind(&fs->err, r == UPLINKS_NO_ROOM ? ERR_TOO_LARGE :
		    ERR_INTERNAL, "The files are larger than this link accepts "
		    "now.");
		answer_error(u, &fs->err);
		goto out;
	}
	reserved = true;
	error_clear(&err);
	if (open_engine(u, &err) == -1) {
		answer_error(u, &err);
		goto out;
	}
	/* From here each file's bytes are its own: kept, or given back. */
	store_spooled(u, fs);
	reserved = false;
	for (i = 0; i < fs->nfiles; i++) {
		fs->res[i].sent = fs->files[i].sent;
		fs->res[i].size = fs->files[i].size;
		fs->res[i].stored = fs->files[i].stored;
		fs->res[i].ok = fs->files[i].ok;
	}
	upload_page(u->r, &u->row, 200, fs->res, fs->nfiles);
out:
	if (reserved)
		uplinks_release(u->db, u->row.id, (long long)fs->total);
	for (i = 0; i < fs->nfiles; i++)
		if (fs->files[i].f != NULL)
			fclose(fs->files[i].f);
	free(fs);
}

void
upload_handle(struct http_req *r, const struct config *cfg, struct db *db)
{
	struct up	 u;
	struct error	 err;
	const char	*m = http_method(r);

	memset(&u, 0, sizeof(u));
	error_clear(&err);
	u.r = r;
	u.cfg = cfg;
	u.db = db;
	u.method = m;
	snprintf(u.remote, sizeof(u.remote), "%s", http_remote_addr(r));

	if (strcmp(m, "GET") != 0 && strcmp(m, "POST") != 0 &&
	    strcmp(m, "PUT") != 0) {
		http_header_add(r, "Allow", "GET, POST, PUT");
		http_send_error(r, 405, "Open the link in a browser, or PUT a "
		    "file to LINK/NAME.");
		return;
	}
	if (uplinks_check(db, cfg->api_key, http_path(r), (long long)time(NULL),
	    &u.row, &u.url, &err) == -1) {
		http_send_error(r, error_http_status(err.kind), err.msg);
		return;
	}
	if (strcmp(m, "PUT") == 0)
		do_put(&u);
	else if (u.url.name_len != 0)
		http_send_error(r, 404, "Open the link itself (ending in '/').");
	else if (strcmp(m, "POST") == 0)
		do_post(&u);
	else
		upload_page(r, &u.row, 200, NULL, 0);
	if (u.sb != NULL)
		sandboxes_touch(cfg, db, u.row.owner);
	sandbox_close(u.sb);
}
