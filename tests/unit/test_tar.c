/*
 * test_tar.c: the tar stream extractor (lib/engine/tar.c), fed archives built here
 * block by block and archives written by the system's tar (GNU and pax
 * formats), in pieces of one byte and in one piece.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engine/tar.h"

/* An archive being built in memory. */
struct ar {
	unsigned char	*buf;
	size_t		 len;
};

static void
ar_add(struct ar *a, const void *p, size_t n)
{
	a->buf = realloc(a->buf, a->len + n);
	if (a->buf == NULL)
		abort();
	memcpy(a->buf + a->len, p, n);
	a->len += n;
}

static void
octal(unsigned char *f, size_t n, unsigned long long v)
{
	size_t i;

	memset(f, '0', n - 1);
	f[n - 1] = '\0';
	for (i = n - 1; i-- > 0 && v > 0; v >>= 3)
		f[i] = (unsigned char)('0' + (v & 7));
}

/* A header block; magic "ustar\0" (POSIX) or "ustar  \0" (GNU). */
static void
ar_header(struct ar *a, const char *name, const char *prefix,
    unsigned long long size, char type, bool gnu)
{
	unsigned char	h[512];
	unsigned	sum = 0;
	size_t		i;

	memset(h, 0, sizeof(h));
	memcpy(h, name, strnlen(name, 100));
	octal(h + 100, 8, 0644);
	octal(h + 108, 8, 0);
	octal(h + 116, 8, 0);
	octal(h + 124, 12, size);
	octal(h + 136, 12, 1700000000);
	h[156] = (unsigned char)type;
	if (gnu)
		memcpy(h + 257, "ustar  \0", 8);
	else {
		memcpy(h + 257, "ustar\0" "00", 8);
		if (prefix != NULL)
			memcpy(h + 345, prefix, strnlen(prefix, 155));
	}
	memset(h + 148, ' ', 8);
	for (i = 0; i < sizeof(h); i++)
		sum += h[i];
	octal(h + 148, 7, sum);
	h[155] = ' ';
	ar_add(a, h, sizeof(h));
}

static void
ar_data(struct ar *a, const void *p, size_t n)
{
	static const unsigned char zero[512];

	ar_add(a, p, n);
	if (n % 512 != 0)
		ar_add(a, zero, 512 - n % 512);
}

static void
ar_end(struct ar *a)
{
	static const unsigned char zero[1024];

	ar_add(a, zero, sizeof(zero));
}

static void
ar_file(struct ar *a, const char *name, const char *content)
{
	ar_header(a, name, NULL, strlen(content), '0', false);
	ar_data(a, content, strlen(content));
}

/* A pax record "LEN key=value\n"; LEN counts its own digits too. */
static void
pax_record(char *out, size_t outsz, const char *kv)
{
	char	tmp[32];
	size_t	base = strlen(kv) + 2, len = base + 1;

	while (len != base + (size_t)snprintf(tmp, sizeof(tmp), "%zu", len))
		len = base + (size_t)snprintf(tmp, sizeof(tmp), "%zu", len);
	snprintf(out, outsz, "%zu %s\n", len, kv);
}

/* What the sink saw. */
struct got {
	int			 begins;
	char			 name[TAR_NAME_MAX + 1];
	unsigned long long	 size;
	long long		 mtime;
	unsigned char		*data;
	size_t			 len;
	bool			 stop_in_begin;
	size_t			 stop_after;	/* stop once this much data came; 0 = never */
};

static int
got_begin(void *arg, const struct tar_entry *e)
{
	struct got *g = arg;

	g->begins++;
	snprintf(g->name, sizeof(g->name), "%s", e->name);
	g->size = e->size;
	g->mtime = e->mtime;
	return g->stop_in_begin ? -1 : 0;
}

static int
got_data(void *arg, const void *buf, size_t len)
{
	struct got *g = arg;

	if (len == 0)
		return -1;	/* never called with 0 */
	g->data = realloc(g->data, g->len + len);
	if (g->data == NULL)
		abort();
	memcpy(g->data + g->len, buf, len);
	g->len += len;
	if (g->stop_after > 0 && g->len >= g->stop_after)
		return -1;
	return 0;
}

/* Feed a whole archive in pieces of step bytes (0: at once); then end. */
static enum tar_rc
run(const struct ar *a, const char *want, size_t step, struct got *g,
    struct error *err)
{
	struct tar_sink		 sink = { got_begin, got_data, g };
	struct tar_extract	*t = tar_extract_new(want, &sink);
	enum tar_rc		 rc = TAR_MORE;
	size_t			 off = 0;

	if (t == NULL)
		return TAR_ERROR;
	while (off < a->len && rc == TAR_MORE) {
		size_t n = step == 0 || a->len - off < step ? a->len - off : step;

		rc = tar_extract_feed(t, a->buf + off, n, err);
		off += n;
	}
	if (rc == TAR_MORE)
		rc = tar_extract_end(t, err);
	tar_extract_free(t);
	return rc;
}

static void
got_reset(struct got *g)
{
	free(g->data);
	memset(g, 0, sizeof(*g));
}

static bool
same(const struct got *g, const char *content)
{
	return g->len == strlen(content) && memcmp(g->data, content, g->len) == 0;
}

static void
test_ustar(void)
{
	struct ar	 a = { 0 };
	struct got	 g = { 0 };
	struct error	 err;
	size_t		 steps[] = { 1, 7, 511, 512, 513, 0 };
	size_t		 i;
	char		 name[64];

	ar_header(&a, "dir/", NULL, 0, '5', false);
	ar_file(&a, "other.txt", "not this one, though it is longer than 512? no");
	ar_file(&a, "hello.txt", "hello world\n");
	ar_end(&a);
	for (i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		enum tar_rc rc = run(&a, "hello.txt", steps[i], &g, &err);

		snprintf(name, sizeof(name), "ustar, pieces of %zu", steps[i]);
		CHECK(rc == TAR_DONE && g.begins == 1 && g.size == 12 &&
		    g.mtime == 1700000000 && same(&g, "hello world\n"), name);
		got_reset(&g);
	}
	CHECK(run(&a, "./hello.txt", 1, &g, &err) == TAR_NOT_FOUND &&
	    g.begins == 0, "wanted name is compared as given");
	got_reset(&g);
	CHECK(run(&a, "missing.txt", 1, &g, &err) == TAR_NOT_FOUND &&
	    g.begins == 0, "absent file: not found");
	got_reset(&g);
	CHECK(run(&a, "dir", 1, &g, &err) == TAR_ERROR && g.begins == 0 &&
	    strstr(err.msg, "directory") != NULL, "a directory is refused");
	got_reset(&g);
	free(a.buf);
}

static void
test_big_data(void)
{
	struct ar	 a = { 0 };
	struct got	 g = { 0 };
	struct error	 err;
	unsigned char	*big;
	size_t		 n = 3 * 512 + 17, i;

	big = malloc(n);
	for (i = 0; i < n; i++)
		big[i] = (unsigned char)(i * 31 + 7);
	ar_header(&a, "./bin.dat", NULL, n, '0', false);
	ar_data(&a, big, n);
	ar_end(&a);
	CHECK(run(&a, "bin.dat", 1, &g, &err) == TAR_DONE && g.len == n &&
	    memcmp(g.data, big, n) == 0, "binary data over several blocks, 1-byte pieces, ./ stripped");
	got_reset(&g);
	g.stop_after = 600;
	CHECK(run(&a, "bin.dat", 100, &g, &err) == TAR_STOPPED &&
	    g.len >= 600 && g.len < n, "a sink can stop mid-data");
	got_reset(&g);
	g.stop_in_begin = true;
	CHECK(run(&a, "bin.dat", 0, &g, &err) == TAR_STOPPED && g.len == 0,
	    "a sink can stop at begin");
	got_reset(&g);

	/* Cut in the middle of the data. */
	a.len -= 1024 + 512;
	CHECK(run(&a, "bin.dat", 1, &g, &err) == TAR_ERROR,
	    "a stream cut inside the file is an error");
	got_reset(&g);
	free(big);
	free(a.buf);
}

static void
test_empty_file(void)
{
	struct ar	 a = { 0 };
	struct got	 g = { 0 };
	struct error	 err;

	ar_header(&a, "empty", NULL, 0, '0', false);
	ar_end(&a);
	CHECK(run(&a, "empty", 1, &g, &err) == TAR_DONE && g.begins == 1 &&
	    g.len == 0, "an empty file");
	got_reset(&g);
	free(a.buf);
}

static void
test_prefix(void)
{
	struct ar	 a = { 0 };
	struct got	 g = { 0 };
	struct error	 err;

	ar_header(&a, "file.bin", "some/dir", 3, '0', false);
	ar_data(&a, "abc", 3);
	ar_end(&a);
	CHECK(run(&a, "some/dir/file.bin", 1, &g, &err) == TAR_DONE &&
	    same(&g, "abc"), "ustar prefix joins the name");
	got_reset(&g);
	free(a.buf);

	/* A GNU header's bytes at the prefix offset are not a prefix. */
	a.buf = NULL;
	a.len = 0;
	ar_header(&a, "plain", NULL, 2, '0', true);
	ar_data(&a, "xy", 2);
	ar_end(&a);
	CHECK(run(&a, "plain", 1, &g, &err) == TAR_DONE && same(&g, "xy"),
	    "GNU magic header");
	got_reset(&g);
	free(a.buf);
}

static void
test_gnu_longname(void)
{
	struct ar	 a = { 0 };
	struct got	 g = { 0 };
	struct error	 err;
	char		 longname[301];

	memset(longname, 'n', 300);
	memcpy(longname + 290, ".txt", 4);
	longname[300] = '\0';
	ar_header(&a, "././@LongLink", NULL, 301, 'L', true);
	ar_data(&a, longname, 301);
	ar_header(&a, "nnnnnnnn-truncated", NULL, 4, '0', true);
	ar_data(&a, "long", 4);
	ar_end(&a);
	CHECK(run(&a, longname, 1, &g, &err) == TAR_DONE && same(&g, "long") &&
	    strcmp(g.name, longname) == 0, "GNU long name ('L')");
	got_reset(&g);
	CHECK(run(&a, "nnnnnnnn-truncated", 1, &g, &err) == TAR_NOT_FOUND,
	    "the truncated header name does not match");
	got_reset(&g);
	free(a.buf);
}

static void
test_pax(void)
{
	struct ar	 a = { 0 };
	struct got	 g = { 0 };
	struct error	 err;
	char		 rec[3][512], data[1600];
	const char	*name = "r\xc3\xa9sum\xc3\xa9 \xe6\x97\xa5\xe6\x9c\xac.pdf";
	char		 kv[256];

	/* A global header first: skipped. */
	pax_record(rec[0], sizeof(rec[0]), "comment=global");
	ar_header(&a, "pax_global_header", NULL, strlen(rec[0]), 'g', false);
	ar_data(&a, rec[0], strlen(rec[0]));

	snprintf(kv, sizeof(kv), "path=%s", name);
	pax_record(rec[0], sizeof(rec[0]), kv);
	pax_record(rec[1], sizeof(rec[1]), "mtime=1712345678.123456789");
	pax_record(rec[2], sizeof(rec[2]), "size=5");
	snprintf(data, sizeof(data), "%s%s%s", rec[0], rec[1], rec[2]);
	ar_header(&a, "PaxHeaders/x", NULL, strlen(data), 'x', false);
	ar_data(&a, data, strlen(data));
	/* The ustar size says 0: pax's size wins. */
	ar_header(&a, "r_sum_ ??.pdf", NULL, 0, '0', false);
	ar_data(&a, "%PDF-", 5);
	ar_end(&a);
	CHECK(run(&a, name, 1, &g, &err) == TAR_DONE && same(&g, "%PDF-") &&
	    g.mtime == 1712345678 && g.size == 5, "pax path, size and mtime");
	got_reset(&g);
	CHECK(run(&a, name, 0, &g, &err) == TAR_DONE && same(&g, "%PDF-"),
	    "pax, in one piece");
	got_reset(&g);
	free(a.buf);

	/* A malformed record. */
	a.buf = NULL;
	a.len = 0;
	ar_header(&a, "PaxHeaders/x", NULL, 12, 'x', false);
	ar_data(&a, "99 path=abc\n", 12);
	ar_file(&a, "abc", "x");
	ar_end(&a);
	CHECK(run(&a, "abc", 1, &g, &err) == TAR_ERROR, "malformed pax record");
	got_reset(&g);
	free(a.buf);

	/* An oversized one is refused before it is read. */
	a.buf = NULL;
	a.len = 0;
	ar_header(&a, "PaxHeaders/x", NULL, TAR_META_MAX + 1, 'x', false);
	ar_end(&a);
	CHECK(run(&a, "abc", 1, &g, &err) == TAR_ERROR &&
	    strstr(err.msg, "too large") != NULL, "oversized pax header");
	got_reset(&g);
	free(a.buf);
}

static void
test_malformed(void)
{
	struct ar	 a = { 0 };
	struct got	 g = { 0 };
	struct error	 err;
	char		 name[32];
	int		 i;

	ar_file(&a, "f", "data");
	ar_end(&a);
	a.buf[0] ^= 1;		/* the checksum no longer matches */
	CHECK(run(&a, "f", 1, &g, &err) == TAR_ERROR &&
	    strstr(err.msg, "checksum") != NULL, "bad checksum");
	got_reset(&g);
	free(a.buf);

	a.buf = NULL;
	a.len = 0;
	for (i = 0; i < TAR_MAX_ENTRIES + 1; i++) {
		snprintf(name, sizeof(name), "e%d", i);
		ar_file(&a, name, "x");
	}
	ar_end(&a);
	CHECK(run(&a, "zzz", 0, &g, &err) == TAR_ERROR,
	    "too many entries before the wanted one");
	got_reset(&g);
	free(a.buf);

	a.buf = NULL;
	a.len = 0;
	ar_header(&a, "link", NULL, 0, '2', false);
	ar_end(&a);
	CHECK(run(&a, "link", 1, &g, &err) == TAR_ERROR,
	    "a symbolic link is not a regular file");
	got_reset(&g);
	free(a.buf);

	/* Base-256 size (GNU, for files of 8 GiB and more). */
	a.buf = NULL;
	a.len = 0;
	ar_header(&a, "b256", NULL, 0, '0', true);
	{
		unsigned char *h = a.buf, sumf[8];
		unsigned sum = 0;
		size_t j;

		memset(h + 124, 0, 12);
		h[124] = 0x80;
		h[135] = 3;
		memset(h + 148, ' ', 8);
		for (j = 0; j < 512; j++)
			sum += h[j];
		octal(sumf, 7, sum);
		memcpy(h + 148, sumf, 7);
	}
	ar_data(&a, "xyz", 3);
	ar_end(&a);
	CHECK(run(&a, "b256", 1, &g, &err) == TAR_DONE && same(&g, "xyz"),
	    "base-256 size");
	got_reset(&g);
	free(a.buf);

	/* An empty stream and a cut header. */
	a.buf = NULL;
	a.len = 0;
	CHECK(run(&a, "x", 1, &g, &err) == TAR_NOT_FOUND, "empty stream");
	ar_file(&a, "x", "1");
	a.len = 100;
	CHECK(run(&a, "x", 1, &g, &err) == TAR_ERROR, "stream cut in a header");
	got_reset(&g);
	free(a.buf);
}

/*
 * Mutated and random streams: the parser must end in a final state or ask
 * for more, never read out of bounds (the sanitizer build checks), and
 * never pass on more data than the entry's declared size.
 */
static void
test_mutations(void)
{
	struct ar	 a = { 0 };
	struct error	 err;
	unsigned char	*copy;
	unsigned	 seed = 12345;
	int		 i, bad = 0;
	char		 rec[256];

	pax_record(rec, sizeof(rec), "path=wanted.bin");
	ar_header(&a, "PaxHeaders/x", NULL, strlen(rec), 'x', false);
	ar_data(&a, rec, strlen(rec));
	ar_header(&a, "././@LongLink", NULL, 11, 'L', true);
	ar_data(&a, "other.name", 11);
	ar_file(&a, "x", "some data here");
	ar_file(&a, "wanted.bin", "the wanted data");
	ar_end(&a);
	copy = malloc(a.len);
	for (i = 0; i < 3000; i++) {
		struct got	 g = { 0 };
		struct ar	 m = { copy, a.len };
		int		 k, flips = 1 + (int)(seed % 8);

		memcpy(copy, a.buf, a.len);
		for (k = 0; k < flips; k++) {
			seed = seed * 1103515245 + 12345;
			copy[(seed >> 8) % a.len] = (unsigned char)(seed >> 20);
		}
		if (i % 3 == 0) {
			/* Fix the checksums of the headers, so the fields are parsed. */
			for (size_t off = 0; off + 512 <= a.len; off += 512) {
				if (memcmp(a.buf + off + 257, "ustar", 5) != 0)
					continue;
				unsigned sum = 0;

				memset(copy + off + 148, ' ', 8);
				for (size_t j = 0; j < 512; j++)
					sum += copy[off + j];
				octal(copy + off + 148, 7, sum);
				copy[off + 155] = ' ';
			}
		}
		(void)run(&m, "wanted.bin", 1 + i % 700, &g, &err);
		if (g.begins > 1 || (g.begins == 1 && g.len > g.size))
			bad++;
		got_reset(&g);
	}
	CHECK(bad == 0, "3000 mutated archives: no overrun, at most one entry passed on");
	for (i = 0; i < 200; i++) {
		struct got	 g = { 0 };
		struct ar	 m = { copy, a.len };

		for (size_t j = 0; j < a.len; j++) {
			seed = seed * 1103515245 + 12345;
			copy[j] = (unsigned char)(seed >> 16);
		}
		(void)run(&m, "wanted.bin", 1 + i % 100, &g, &err);
		if (g.begins != 0)
			bad++;
		got_reset(&g);
	}
	CHECK(bad == 0, "200 random streams: nothing passed on");
	free(copy);
	free(a.buf);
}

/* Archives written by the system's tar, as a real writer makes them. */
static void
test_system_tar(void)
{
	static const char *const formats[] = { "gnu", "pax", "ustar" };
	char		 dir[] = "/tmp/test_tar.XXXXXX", cmd[1024], path[600];
	char		 longname[201];
	const char	*names[2];
	struct error	 err;
	size_t		 f, k;
	FILE		*fp;

	if (system("tar --version >/dev/null 2>&1") != 0) {
		SKIP("system tar", "no tar command");
		return;
	}
	if (mkdtemp(dir) == NULL) {
		CHECK(0, "mkdtemp");
		return;
	}
	memset(longname, 'L', 200);
	memcpy(longname + 196, ".bin", 4);
	longname[200] = '\0';
	names[0] = longname;
	names[1] = "caf\xc3\xa9 \xe2\x98\x95.txt";
	for (k = 0; k < 2; k++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[k]);
		if ((fp = fopen(path, "w")) == NULL) {
			CHECK(0, "write a file for tar");
			continue;
		}
		for (int i = 0; i < 2000; i++)
			fprintf(fp, "line %d of %s\n", i, k == 0 ? "long" : "cafe");
		fclose(fp);
	}
	for (f = 0; f < sizeof(formats) / sizeof(formats[0]); f++) {
		for (k = 0; k < 2; k++) {
			struct ar	 a = { 0 };
			struct got	 g = { 0 };
			unsigned char	 buf[4096];
			size_t		 n;
			char		 name[128], want[64];
			enum tar_rc	 rc;

			/* ustar cannot hold a 200-byte name with no '/'. */
			if (k == 0 && strcmp(formats[f], "ustar") == 0)
				continue;
			snprintf(cmd, sizeof(cmd), "cd %s && tar --format=%s -cf - "
			    "-- * 2>/dev/null", dir, formats[f]);
			if ((fp = popen(cmd, "r")) == NULL)
				continue;
			while ((n = fread(buf, 1, sizeof(buf), fp)) > 0)
				ar_add(&a, buf, n);
			pclose(fp);
			rc = run(&a, names[k], 1, &g, &err);
			snprintf(want, sizeof(want), "line 1999 of %s\n",
			    k == 0 ? "long" : "cafe");
			snprintf(name, sizeof(name), "system tar --format=%s, %s name",
			    formats[f], k == 0 ? "200-byte" : "non-ASCII");
			CHECK(rc == TAR_DONE && g.len > 20000 &&
			    memcmp(g.data + g.len - strlen(want), want,
			    strlen(want)) == 0, name);
			got_reset(&g);
			free(a.buf);
		}
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# could not remove %s\n", dir);
}

int
main(void)
{
	test_ustar();
	test_big_data();
	test_empty_file();
	test_prefix();
	test_gnu_longname();
	test_pax();
	test_malformed();
	test_mutations();
	test_system_tar();
	return check_status();
}
