/*
 * tar.c: see tar.h.
 *
 * The parser is a loop over the bytes it is fed, in one of four states:
 * reading a 512-byte header, collecting a metadata record (pax or GNU long
 * name), passing the wanted entry's data to the sink, or skipping (another
 * entry's data, or padding up to the next block). Everything it keeps is
 * bounded: one header block, one metadata record of at most TAR_META_MAX
 * bytes, and the overrides that record set for the next entry.
 *
 * Layout of a header block (POSIX.1-1988 "ustar", pax(1) "ustar Interchange
 * Format"): name 0..99, mode 100, uid 108, gid 116, size 124..135,
 * mtime 136..147, chksum 148..155, typeflag 156, linkname 157..256,
 * magic 257..262, version 263..264, ..., prefix 345..499.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/extern.h"
#include "engine/tar.h"

#define OFF_NAME	0
#define LEN_NAME	100
#define OFF_SIZE	124
#define OFF_MTIME	136
#define LEN_NUM		12
#define OFF_CHKSUM	148
#define LEN_CHKSUM	8
#define OFF_TYPE	156
#define OFF_MAGIC	257
#define OFF_PREFIX	345
#define LEN_PREFIX	155

enum state {
	ST_HEADER,
	ST_META,
	ST_DATA,
	ST_FINAL,
};

struct tar_extract {
	struct tar_sink		 sink;
	char			*want;
	enum state		 st;
	enum tar_rc		 final;
	char			 errmsg[128];

	unsigned char		 hdr[TAR_BLOCK];
	size_t			 hdr_len;

	/* Bytes to pass over before the current state reads anything. */
	unsigned long long	 skip;

	/* ST_META: the record being collected, and its type ('x', 'g', 'L'). */
	char			*meta;
	size_t			 meta_len, meta_want;
	char			 meta_type;

	/* ST_DATA: bytes of the wanted entry still to pass on. */
	unsigned long long	 left;

	/* What the last pax header or GNU long name says of the next entry. */
	char			*next_name;
	bool			 has_size, has_mtime;
	unsigned long long	 next_size;
	long long		 next_mtime;

	int			 entries;
};

/* Enter a final state; returns it. */
static enum tar_rc
finish(struct tar_extract *t, enum tar_rc rc, const char *msg)
{
	t->st = ST_FINAL;
	t->final = rc;
	if (msg != NULL) {
		size_t n = strlen(msg);

		if (n >= sizeof(t->errmsg))
			n = sizeof(t->errmsg) - 1;
		memcpy(t->errmsg, msg, n);
		t->errmsg[n] = '\0';
	}
	return rc;
}

/*
 * A numeric header field: octal digits, optionally led by spaces and ended
 * by spaces or NULs; or GNU base-256 (high bit of the first byte set), used
 * for sizes of 8 GiB and more. Negative and out-of-range values fail.
 */
int
tar_number(const unsigned char *f, size_t n, unsigned long long *out)
{
	unsigned long long	 v = 0;
	size_t			 i = 0;

	if (f[0] & 0x80) {
		if (f[0] != 0x80)
			return -1;	/* negative, or too large */
		for (i = 1; i < n; i++) {
			if (v > (UINT64_MAX >> 8))
				return -1;
			v = v << 8 | f[i];
		}
		if (v > INT64_MAX)
			return -1;
		*out = v;
		return 0;
	}
	while (i < n && f[i] == ' ')
		i++;
	for (; i < n && f[i] >= '0' && f[i] <= '7'; i++) {
		if (v > (INT64_MAX >> 3))
			return -1;
		v = v << 3 | (unsigned)(f[i] - '0');
	}
	for (; i < n; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	*out = v;
	return 0;
}

/* The checksum is the sum of the header's bytes with its own field as spaces. */
bool
tar_checksum_ok(const unsigned char *h)
{
	unsigned long long	 want;
	unsigned long		 usum = 0;
	long			 ssum = 0;
	size_t			 i;

	if (tar_number(h + OFF_CHKSUM, LEN_CHKSUM, &want) == -1)
		return false;
	for (i = 0; i < TAR_BLOCK; i++) {
		unsigned char c = i >= OFF_CHKSUM && i < OFF_CHKSUM + LEN_CHKSUM ?
		    ' ' : h[i];

		usum += c;
		ssum += (signed char)c;	/* some old writers summed signed chars */
	}
	return want == usum || (long long)want == ssum;
}

bool
tar_zero_block(const unsigned char *h)
{
	size_t i;

	for (i = 0; i < TAR_BLOCK; i++)
		if (h[i] != 0)
			return false;
	return true;
}

/* A decimal number of a pax record: digits only, bounded. */
int
tar_decimal(const char *s, size_t n, unsigned long long *out)
{
	unsigned long long v = 0;
	size_t i;

	if (n == 0 || n > 19)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	if (v > INT64_MAX)
		return -1;
	*out = v;
	return 0;
}

static int
set_next_name(struct tar_extract *t, const char *s, size_t n)
{
	char *p;

	if (n == 0 || n > TAR_NAME_MAX || memchr(s, '\0', n) != NULL)
		return -1;
	if ((p = malloc(n + 1)) == NULL)
		return -1;
	memcpy(p, s, n);
	p[n] = '\0';
	free(t->next_name);
	t->next_name = p;
	return 0;
}

/*
 * Records of a pax extended header (POSIX pax(1) "pax Extended Header"):
 * "LEN KEY=VALUE\n", LEN counting the whole record in decimal. Only path,
 * size and mtime matter here; other keys are passed over.
 */
static int
parse_pax(struct tar_extract *t, const char *p, size_t n)
{
	while (n > 0) {
		unsigned long long	 len, v;
		const char		*sp, *eq, *key, *val;
		size_t			 klen, vlen;

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
		if (klen == 4 && memcmp(key, "path", 4) == 0) {
			if (set_next_name(t, val, vlen) == -1)
				return -1;
		} else if (klen == 4 && memcmp(key, "size", 4) == 0) {
			if (tar_decimal(val, vlen, &t->next_size) == -1)
				return -1;
			t->has_size = true;
		} else if (klen == 5 && memcmp(key, "mtime", 5) == 0) {
			/* Seconds, maybe negative, maybe with a fraction. */
			size_t	 i = 0, d;
			bool	 neg = vlen > 0 && val[0] == '-';

			if (neg)
				i++;
			for (d = i; d < vlen && val[d] != '.'; d++)
				;
			if (tar_decimal(val + i, d - i, &v) == -1)
				return -1;
			t->next_mtime = neg ? -(long long)v : (long long)v;
			t->has_mtime = true;
		}
		p += len;
		n -= (size_t)len;
	}
	return 0;
}

/* Strip "./" and "/" from the front and "/" from the end of an entry name. */
static void
entry_name_span(const char *name, const char **start, size_t *len)
{
	size_t n;

	for (;;) {
		if (name[0] == '/')
			name++;
		else if (name[0] == '.' && name[1] == '/')
			name += 2;
		else
			break;
	}
	n = strlen(name);
	while (n > 0 && name[n - 1] == '/')
		n--;
	*start = name;
	*len = n;
}

/* Types whose headers are followed by no data, whatever the size field says. */
static bool
has_no_data(char type)
{
	return type >= '1' && type <= '6';
}

static void
clear_next(struct tar_extract *t)
{
	free(t->next_name);
	t->next_name = NULL;
	t->has_size = t->has_mtime = false;
}

/* A full header block is in t->hdr: decide what follows it. */
static enum tar_rc
header(struct tar_extract *t)
{
	const unsigned char	*h = t->hdr;
	unsigned long long	 size, mtime;
	char			 type, name[LEN_PREFIX + 1 + LEN_NAME + 1];
	const char		*ename, *s;
	size_t			 n, slen;
	struct tar_entry	 e;

	if (tar_zero_block(h))
		/* End of archive (two zero blocks; one is enough to know). */
		return finish(t, TAR_NOT_FOUND, "the archive does not hold the file");
	if (!tar_checksum_ok(h))
		return finish(t, TAR_ERROR, "bad tar header checksum");
	if (tar_number(h + OFF_SIZE, LEN_NUM, &size) == -1 ||
	    tar_number(h + OFF_MTIME, LEN_NUM, &mtime) == -1)
		return finish(t, TAR_ERROR, "bad number in a tar header");
	type = (char)h[OFF_TYPE];

	if (type == 'x' || type == 'g' || type == 'L' || type == 'K') {
		if (size > TAR_META_MAX)
			return finish(t, TAR_ERROR, "tar metadata record too large");
		if (type == 'K' || type == 'g') {
			/* Link names and global headers do not matter here. */
			t->skip = size + tar_padding(size);
			return TAR_MORE;
		}
		free(t->meta);
		if ((t->meta = malloc(size + 1)) == NULL)
			return finish(t, TAR_ERROR, "out of memory");
		t->meta_len = 0;
		t->meta_want = (size_t)size;
		t->meta_type = type;
		t->st = ST_META;
		return TAR_MORE;
	}

	if (++t->entries > TAR_MAX_ENTRIES)
		return finish(t, TAR_ERROR, "too many entries in the archive");

	/* The name: a long name from the records before, else prefix/name. */
	if (t->next_name != NULL)
		ename = t->next_name;
	else {
		size_t plen = 0;

		n = strnlen((const char *)h + OFF_NAME, LEN_NAME);
		if (memcmp(h + OFF_MAGIC, "ustar\0", 6) == 0)
			plen = strnlen((const char *)h + OFF_PREFIX, LEN_PREFIX);
		if (plen > 0) {
			memcpy(name, h + OFF_PREFIX, plen);
			name[plen] = '/';
			memcpy(name + plen + 1, h + OFF_NAME, n);
			name[plen + 1 + n] = '\0';
		} else {
			memcpy(name, h + OFF_NAME, n);
			name[n] = '\0';
		}
		ename = name;
	}
	if (t->has_size)
		size = t->next_size;
	e.size = size;
	e.mtime = t->has_mtime ? t->next_mtime : (long long)mtime;
	e.name = ename;

	entry_name_span(ename, &s, &slen);
	if (slen != strlen(t->want) || memcmp(s, t->want, slen) != 0) {
		t->skip = has_no_data(type) ? 0 : size + tar_padding(size);
		clear_next(t);
		return TAR_MORE;
	}
	if (type != '0' && type != '\0' && type != '7') {
		clear_next(t);
		return finish(t, TAR_ERROR, type == '5' ?
		    "the path is a directory" : "the path is not a regular file");
	}
	if (t->sink.begin != NULL && t->sink.begin(t->sink.arg, &e) == -1) {
		clear_next(t);
		return finish(t, TAR_STOPPED, NULL);
	}
	clear_next(t);
	if (size == 0)
		return finish(t, TAR_DONE, NULL);
	t->left = size;
	t->st = ST_DATA;
	return TAR_MORE;
}

/* A whole metadata record is in t->meta. */
static enum tar_rc
meta_done(struct tar_extract *t)
{
	int rc = 0;

	t->meta[t->meta_len] = '\0';
	if (t->meta_type == 'x')
		rc = parse_pax(t, t->meta, t->meta_len);
	else if (t->meta_type == 'L')
		/* GNU long name: the name, NUL-terminated within the data. */
		rc = set_next_name(t, t->meta, strnlen(t->meta, t->meta_len));
	free(t->meta);
	t->meta = NULL;
	if (rc == -1)
		return finish(t, TAR_ERROR, "malformed tar metadata record");
	t->skip = tar_padding(t->meta_want);
	t->st = ST_HEADER;
	t->hdr_len = 0;
	return TAR_MORE;
}

enum tar_rc
tar_extract_feed(struct tar_extract *t, const void *buf, size_t len,
    struct error *err)
{
	const unsigned char	*p = buf;
	enum tar_rc		 rc = TAR_MORE;

	while (t->st != ST_FINAL && (len > 0 || (t->st == ST_META &&
	    t->meta_len == t->meta_want && t->skip == 0))) {
		size_t n;

		if (t->skip > 0) {
			n = t->skip < len ? (size_t)t->skip : len;
			t->skip -= n;
			p += n;
			len -= n;
			continue;
		}
		switch (t->st) {
		case ST_HEADER:
			n = TAR_BLOCK - t->hdr_len;
			if (n > len)
				n = len;
			memcpy(t->hdr + t->hdr_len, p, n);
			t->hdr_len += n;
			p += n;
			len -= n;
			if (t->hdr_len == TAR_BLOCK) {
				t->hdr_len = 0;
				rc = header(t);
			}
			break;
		case ST_META:
			n = t->meta_want - t->meta_len;
			if (n > len)
				n = len;
			memcpy(t->meta + t->meta_len, p, n);
			t->meta_len += n;
			p += n;
			len -= n;
			if (t->meta_len == t->meta_want)
				rc = meta_done(t);
			break;
		case ST_DATA:
			n = t->left < len ? (size_t)t->left : len;
			if (t->sink.data != NULL &&
			    t->sink.data(t->sink.arg, p, n) == -1)
				return finish(t, TAR_STOPPED, NULL);
			t->left -= n;
			p += n;
			len -= n;
			if (t->left == 0)
				rc = finish(t, TAR_DONE, NULL);
			break;
		case ST_FINAL:
			break;
		}
		if (rc != TAR_MORE)
			break;
	}
	if (t->st == ST_FINAL) {
		if (t->final == TAR_ERROR)
			error_set(err, "%s", t->errmsg);
		return t->final;
	}
	return TAR_MORE;
}

enum tar_rc
tar_extract_end(struct tar_extract *t, struct error *err)
{
	if (t->st == ST_FINAL) {
		if (t->final == TAR_ERROR)
			error_set(err, "%s", t->errmsg);
		return t->final;
	}
	if (t->st == ST_HEADER && t->skip == 0 && t->hdr_len == 0)
		return finish(t, TAR_NOT_FOUND, NULL);
	finish(t, TAR_ERROR, "the archive stream was cut short");
	error_set(err, "%s", t->errmsg);
	return TAR_ERROR;
}

struct tar_extract *
tar_extract_new(const char *want, const struct tar_sink *sink)
{
	struct tar_extract *t;

	if (strlen(want) > TAR_NAME_MAX)
		return NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	if ((t->want = strdup(want)) == NULL) {
		free(t);
		return NULL;
	}
	t->sink = *sink;
	t->st = ST_HEADER;
	return t;
}

void
tar_extract_free(struct tar_extract *t)
{
	if (t == NULL)
		return;
	free(t->want);
	free(t->meta);
	free(t->next_name);
	free(t);
}

/* Writing (tar_header_write). */

static void
put_octal(char *field, size_t width, unsigned long long v)
{
	size_t i;

	/* width - 1 octal digits and a NUL, as POSIX ustar writes them. */
	field[width - 1] = '\0';
	for (i = width - 1; i > 0; i--) {
		field[i - 1] = (char)('0' + (v & 7));
		v >>= 3;
	}
}

static void
put_number(char *field, size_t width, unsigned long long v)
{
	size_t i;

	if (v < (1ULL << (3 * (width - 1)))) {
		put_octal(field, width, v);
		return;
	}
	/* GNU base-256: the first byte's top bit set, big-endian after. */
	memset(field, 0, width);
	for (i = width; i > 1; i--) {
		field[i - 1] = (char)(v & 0xff);
		v >>= 8;
	}
	field[0] = (char)0x80;
}

static void
ustar_block(char *b, const char *name, size_t namelen, char type,
    unsigned long long size, long long mtime, unsigned mode)
{
	unsigned	sum = 0;
	size_t		i;

	memset(b, 0, TAR_BLOCK);
	memcpy(b, name, namelen > 100 ? 100 : namelen);
	put_octal(b + 100, 8, mode & 07777);
	put_octal(b + 108, 8, 0);			/* uid: root */
	put_octal(b + 116, 8, 0);			/* gid: root */
	put_number(b + 124, 12, size);
	put_octal(b + 136, 12, mtime > 0 ? (unsigned long long)mtime : 0);
	b[156] = type;
	memcpy(b + 257, "ustar", 6);			/* magic "ustar\0" */
	memcpy(b + 263, "00", 2);			/* version */
	memset(b + 148, ' ', 8);
	for (i = 0; i < TAR_BLOCK; i++)
		sum += (unsigned char)b[i];
	put_octal(b + 148, 7, sum);
	b[155] = ' ';
}

long
tar_header_write(char out[TAR_HEADER_MAX], const char *name, char type,
    unsigned long long size, long long mtime, unsigned mode)
{
	size_t	namelen = strlen(name), reclen, digits;
	char	num[24];
	int	n;

	if (namelen == 0 || namelen > TAR_WRITE_NAME_MAX ||
	    memchr(name, '\n', namelen) != NULL)
		return -1;
	if (namelen <= 100) {
		ustar_block(out, name, namelen, type, size, mtime, mode);
		return TAR_BLOCK;
	}
	/* "LEN path=NAME\n", LEN counting itself (POSIX pax "extended header"). */
	reclen = namelen + 7;
	for (digits = 1;; digits++) {
		n = snprintf(num, sizeof(num), "%zu", reclen + digits);
		if ((size_t)n == digits)
			break;
	}
	reclen += digits;
	if (reclen > TAR_BLOCK)
		return -1;
	ustar_block(out, "././@PaxHeader", 14, 'x', reclen, mtime, 0644);
	memset(out + TAR_BLOCK, 0, TAR_BLOCK);
	memcpy(out + TAR_BLOCK, num, digits);
	memcpy(out + TAR_BLOCK + digits, " path=", 6);
	memcpy(out + TAR_BLOCK + digits + 6, name, namelen);
	out[TAR_BLOCK + reclen - 1] = '\n';
	ustar_block(out + 2 * TAR_BLOCK, name, namelen, type, size, mtime, mode);
	return 3 * TAR_BLOCK;
}

size_t
tar_padding(unsigned long long size)
{
	return (size_t)((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
}
