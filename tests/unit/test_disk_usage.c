/* test_disk_usage: the host-side walk of /sandbox's volume (disk_usage.h). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "check.h"
#include "sandbox/disk_usage.h"

static char	top[64], outside[64];

static void
path(char *b, size_t n, const char *dir, const char *name)
{
	snprintf(b, n, "%s/%s", dir, name);
}

/* A file of len bytes of data (so blocks are allocated). */
static void
file(const char *dir, const char *name, size_t len)
{
	char	 p[PATH_MAX], buf[4096];
	FILE	*f;

	memset(buf, 'x', sizeof(buf));
	path(p, sizeof(p), dir, name);
	if ((f = fopen(p, "w")) == NULL)
		exit(2);
	for (; len > 0; len -= len < sizeof(buf) ? len : sizeof(buf))
		fwrite(buf, 1, len < sizeof(buf) ? len : sizeof(buf), f);
	if (fclose(f) != 0)
		exit(2);
}

static long long
blocks(const char *dir, const char *name)
{
	char		p[PATH_MAX];
	struct stat	st;

	path(p, sizeof(p), dir, name);
	if (lstat(p, &st) == -1)
		exit(2);
	return (long long)st.st_blocks * 512;
}

static int
walk(long long deadline_ms, long long *sum, struct error *e)
{
	int fd, rc;

	if ((fd = open(top, O_RDONLY | O_DIRECTORY)) == -1)
		exit(2);
	rc = disk_usage(fd, deadline_ms, sum, e);
	close(fd);
	return rc;
}

int
main(void)
{
	char		 p[PATH_MAX], q[PATH_MAX], cmd[256];
	struct error	 e;
	long long	 sum, want;
	int		 i, fd;

	snprintf(top, sizeof(top), "/tmp/cs-du.XXXXXX");
	snprintf(outside, sizeof(outside), "/tmp/cs-du-out.XXXXXX");
	if (mkdtemp(top) == NULL || mkdtemp(outside) == NULL)
		return 2;
	file(outside, "big", 1 << 20);
	file(top, "a", 64 << 10);
	path(p, sizeof(p), top, "a");
	path(q, sizeof(q), top, "hard");
	if (link(p, q) == -1)
		return 2;
	path(p, sizeof(p), top, "nested");
	if (mkdir(p, 0700) == -1)
		return 2;
	file(p, "b", 32 << 10);
	path(p, sizeof(p), outside, "big");
	path(q, sizeof(q), top, "nested/to-big");
	if (symlink(p, q) == -1)
		return 2;
	path(q, sizeof(q), top, "to-outside");
	if (symlink(outside, q) == -1)
		return 2;

	want = blocks(top, ".") + blocks(top, "a") + blocks(top, "nested") +
	    blocks(top, "nested/b") + blocks(top, "nested/to-big") +
	    blocks(top, "to-outside");
	CHECK(walk(clock_ms() + 5000, &sum, &e) == 0, "the tree is walked");
	CHECK(sum == want, "the sum counts the hard link once, the links "
	    "themselves and not what they point to");
	CHECK(sum < blocks(outside, "big"), "the symbolic link's 1 MiB target "
	    "outside is not counted");
	CHECK(sum >= (96 << 10), "both files are counted");

	CHECK(walk(clock_ms() - 1, &sum, &e) == -1 && sum == 0 &&
	    strstr(e.msg, "in time") != NULL, "a walk past its deadline fails");

	fd = open(top, O_RDONLY | O_DIRECTORY);
	CHECK(fd != -1 && disk_usage(fd, clock_ms() + 5000, &sum, &e) == 0 &&
	    disk_usage(fd, clock_ms() + 5000, &want, &e) == 0 && sum == want,
	    "the caller's descriptor serves again");
	close(fd);
	path(p, sizeof(p), top, "a");
	CHECK((fd = open(p, O_RDONLY)) != -1 &&
	    disk_usage(fd, clock_ms() + 5000, &sum, &e) == -1,
	    "a file is no tree");
	close(fd);

	/* One level deeper than allowed fails, never a smaller sum. */
	path(p, sizeof(p), top, "deep");
	for (i = 0; i <= DISK_USAGE_MAX_DEPTH; i++) {
		if (mkdir(p, 0700) == -1)
			return 2;
		if (chdir(p) == -1)
			return 2;
		snprintf(p, sizeof(p), "d");
	}
	if (chdir("/") == -1)
		return 2;
	CHECK(walk(clock_ms() + 5000, &sum, &e) == -1 &&
	    strstr(e.msg, "deeper") != NULL, "too deep a tree fails the walk");

	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", top, outside);
	if (system(cmd) != 0)
		return 2;
	return check_status();
}
