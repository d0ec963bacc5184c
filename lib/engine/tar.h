/*
 * tar.h: pick one regular file out of a tar stream as it arrives.
 *
 * The Docker archive API (GET /containers/N/archive?path=P) answers with a
 * tar of P. tar_extract is a push parser for that stream: feed it the bytes
 * in pieces of any size (down to one byte) and it reports the wanted entry's
 * header, then its data, in order, without ever holding more than one
 * 512-byte header block and one bounded metadata record. So a file of any
 * size is streamed in constant memory, and its first bytes can be sent on
 * before the last have arrived.
 *
 * Formats read (POSIX.1-1988 ustar and its GNU and POSIX.1-2001 variants):
 *   - ustar headers, with the 155-byte name prefix when the magic is
 *     "ustar\0";
 *   - GNU long names ('L') and long link names ('K', skipped);
 *   - pax extended headers ('x': path, size, mtime) and global headers ('g',
 *     skipped);
 *   - octal and GNU base-256 numbers.
 * Header checksums are verified. A pax record or long name larger than
 * TAR_META_MAX, more than TAR_MAX_ENTRIES entries before the wanted one, or
 * a malformed header stop the parse with an error.
 */
#ifndef CS_TAR_H
#define CS_TAR_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define TAR_BLOCK		512
#define TAR_META_MAX		(64 * 1024)	/* one pax header or long name */
#define TAR_NAME_MAX		4096		/* an entry's name */
#define TAR_MAX_ENTRIES		64		/* entries looked at before giving up */

/* The wanted entry, as its headers describe it. */
struct tar_entry {
	const char		*name;	/* as found, NUL-terminated */
	unsigned long long	 size;	/* bytes of data that follow */
	long long		 mtime;	/* unix seconds */
};

/*
 * What to do with the wanted entry. begin is called once, before any data;
 * data with each piece of its content (never with len 0). Either may return
 * -1 to stop the parse (tar_extract_feed then returns TAR_STOPPED).
 */
struct tar_sink {
	int	(*begin)(void *arg, const struct tar_entry *);
	int	(*data)(void *arg, const void *buf, size_t len);
	void	*arg;
};

enum tar_rc {
	TAR_ERROR = -1,		/* malformed stream, or the entry is not a regular file */
	TAR_MORE = 0,		/* feed more */
	TAR_DONE = 1,		/* the wanted file was passed on whole */
	TAR_STOPPED = 2,	/* a sink callback returned -1 */
	TAR_NOT_FOUND = 3,	/* the archive ended without the wanted entry */
};

struct tar_extract;

/*
 * A parser looking for the regular file called want (compared after
 * removing a leading "./" or "/" and a trailing "/" from entry names).
 * The sink is copied. Returns NULL when out of memory or want is longer
 * than TAR_NAME_MAX. Free with tar_extract_free.
 */
struct tar_extract	*tar_extract_new(const char *want, const struct tar_sink *);
void			 tar_extract_free(struct tar_extract *);

/*
 * Feed the next len bytes of the stream. Returns TAR_MORE while more is
 * needed, or a final state (TAR_DONE, TAR_STOPPED, TAR_NOT_FOUND,
 * TAR_ERROR with err filled); once final, later calls return it again and
 * read nothing. Bytes after the wanted entry are not looked at.
 */
enum tar_rc		 tar_extract_feed(struct tar_extract *, const void *buf,
			    size_t len, struct error *err);

/*
 * Call at the end of the stream: the final state, TAR_NOT_FOUND when the
 * archive ended cleanly (or with its end blocks missing) between entries
 * without the wanted one, TAR_ERROR when it was cut inside an entry.
 */
enum tar_rc		 tar_extract_end(struct tar_extract *, struct error *err);

/*
 * Writing: the header of one entry of a tar stream to send (the archive
 * upload, docker_put_stream). type is '0' (regular file) or '5'
 * (directory); mode the permission bits; size the data bytes that follow
 * (a file's data is then padded with zeros to a multiple of TAR_BLOCK, and
 * the archive ends with two zero blocks: tar_padding). A name longer than
 * the ustar field gets a pax extended header ('x', "path" record, POSIX.1-2001)
 * ahead of its ustar header; sizes of 8 GiB and more are written in GNU
 * base-256. Returns the bytes written to out (TAR_BLOCK or 3 * TAR_BLOCK),
 * or -1 when name is empty, longer than TAR_WRITE_NAME_MAX or holds a
 * newline.
 */
#define TAR_WRITE_NAME_MAX	480
#define TAR_HEADER_MAX		(3 * TAR_BLOCK)
long	tar_header_write(char out[TAR_HEADER_MAX], const char *name, char type,
	    unsigned long long size, long long mtime, unsigned mode);
/* Zero bytes that follow size data bytes to end the entry's last block. */
size_t	tar_padding(unsigned long long size);

/*
 * Checking a whole archive before it is sent back (a snapshot's /sandbox,
 * read as hostile on restore): a push parser like tar_extract, fed pieces
 * of any size, holding one header block, one metadata record and the path
 * of the current folder. Every entry must be:
 *   - named root or root/..., with no empty, "." or ".." part, no leading
 *     "/", at most TAR_NAME_MAX bytes (pax "path" and GNU 'L' included);
 *   - a regular file, folder, symbolic link, hard link or FIFO (no device,
 *     no unknown type), with a valid checksum, a mode of at most 0777777 and
 *     numeric owner (the mode may carry the file type bits, as Go writes
 *     them); only regular files carry data;
 *   - in walk order: its parent is root or a folder given before it and
 *     not left since (so no entry is reached through a symbolic link);
 *   - a symbolic link's target at most TAR_NAME_MAX bytes without NUL (kept
 *     as it is, never followed); a hard link's target named as entries are.
 * At most TAR_CHECK_ENTRIES entries. The archive ends with a zero block (or
 * two); only zero bytes may follow. GNU tar's incremental form differs in
 * the walk order and dumpdirs (tar_check_incremental).
 */
#define TAR_CHECK_ENTRIES	(4L * 1000 * 1000)

struct tar_check;

/* A checker for an archive of root (a single name part). NULL: out of memory. */
struct tar_check	*tar_check_new(const char *root);
/*
 * Check GNU tar's incremental form (--listed-incremental) instead: every
 * folder may be a dumpdir ('D', the names it held as its data) and, as
 * GNU tar writes all folders before the files, only the first entry's
 * place is checked (root, a folder). The other rules hold. Call before
 * the first feed.
 */
void			 tar_check_incremental(struct tar_check *);
void			 tar_check_free(struct tar_check *);
/* The next len bytes: 0 while all is well, -1 with err once it is not. */
int			 tar_check_feed(struct tar_check *, const void *buf,
			    size_t len, struct error *err);
/*
 * At the end of the stream: 0 with *entries and *data_bytes (the regular
 * files' bytes) when the archive was whole and valid, or -1 with err.
 */
int			 tar_check_end(struct tar_check *, long *entries,
			    unsigned long long *data_bytes, struct error *err);

#endif
