/*
 * output.h: bounded capture of one output stream, and UTF-8 repair.
 *
 * A capture keeps the first and the last bytes of a stream up to a limit and
 * counts what it drops in between, so a command printing gigabytes uses a
 * fixed amount of memory.
 */
#ifndef CS_OUTPUT_H
#define CS_OUTPUT_H

#include <stddef.h>

struct capture;

/* A capture keeping at most max bytes (half head, half tail). NULL on ENOMEM. */
struct capture		*capture_new(size_t max);
void			 capture_free(struct capture *);
void			 capture_add(struct capture *, const void *buf, size_t len);
unsigned long long	 capture_total(const struct capture *);
/*
 * Count n bytes as written but dropped between head and tail: for a capture
 * rebuilt from a kept head and tail (add the head, skip, add the tail).
 */
void			 capture_skip(struct capture *, unsigned long long n);

/*
 * The kept bytes as they are, for writing them out (the supervisor's
 * record, containers/supervisor): the head, then the tail in at most two
 * pieces, oldest first (a piece may be empty). Valid until the next add.
 */
void	capture_parts(const struct capture *, const unsigned char **head,
	    size_t *head_len, const unsigned char *tail[2], size_t tail_len[2]);

/*
 * The kept bytes as valid UTF-8 (see utf8_repair), with a line
 * "[... N bytes cut ...]" where the middle was dropped; cuts fall on
 * character boundaries. Returns a malloc'd NUL-terminated string with its
 * length in *len and the number of bytes left out in *cut; NULL on ENOMEM.
 */
char	*capture_text(const struct capture *, size_t *len, unsigned long long *cut);

/*
 * Copy buf into a malloc'd NUL-terminated string that is valid UTF-8: each
 * byte that is not part of a well-formed UTF-8 sequence (and each NUL) becomes
 * U+FFFD. Its length goes to *outlen unless outlen is NULL. Returns NULL on
 * ENOMEM.
 */
char	*utf8_repair(const char *buf, size_t len, size_t *outlen);

#endif
