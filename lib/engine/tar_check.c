/*
 * tar_check.c: see tar.h (tar_check_*).
 *
 * States: reading a header block, collecting a metadata record (pax 'x' or
 * 'g', GNU 'L' or 'K'), passing over data and padding, and the end (only
 * zero bytes). The current folder is one string, cut back to the parent
 * of each new entry; an entry whose parent is not on it is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/extern.h"
#include "engine/tar.h"

#define OFF_NAME	0
#define LEN_NAME	100
#define OFF_MODE	100
#define OFF_UID		108
#define OFF_GID		116
#define LEN_ID		8
#define OFF_SIZE	124
#define LEN_NUM		12
#define OFF_TYPE	156
#define OFF_LINK	157
#define LEN_LINK	100
#define OFF_MAGIC	257
#define OFF_PREFIX	345
#define LEN_PREFIX	155

enum cstate { C_HEADER, C_META, C_SKIP, C_END, C_BAD };

struct tar_check {
	enum cstate		 st;
	char			 root[64];
	char			 errmsg[160];
	unsigned char		 hdr[TAR_BLOCK];
	size_t			 hdr_len;
	unsigned long long	 skip;		/* C_SKIP: bytes left */
	char			*meta;		/* C_META: the record */
	size_t			 meta_len, meta_want;
	unsigned long long	 meta_pad;
	char			 meta_type;
	char			*next_name, *next_link;	/* from pax or GNU */
	bool			 has_size;
	unsigned long long	 next_size;
	char			*cur;		/* the current folder, "" at first */
	long			 entries;
	unsigned long long	 data;
	bool			 gnu;		/* GNU tar's incremental form */
};

/* Enter the bad state with "what: name (entry N)"; returns -1. */
static int
bad(struct tar_check *c, struct error *err, const char *what,
    const char *name)
{
	if (c->st != C_BAD) {
		snprintf(c->errmsg, sizeof(c->errmsg), "snapshot archive: "
		    "%.60s%s%.60s (entry %ld)", what, name != NULL ? ": " : "",
		    name != NULL ? name : "", c->entries + 1);
		c->st = C_BAD;
	}
	return error_set(err, "%s", c->errmsg);
}

struct tar_check *
tar_check_new(const char *root)
{
	struct tar_check *c;

	if (strlen(root) == 0 || strlen(root) >= 64 || strchr(root, '/') != NULL)
		return NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	snprintf(c->root, sizeof(c->root), "%s", root);
	if ((c->cur = calloc(1, TAR_NAME_MAX + 1)) == NULL) {
		free(c);
		return NULL;
	}
	return c;
}

void
tar_check_incremental(struct tar_check *c)
{
	c->gnu = true;
}

void
tar_check_free(struct tar_check *c)
{
	if (c == NULL)
		return;
	free(c->meta);
	free(c->next_name);
	free(c->next_link);
	free(c->cur);
	free(c);
}

/* A malloc'd NUL-terminated copy of s[0..n), or NULL (too long, a NUL). */
static char *
dup_name(const char *s, size_t n)
{
	char *p;

	if (n == 0 || n > TAR_NAME_MAX || memchr(s, '\0', n) != NULL)
		return NULL;
	if ((p = malloc(n + 1)) == NULL)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

/* pax records: path, linkpath and size count; the rest is passed over. */
static int
parse_pax(struct tar_check *c, const char *p, size_t n, bool global)
{
	while (n > 0) {
		unsigned long long	 len;
		const char		*sp, *eq, *key, *val;
		size_t			 klen, vlen;
		char			**slot = NULL;

		if ((sp = memchr(p, ' ', n < 20 ? n : 20)) == NULL ||
		    tar_decimal(p, (size_t)(sp - p), &len) == -1 ||
		    len > n || len < (size_t)(sp - p) + 3 || p[len - 1] != '\n')
			return -1;
		key = sp + 1;
		if ((eq = memchr(key, '=', (size_t)(p + len - 1 - key))) == NULL)
			return -1;
		klen = (size_t)(eq - key);
		val = eq + 1;
		vlen = (size_t)(p + len - 1 - val);
		if (klen == 4 && memcmp(key, "path", 4) == 0)
			slot = &c->next_name;
		else if (klen == 8 && memcmp(key, "linkpath", 8) == 0)
			slot = &c->next_link;
		else if (klen == 4 && memcmp(key, "size", 4) == 0) {
			if (global || tar_decimal(val, vlen, &c->next_size) == -1)
				return -1;
			c->has_size = true;
		}
		if (slot != NULL) {
			/* A global header may not rename entries. */
			if (global)
				return -1;
			free(*slot);
			if ((*slot = dup_name(val, vlen)) == NULL)
				return -1;
		}
		p += len;
		n -= (size_t)len;
	}
	return 0;
}

/*
 * name is root or root/a/b..., each part neither empty, "." nor "..", with
 * one trailing '/' allowed (cut off here).
 */
static bool
name_ok(const struct tar_check *c, char *name)
{
	size_t	 n = strlen(name), rl = strlen(c->root);
	char	*p, *e;

	if (n > 1 && name[n - 1] == '/')
		name[--n] = '\0';
	if (strncmp(name, c->root, rl) != 0 ||
	    (name[rl] != '\0' && name[rl] != '/'))
		return false;
	for (p = name; ; p = e + 1) {
		e = strchr(p, '/');
		n = e == NULL ? strlen(p) : (size_t)(e - p);
		if (n == 0 || (n == 1 && p[0] == '.') ||
		    (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (e == NULL)
			return true;
	}
}

/* The walk order: name's parent must be the current folder or above it. */
static bool
walk_ok(struct tar_check *c, const char *name, bool dir)
{
	const char	*slash = strrchr(name, '/');
	size_t		 plen, clen;

	if (slash == NULL) {
		/* The root itself: the first entry, a folder. */
		if (c->entries != 0 || !dir)
			return false;
		snprintf(c->cur, TAR_NAME_MAX + 1, "%s", name);
		return true;
	}
	if (c->cur[0] == '\0')
		return false;
	plen = (size_t)(slash - name);
	for (;;) {
		clen = strlen(c->cur);
		if (clen == plen && memcmp(c->cur, name, plen) == 0)
			break;
		if (clen < plen && memcmp(c->cur, name, clen) == 0 &&
		    name[clen] == '/')
			return false;	/* a folder skipped */
		/* Leave the current folder. */
		if ((slash = strrchr(c->cur, '/')) == NULL)
			return false;
		c->cur[slash - c->cur] = '\0';
	}
	if (dir)
		snprintf(c->cur, TAR_NAME_MAX + 1, "%s", name);
	return true;
}

static void
clear_next(struct tar_check *c)
{
	free(c->next_name);
	free(c->next_link);
	c->next_name = c->next_link = NULL;
	c->has_size = false;
	c->next_size = 0;
}

static int
header(struct tar_check *c, struct error *err)
{
	const unsigned char	*h = c->hdr;
	unsigned long long	 size, mode, uid, gid;
	char			 type = (char)h[OFF_TYPE], *name = NULL;
	char			 link[LEN_LINK + 1];
	size_t			 n;
	int			 rc = -1;
	bool			 dir;

	if (!tar_checksum_ok(h))
		return bad(c, err, "bad header checksum", NULL);
	if (tar_number(h + OFF_SIZE, LEN_NUM, &size) == -1 ||
	    tar_number(h + OFF_MODE, LEN_ID, &mode) == -1 ||
	    tar_number(h + OFF_UID, LEN_ID, &uid) == -1 ||
	    tar_number(h + OFF_GID, LEN_ID, &gid) == -1 || mode > 0777777)
		return bad(c, err, "bad number in a header", NULL);
	if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
		if (size == 0 || size > TAR_META_MAX)
			return bad(c, err, "metadata record of a bad size",
			    NULL);
		if ((c->meta = malloc((size_t)size)) == NULL)
			return bad(c, err, "out of memory", NULL);
		c->meta_len = 0;
		c->meta_want = (size_t)size;
		c->meta_pad = tar_padding(size);
		c->meta_type = type;
		c->st = C_META;
		return 0;
	}
	if (c->has_size)
		size = c->next_size;
	if (c->entries >= TAR_CHECK_ENTRIES)
		return bad(c, err, "more entries than allowed", NULL);
	if (c->next_name != NULL)
		name = strdup(c->next_name);
	else {
		char	 buf[LEN_PREFIX + 1 + LEN_NAME + 1];
		size_t	 pl = 0;

		if (memcmp(h + OFF_MAGIC, "ustar\0", 6) == 0) {
			pl = strnlen((const char *)h + OFF_PREFIX, LEN_PREFIX);
			memcpy(buf, h + OFF_PREFIX, pl);
			if (pl > 0)
				buf[pl++] = '/';
		}
		n = strnlen((const char *)h + OFF_NAME, LEN_NAME);
		memcpy(buf + pl, h + OFF_NAME, n);
		buf[pl + n] = '\0';
		name = strdup(buf);
	}
	if (name == NULL)
		return bad(c, err, "out of memory", NULL);
	if (!name_ok(c, name)) {
		bad(c, err, "a name outside the archive's folder", name);
		goto out;
	}
	switch (type) {
	case '0': case '\0': case '7':
		break;
	case 'D':
		/* A folder and its dumpdir: the names it held, as data. */
		if (!c->gnu) {
			bad(c, err, "an entry of a type not kept", name);
			goto out;
		}
		break;
	case '5': case '2': case '1': case '6':
		if (size != 0) {
			bad(c, err, "data on an entry that has none",
			    name);
			goto out;
		}
		break;
	default:
		bad(c, err, "an entry of a type not kept", name);
		goto out;
	}
	if (type == '1' || type == '2') {
		const char *target = c->next_link;

		if (target == NULL) {
			n = strnlen((const char *)h + OFF_LINK, LEN_LINK);
			memcpy(link, h + OFF_LINK, n);
			link[n] = '\0';
			target = link;
		}
		if (target[0] == '\0') {
			bad(c, err, "a link without a target", name);
			goto out;
		}
		if (type == '1') {
			char *t = strdup(target);
			bool ok = t != NULL && name_ok(c, t);

			free(t);
			if (!ok) {
				bad(c, err, "a hard link to outside the "
				    "archive's folder", name);
				goto out;
			}
		}
	}
	dir = type == '5' || type == 'D';
	/*
	 * GNU tar's incremental form gives every folder first, then the
	 * files: the root first, then any order. GNU tar extracts it in a
	 * helper container, and never through a symbolic link it made.
	 */
	if (c->gnu ? c->entries == 0 && (!dir || strchr(name, '/') != NULL) :
	    !walk_ok(c, name, dir)) {
		bad(c, err, "an entry out of walk order (below a link or a "
		    "missing folder)", name);
		goto out;
	}
	c->entries++;
	c->data += size;
	c->skip = size + tar_padding(size);
	c->st = c->skip > 0 ? C_SKIP : C_HEADER;
	rc = 0;
out:
	free(name);
	clear_next(c);
	return rc;
}

static int
meta_done(struct tar_check *c, struct error *err)
{
	int rc = 0;

	switch (c->meta_type) {
	case 'x':
	case 'g':
		if (parse_pax(c, c->meta, c->meta_len, c->meta_type == 'g') == -1)
			rc = bad(c, err, "bad pax header", NULL);
		break;
	case 'L':
	case 'K': {
		size_t	 n = strnlen(c->meta, c->meta_len);
		char	**slot = c->meta_type == 'L' ? &c->next_name :
			    &c->next_link;

		free(*slot);
		if ((*slot = dup_name(c->meta, n)) == NULL)
			rc = bad(c, err, "bad GNU long name", NULL);
		break;
	}
	}
	free(c->meta);
	c->meta = NULL;
	if (rc == 0) {
		c->skip = c->meta_pad;
		c->st = c->skip > 0 ? C_SKIP : C_HEADER;
	}
	return rc;
}

int
tar_check_feed(struct tar_check *c, const void *buf, size_t len,
    struct error *err)
{
	const unsigned char	*p = buf;
	size_t			 n;

	while (len > 0) {
		switch (c->st) {
		case C_BAD:
			return error_set(err, "%s", c->errmsg);
		case C_END:
			for (n = 0; n < len; n++)
				if (p[n] != 0)
					return bad(c, err, "bytes after the "
					    "archive's end", NULL);
			return 0;
		case C_SKIP:
			n = len < c->skip ? len : (size_t)c->skip;
			c->skip -= n;
			p += n;
			len -= n;
			if (c->skip == 0)
				c->st = C_HEADER;
			break;
		case C_META:
			n = c->meta_want - c->meta_len;
			if (n > len)
				n = len;
			memcpy(c->meta + c->meta_len, p, n);
			c->meta_len += n;
			p += n;
			len -= n;
			if (c->meta_len == c->meta_want &&
			    meta_done(c, err) == -1)
				return -1;
			break;
		case C_HEADER:
			n = TAR_BLOCK - c->hdr_len;
			if (n > len)
				n = len;
			memcpy(c->hdr + c->hdr_len, p, n);
			c->hdr_len += n;
			p += n;
			len -= n;
			if (c->hdr_len < TAR_BLOCK)
				break;
			c->hdr_len = 0;
			if (tar_zero_block(c->hdr)) {
				if (c->next_name != NULL || c->next_link !=
				    NULL || c->has_size)
					return bad(c, err, "metadata without "
					    "an entry", NULL);
				c->st = C_END;
				break;
			}
			if (header(c, err) == -1)
				return -1;
			break;
		}
	}
	return 0;
}

int
tar_check_end(struct tar_check *c, long *entries,
    unsigned long long *data_bytes, struct error *err)
{
	*entries = 0;
	*data_bytes = 0;
	if (c->st == C_BAD)
		return error_set(err, "%s", c->errmsg);
	if (c->st != C_END || c->entries == 0)
		return bad(c, err, "the archive is cut short", NULL);
	*entries = c->entries;
	*data_bytes = c->data;
	return 0;
}
