/*
 * output.c: bounded capture of one output stream, and UTF-8 repair.
 *
 * A capture has a head buffer that fills first and then a ring buffer that
 * always holds the last bytes written. Both are at most half the limit and
 * are allocated when first needed, so a quiet command costs nothing and a
 * command printing gigabytes costs exactly the limit.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"

struct capture {
	size_t			 head_max;	/* capacity of head */
	size_t			 tail_max;	/* capacity of the tail ring */
	unsigned char		*head;
	size_t			 head_len;
	unsigned char		*tail;		/* ring of tail_max bytes */
	size_t			 tail_start;	/* index of the oldest byte */
	size_t			 tail_len;
	unsigned long long	 total;
};

struct capture *
capture_new(size_t max)
{
	struct capture *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->head_max = max / 2;
	c->tail_max = max - c->head_max;
	return c;
}

void
capture_free(struct capture *c)
{
	if (c == NULL)
		return;
	free(c->head);
	free(c->tail);
	free(c);
}

unsigned long long
capture_total(const struct capture *c)
{
	return c->total;
}

/*
 * Append to the tail ring, overwriting the oldest bytes. When the ring
 * cannot be allocated the bytes are only counted: capture_text then reports
 * them as cut, which is the honest answer.
 */
static void
tail_add(struct capture *c, const unsigned char *p, size_t len)
{
	size_t end, n;

	if (c->tail_max == 0)
		return;
	if (c->tail == NULL && (c->tail = malloc(c->tail_max)) == NULL)
		return;
	/* Only the last tail_max bytes of p can survive. */
	if (len >= c->tail_max) {
		memcpy(c->tail, p + (len - c->tail_max), c->tail_max);
		c->tail_start = 0;
		c->tail_len = c->tail_max;
		return;
	}
	while (len > 0) {
		end = (c->tail_start + c->tail_len) % c->tail_max;
		n = c->tail_max - end;
		if (n > len)
			n = len;
		memcpy(c->tail + end, p, n);
		p += n;
		len -= n;
		if (c->tail_len + n <= c->tail_max)
			c->tail_len += n;
		else {
			/* Overwrote the oldest bytes: the ring is full. */
			c->tail_start = (c->tail_start + (c->tail_len + n -
			    c->tail_max)) % c->tail_max;
			c->tail_len = c->tail_max;
		}
	}
}

void
capture_add(struct capture *c, const void *buf, size_t len)
{
	const unsigned char	*p = buf;
	size_t			 n;

	if (c == NULL || len == 0)
		return;
	c->total += len;
	if (c->head_len < c->head_max) {
		if (c->head == NULL &&
		    (c->head = malloc(c->head_max)) == NULL) {
			c->head_max = 0;	/* degrade to tail only */
		} else {
			n = c->head_max - c->head_len;
			if (n > len)
				n = len;
			memcpy(c->head + c->head_len, p, n);
			c->head_len += n;
			p += n;
			len -= n;
		}
	}
	if (len > 0)
		tail_add(c, p, len);
}

void
capture_parts(const struct capture *c, const unsigned char **head,
    size_t *head_len, const unsigned char *tail[2], size_t tail_len[2])
{
	size_t first;

	*head = c->head;
	*head_len = c->head_len;
	tail[0] = tail[1] = c->tail;
	tail_len[0] = tail_len[1] = 0;
	if (c->tail_len == 0)
		return;
	first = c->tail_max - c->tail_start;
	if (first > c->tail_len)
		first = c->tail_len;
	tail[0] = c->tail + c->tail_start;
	tail_len[0] = first;
	tail_len[1] = c->tail_len - first;
}

void
capture_skip(struct capture *c, unsigned long long n)
{
	if (c != NULL)
		c->total += n;
}

/* Length of the UTF-8 sequence a lead byte announces, 0 if not a lead byte. */
static size_t
utf8_seqlen(unsigned char b)
{
	if (b < 0x80)
		return 1;
	if (b >= 0xc2 && b <= 0xdf)
		return 2;
	if (b >= 0xe0 && b <= 0xef)
		return 3;
	if (b >= 0xf0 && b <= 0xf4)
		return 4;
	return 0;
}

/*
 * Length of the well-formed UTF-8 sequence at p[0..len) (Unicode 15,
 * table 3-7), or 0 when p does not start one. NUL counts as malformed.
 */
static size_t
utf8_valid(const unsigned char *p, size_t len)
{
	size_t		n, i;
	unsigned char	lo = 0x80, hi = 0xbf;

	if (len == 0 || p[0] == 0)
		return 0;
	if ((n = utf8_seqlen(p[0])) == 0 || n > len)
		return 0;
	if (p[0] == 0xe0)
		lo = 0xa0;		/* no overlong 3-byte forms */
	else if (p[0] == 0xed)
		hi = 0x9f;		/* no surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90;		/* no overlong 4-byte forms */
	else if (p[0] == 0xf4)
		hi = 0x8f;		/* nothing above U+10FFFF */
	for (i = 1; i < n; i++) {
		if (p[i] < lo || p[i] > hi)
			return 0;
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/* Append the repaired form of p[0..len) at out; returns bytes written. */
static size_t
repair_into(char *out, const unsigned char *p, size_t len)
{
	size_t i = 0, o = 0, n;

	while (i < len) {
		if ((n = utf8_valid(p + i, len - i)) > 0) {
			memcpy(out + o, p + i, n);
			o += n;
			i += n;
		} else {
			memcpy(out + o, "\xef\xbf\xbd", 3);	/* U+FFFD */
			o += 3;
			i++;
		}
	}
	return o;
}

char *
utf8_repair(const char *buf, size_t len, size_t *outlen)
{
	char	*out;
	size_t	 n;

	if (len > (SIZE_MAX - 1) / 3)
		return NULL;
	if ((out = malloc(len * 3 + 1)) == NULL)
		return NULL;
	n = repair_into(out, (const unsigned char *)buf, len);
	out[n] = '\0';
	if (outlen != NULL)
		*outlen = n;
	return out;
}

/*
 * Bytes at the end of p[0..len) that start a character the cut split: a
 * lead byte within the last three bytes whose sequence runs past the end.
 */
static size_t
split_at_end(const unsigned char *p, size_t len)
{
	size_t back, n;

	for (back = 1; back <= 3 && back <= len; back++) {
		unsigned char b = p[len - back];

		if (b < 0x80)
			return 0;
		if (b >= 0xc0) {
			n = utf8_seqlen(b);
			return (n > back) ? back : 0;
		}
	}
	return 0;
}

/* Continuation bytes (at most three) at the start of p: a split character. */
static size_t
split_at_start(const unsigned char *p, size_t len)
{
	size_t n = 0;

	while (n < 3 && n < len && (p[n] & 0xc0) == 0x80)
		n++;
	return n;
}

char *
capture_text(const struct capture *c, size_t *len, unsigned long long *cut)
{
	unsigned char		*tail = NULL;
	char			*out = NULL, marker[64];
	size_t			 head_len, tail_len, skip, first, o, mlen, need;
	unsigned long long	 dropped;
	int			 m;

	/* The tail in order, out of the ring. */
	tail_len = c->tail_len;
	if (tail_len > 0) {
		if ((tail = malloc(tail_len)) == NULL)
			goto out;
		first = c->tail_max - c->tail_start;
		if (first > tail_len)
			first = tail_len;
		memcpy(tail, c->tail + c->tail_start, first);
		memcpy(tail + first, c->tail, tail_len - first);
	}
	head_len = c->head_len;
	dropped = c->total - head_len - tail_len;
	skip = 0;
	if (dropped > 0) {
		/* Cut on character boundaries, counting what that drops. */
		size_t h = split_at_end(c->head, head_len);

		head_len -= h;
		skip = split_at_start(tail, tail_len);
		dropped += h + skip;
		m = snprintf(marker, sizeof(marker), "%s[... %llu bytes cut ...]\n",
		    (head_len > 0 && c->head[head_len - 1] != '\n') ? "\n" : "",
		    dropped);
		if (m < 0 || (size_t)m >= sizeof(marker))
			goto out;
		mlen = (size_t)m;
	} else
		mlen = 0;

	/* Both parts are bounded by the limit, so this cannot overflow. */
	need = (head_len + tail_len - skip) * 3 + mlen + 1;
	if ((out = malloc(need)) == NULL)
		goto out;
	if (dropped == 0) {
		/* Nothing dropped: head and tail are one run, repair it whole. */
		unsigned char *all;

		if ((all = malloc(head_len + tail_len + 1)) == NULL) {
			free(out);
			out = NULL;
			goto out;
		}
		if (head_len > 0)
			memcpy(all, c->head, head_len);
		if (tail_len > 0)
			memcpy(all + head_len, tail, tail_len);
		o = repair_into(out, all, head_len + tail_len);
		free(all);
	} else {
		o = repair_into(out, c->head, head_len);
		memcpy(out + o, marker, mlen);
		o += mlen;
		o += repair_into(out + o, tail + skip, tail_len - skip);
	}
	out[o] = '\0';
	*len = o;
	*cut = dropped;
out:
	free(tail);
	return out;
}
