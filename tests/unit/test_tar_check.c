/*
 * test_tar_check.c: the check of a whole archive read back on restore
 * (lib/engine/tar_check.c): archives of a "sandbox" folder written by the
 * system's tar (pax and GNU formats: files, folders, symbolic and hard
 * links, a FIFO, long and non-ASCII names) pass, in pieces of one byte and
 * whole; archives built here block by block with one thing wrong fail.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "engine/tar.h"

struct ar {
	unsigned char	*buf;
	size_t		 len;
};

static void
ar_add(struct ar *a, const void *p, size_t n)
{
	if ((a->buf = realloc(a->buf, a->len + n)) == NULL)
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

static void
ar_entry(struct ar *a, const char *name, char type, const char *link,
    const char *data, unsigned mode)
{
	static const unsigned char zero[512];
	unsigned char	h[512];
	unsigned	sum = 0;
	size_t		i, n = data != NULL ? strlen(data) : 0;

	memset(h, 0, sizeof(h));
	memcpy(h, name, strnlen(name, 100));
	octal(h + 100, 8, mode);
	octal(h + 108, 8, 1000);
	octal(h + 116, 8, 1000);
	octal(h + 124, 12, n);
	octal(h + 136, 12, 1700000000);
	h[156] = (unsigned char)type;
	if (link != NULL)
		memcpy(h + 157, link, strnlen(link, 100));
	memcpy(h + 257, "ustar\0" "00", 8);
	memset(h + 148, ' ', 8);
	for (i = 0; i < sizeof(h); i++)
		sum += h[i];
	octal(h + 148, 7, sum);
	h[155] = ' ';
	ar_add(a, h, sizeof(h));
	if (n > 0) {
		ar_add(a, data, n);
		if (n % 512 != 0)
			ar_add(a, zero, 512 - n % 512);
	}
}

static void
ar_end(struct ar *a)
{
	static const unsigned char zero[1024];

	ar_add(a, zero, sizeof(zero));
}

/*
 * 0 when the archive passes, fed in pieces of step bytes (0: whole), in
 * GNU tar's incremental form when gnu.
 */
static int
check_as(const struct ar *a, bool gnu, size_t step, char *why, size_t whysz)
{
	struct tar_check	*c = tar_check_new("sandbox");
	struct error		 err;
	unsigned long long	 bytes;
	size_t			 off, n;
	long			 entries;
	int			 rc = 0;

	why[0] = '\0';
	if (c == NULL)
		abort();
	if (gnu)
		tar_check_incremental(c);
	for (off = 0; off < a->len && rc == 0; off += n) {
		n = step == 0 ? a->len : step;
		if (n > a->len - off)
			n = a->len - off;
		rc = tar_check_feed(c, a->buf + off, n, &err);
	}
	if (rc == 0)
		rc = tar_check_end(c, &entries, &bytes, &err);
	if (rc == -1)
		snprintf(why, whysz, "%.200s", err.msg);
	tar_check_free(c);
	return rc;
}

static int
check(const struct ar *a, size_t step, char *why, size_t whysz)
{
	return check_as(a, false, step, why, whysz);
}

/* A good base: sandbox/, a file, a folder with a file, links, a FIFO. */
static void
base(struct ar *a)
{
	ar_entry(a, "sandbox/", '5', NULL, NULL, 040755);
	ar_entry(a, "sandbox/a.txt", '0', NULL, "hello\n", 0644);
	ar_entry(a, "sandbox/d/", '5', NULL, NULL, 0751);
	ar_entry(a, "sandbox/d/f", '0', NULL, "x", 0600);
	ar_entry(a, "sandbox/ln", '2', "/etc/passwd", NULL, 0777);
	ar_entry(a, "sandbox/hard", '1', "sandbox/a.txt", NULL, 0644);
	ar_entry(a, "sandbox/fifo", '6', NULL, NULL, 0644);
}

static void
test_built(void)
{
	static const struct {
		const char	*what;
		const char	*name;
		char		 type;
		const char	*link;
		const char	*data;
		const char	*want;
	} bad[] = {
		{ "a name outside the root", "etc/passwd", '0', NULL, "x",
		  "outside the archive's folder" },
		{ "a .. part", "sandbox/../etc/passwd", '0', NULL, "x",
		  "outside the archive's folder" },
		{ "an absolute name", "/sandbox/x", '0', NULL, "x",
		  "outside the archive's folder" },
		{ "a root of another name", "sandboxes/x", '0', NULL, "x",
		  "outside the archive's folder" },
		{ "an entry below a symbolic link", "sandbox/ln/x", '0', NULL,
		  "x", "walk order" },
		{ "an entry below a missing folder", "sandbox/nope/x", '0',
		  NULL, "x", "walk order" },
		{ "a device node", "sandbox/dev", '3', NULL, NULL,
		  "type not kept" },
		{ "a hard link to outside", "sandbox/h2", '1', "etc/shadow",
		  NULL, "hard link to outside" },
		{ "a hard link going up", "sandbox/h3", '1', "sandbox/../x",
		  NULL, "hard link to outside" },
		{ "a link without a target", "sandbox/l2", '2', "", NULL,
		  "without a target" },
		{ "data on a symbolic link", "sandbox/l3", '2', "x", "data",
		  "data on an entry" },
	};
	struct ar	a = { NULL, 0 };
	char		why[256], name[128];
	size_t		i;

	base(&a);
	ar_end(&a);
	CHECK(check(&a, 0, why, sizeof(why)) == 0, "a good archive passes whole");
	CHECK(check(&a, 1, why, sizeof(why)) == 0,
	    "a good archive passes byte by byte");
	free(a.buf);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		a.buf = NULL;
		a.len = 0;
		base(&a);
		ar_entry(&a, bad[i].name, bad[i].type, bad[i].link,
		    bad[i].data, 0644);
		ar_end(&a);
		snprintf(name, sizeof(name), "refused: %s", bad[i].what);
		CHECK(check(&a, 7, why, sizeof(why)) == -1 &&
		    strstr(why, bad[i].want) != NULL, name);
		free(a.buf);
	}

	/* The root must come first, as a folder. */
	a.buf = NULL;
	a.len = 0;
	ar_entry(&a, "sandbox/a", '0', NULL, "x", 0644);
	ar_end(&a);
	CHECK(check(&a, 0, why, sizeof(why)) == -1, "refused: no root folder first");
	free(a.buf);

	/* Cut short, bytes after the end, a bad checksum. */
	a.buf = NULL;
	a.len = 0;
	base(&a);
	CHECK(check(&a, 0, why, sizeof(why)) == -1 && strstr(why, "cut short"),
	    "refused: an archive without its end");
	ar_end(&a);
	ar_add(&a, "junk", 4);
	CHECK(check(&a, 0, why, sizeof(why)) == -1 &&
	    strstr(why, "after the archive's end"), "refused: bytes after the end");
	a.len -= 4;
	a.buf[512 * 1 + 150] ^= 1;
	CHECK(check(&a, 0, why, sizeof(why)) == -1 && strstr(why, "checksum"),
	    "refused: a bad checksum");
	free(a.buf);
}

/* GNU tar's incremental form: folders first, dumpdirs. */
static void
test_incremental(void)
{
	struct ar	a;
	char		why[256];

	memset(&a, 0, sizeof(a));
	ar_entry(&a, "sandbox/", 'D', NULL, "Ya.txt\0Dd\0", 040755);
	ar_entry(&a, "sandbox/d/", 'D', NULL, "Yf\0", 0751);
	ar_entry(&a, "sandbox/a.txt", '0', NULL, "hello\n", 0644);
	ar_entry(&a, "sandbox/d/f", '0', NULL, "x", 0600);
	ar_end(&a);
	CHECK(check_as(&a, true, 0, why, sizeof(why)) == 0 &&
	    check_as(&a, true, 1, why, sizeof(why)) == 0,
	    "incremental: dumpdirs, folders before files, pass");
	CHECK(check(&a, 0, why, sizeof(why)) == -1 && strstr(why, "type"),
	    "incremental: refused where the engine's form is expected");
	free(a.buf);

	memset(&a, 0, sizeof(a));
	ar_entry(&a, "sandbox/d/", 'D', NULL, "", 0751);
	ar_entry(&a, "sandbox/", 'D', NULL, "", 040755);
	ar_end(&a);
	CHECK(check_as(&a, true, 0, why, sizeof(why)) == -1 &&
	    strstr(why, "order"), "incremental: refused, the root not first");
	free(a.buf);

	memset(&a, 0, sizeof(a));
	ar_entry(&a, "sandbox/", 'D', NULL, "", 040755);
	ar_entry(&a, "sandbox/../etc/passwd", '0', NULL, "x", 0644);
	ar_end(&a);
	CHECK(check_as(&a, true, 0, why, sizeof(why)) == -1 &&
	    strstr(why, "outside"), "incremental: refused, a name with ..");
	free(a.buf);

	memset(&a, 0, sizeof(a));
	ar_entry(&a, "sandbox/", 'D', NULL, "", 040755);
	ar_entry(&a, "sandbox/dev", '3', NULL, NULL, 0644);
	ar_end(&a);
	CHECK(check_as(&a, true, 0, why, sizeof(why)) == -1 &&
	    strstr(why, "type"), "incremental: refused, a device");
	free(a.buf);
}

/* The file at path into a (appended). -1 when it cannot be read. */
static int
ar_file(struct ar *a, const char *path)
{
	unsigned char	 buf[65536];
	FILE		*f;
	size_t		 n;

	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		ar_add(a, buf, n);
	fclose(f);
	return 0;
}

static void
test_system_tar(void)
{
	static const char *const formats[] = { "pax", "gnu" };
	char	 dir[] = "/tmp/cs-tarcheck-XXXXXX", cmd[1024], why[256];
	char	 name[128], path[256];
	struct ar a;
	FILE	*f;
	size_t	 i, n;
	unsigned char buf[65536];

	if (mkdtemp(dir) == NULL) {
		SKIP("system tar archives", "no temporary folder");
		return;
	}
	snprintf(cmd, sizeof(cmd), "cd %s && mkdir -p sandbox/d/e "
	    "'sandbox/with space/\xc3\xbcn' && echo hi > sandbox/d/e/f && "
	    "ln -s ../../etc/passwd sandbox/up && ln -s missing sandbox/dangling && "
	    "ln sandbox/d/e/f sandbox/hard && mkfifo sandbox/fifo && "
	    "echo x > 'sandbox/with space/\xc3\xbcn/%0150d' && "
	    "head -c 100000 /dev/urandom > sandbox/big", dir, 0);
	if (system(cmd) != 0) {
		SKIP("system tar archives", "cannot make the folder");
		return;
	}
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), "%s/a.tar", dir);
		snprintf(cmd, sizeof(cmd), "cd %s && tar --format=%s -cf %s "
		    "sandbox", dir, formats[i], path);
		if (system(cmd) != 0 || (f = fopen(path, "rb")) == NULL) {
			SKIP("system tar archives", "tar failed");
			continue;
		}
		a.buf = NULL;
		a.len = 0;
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			ar_add(&a, buf, n);
		fclose(f);
		snprintf(name, sizeof(name), "system tar --format=%s passes",
		    formats[i]);
		CHECK(check(&a, 0, why, sizeof(why)) == 0 &&
		    check(&a, 1, why, sizeof(why)) == 0, name);
		if (why[0] != '\0')
			printf("# %s\n", why);
		free(a.buf);
	}
	/* GNU tar --listed-incremental: a full archive, then a difference. */
	snprintf(cmd, sizeof(cmd), "cd %s && tar --listed-incremental=s.snar "
	    "--numeric-owner -cf full.tar sandbox && sleep 1 && "
	    "echo changed > sandbox/d/e/f && rm sandbox/big && "
	    "mkdir sandbox/new && echo n > sandbox/new/n && "
	    "tar --listed-incremental=s.snar --numeric-owner -cf diff.tar "
	    "sandbox", dir);
	if (system(cmd) != 0)
		SKIP("GNU tar incremental archives", "tar failed");
	else {
		static const char *const which[] = { "full.tar", "diff.tar" };

		for (i = 0; i < 2; i++) {
			memset(&a, 0, sizeof(a));
			snprintf(path, sizeof(path), "%s/%s", dir, which[i]);
			if (ar_file(&a, path) == -1)
				abort();
			snprintf(name, sizeof(name), "GNU tar --listed-incremental "
			    "%s passes as incremental, not as the engine's",
			    which[i]);
			CHECK(check_as(&a, true, 0, why, sizeof(why)) == 0 &&
			    check_as(&a, true, 1, why, sizeof(why)) == 0 &&
			    check(&a, 0, why, sizeof(why)) == -1, name);
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
	test_built();
	test_incremental();
	test_system_tar();
	return check_status();
}
