/*
 * disk_usage.c: the bytes a hostile tree holds, walked without following
 * links; see disk_usage.h.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clock.h"
#include "sandbox/disk_usage.h"

/*
 * Files with several links seen so far, by device and inode: open
 * addressing, filled to 3/4 at most. Past that a link is counted again
 * (more, never less).
 */
#define SEEN_SLOTS	(1u << 14)

struct seen {
	struct { dev_t dev; ino_t ino; bool used; } *slot;
	size_t	 n;
	bool	 full;
};

/* true when (dev, ino) was already there; false when added or no room. */
static bool
seen_before(struct seen *s, const struct stat *st)
{
	size_t i;

	if (s->full)
		return false;
	if (s->slot == NULL &&
	    (s->slot = calloc(SEEN_SLOTS, sizeof(*s->slot))) == NULL) {
		s->full = true;
		return false;
	}
	i = ((uint64_t)st->st_ino * 0x9e3779b97f4a7c15ULL ^
	    (uint64_t)st->st_dev) & (SEEN_SLOTS - 1);
	for (; s->slot[i].used; i = (i + 1) & (SEEN_SLOTS - 1))
		if (s->slot[i].ino == st->st_ino && s->slot[i].dev == st->st_dev)
			return true;
	if (++s->n > SEEN_SLOTS / 4 * 3) {
		s->full = true;
		return false;
	}
	s->slot[i].used = true;
	s->slot[i].dev = st->st_dev;
	s->slot[i].ino = st->st_ino;
	return false;
}

static long long
add(long long sum, const struct stat *st)
{
	long long b = st->st_blocks > 0 ? (long long)st->st_blocks : 0;

	if (b > (LLONG_MAX / 2 - sum) / 512)
		return LLONG_MAX / 2;
	return sum + b * 512;
}

int
disk_usage(int top, long long deadline_ms, long long *bytes,
    struct error *err)
{
	DIR		*stack[DISK_USAGE_MAX_DEPTH + 1];
	struct dirent	*ent;
	struct stat	 st;
	struct seen	 seen = { NULL, 0, false };
	dev_t		 dev;
	long long	 sum;
	int		 depth = 0, fd, rc = -1;

	*bytes = 0;
	if (fstat(top, &st) == -1)
		return error_set(err, "fstat: %s", strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return error_set(err, "not a directory");
	dev = st.st_dev;
	sum = add(0, &st);
	/* A descriptor of its own, so top's position is left alone. */
	if ((fd = openat(top, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return error_set(err, "open: %s", strerror(errno));
	if ((stack[0] = fdopendir(fd)) == NULL) {
		error_set(err, "fdopendir: %s", strerror(errno));
		close(fd);
		return -1;
	}
	while (depth >= 0) {
		if (clock_ms() > deadline_ms) {
			error_set(err, "the walk did not finish in time");
			goto out;
		}
		errno = 0;
		if ((ent = readdir(stack[depth])) == NULL) {
			if (errno != 0) {
				error_set(err, "readdir: %s", strerror(errno));
				goto out;
			}
			closedir(stack[depth--]);
			continue;
		}
		if (strcmp(ent->d_name, ".") == 0 ||
		    strcmp(ent->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(stack[depth]), ent->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1) {
			if (errno == ENOENT)	/* removed meanwhile */
				continue;
			error_set(err, "fstatat: %s", strerror(errno));
			goto out;
		}
		if (st.st_dev != dev)		/* a mount point: not ours */
			continue;
		if (!S_ISDIR(st.st_mode) && st.st_nlink > 1 &&
		    seen_before(&seen, &st))
			continue;
		sum = add(sum, &st);
		if (!S_ISDIR(st.st_mode))
			continue;
		if (depth + 1 > DISK_USAGE_MAX_DEPTH) {
			error_set(err, "directories nest deeper than %d",
			    DISK_USAGE_MAX_DEPTH);
			goto out;
		}
		fd = openat(dirfd(stack[depth]), ent->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd == -1) {
			/* Replaced meanwhile by a link or a file: counted. */
			if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
				continue;
			error_set(err, "open: %s", strerror(errno));
			goto out;
		}
		if (fstat(fd, &st) == -1 || st.st_dev != dev) {
			close(fd);
			continue;
		}
		if ((stack[depth + 1] = fdopendir(fd)) == NULL) {
			error_set(err, "fdopendir: %s", strerror(errno));
			close(fd);
			goto out;
		}
		depth++;
	}
	*bytes = sum;
	rc = 0;
out:
	for (; depth >= 0; depth--)
		closedir(stack[depth]);
	free(seen.slot);
	return rc;
}
