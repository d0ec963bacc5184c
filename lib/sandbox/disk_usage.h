/*
 * disk_usage.h: the bytes a directory tree holds on its file system,
 * measured on the host (sandbox/guard_disk.c: /sandbox's volume in watchdog
 * mode), as `du -sx -B1` counts them.
 *
 * The tree belongs to a hostile container whose root may change it while
 * it is read: symbolic links are never followed (openat with O_NOFOLLOW,
 * fstatat with AT_SYMLINK_NOFOLLOW), no other file system is entered
 * (st_dev), a file with several links is counted once, and the walk is
 * an explicit stack of at most DISK_USAGE_MAX_DEPTH open directories
 * with a deadline. Whatever it cannot read in full is a failure, never a
 * smaller sum.
 */
#ifndef CS_DISK_USAGE_H
#define CS_DISK_USAGE_H

#include "base/error.h"

/* Directories deeper than this below the top fail the walk. */
#define DISK_USAGE_MAX_DEPTH	128

/*
 * Sum the allocated bytes (st_blocks * 512) of dirfd's tree, itself
 * included, by deadline_ms (monotonic, clock.h). dirfd stays open and its
 * position untouched. 0 with *bytes, or -1 (err says why: a deadline
 * passed, a directory too deep or unreadable).
 */
int	disk_usage(int dirfd, long long deadline_ms, long long *bytes,
	    struct error *);

#endif
