/*
 * sandbox/muxin.c: see sandbox/muxin.h.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sandbox/muxin.h"

void
muxin_init(struct mux_in *m)
{
	memset(m, 0, sizeof(*m));
	supf_init(&m->frames, SUPF_MUX_MAX);
}

void
muxin_free(struct mux_in *m)
{
	supf_free(&m->frames);
}

int
muxin_stream_init(struct mux_stream *s, uint32_t id)
{
	pthread_condattr_t a;

	memset(s, 0, sizeof(*s));
	s->id = id;
	s->credit = SUPF_MUX_WINDOW;
	if (pthread_condattr_init(&a) != 0)
		return -1;
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	if (pthread_cond_init(&s->cond, &a) != 0) {
		pthread_condattr_destroy(&a);
		return -1;
	}
	pthread_condattr_destroy(&a);
	s->inited = true;
	return 0;
}

void
muxin_stream_free(struct mux_stream *s)
{
	if (s == NULL || !s->inited)
		return;
	pthread_cond_destroy(&s->cond);
	free(s->q);
	s->q = NULL;
	s->qcap = s->qoff = s->qlen = 0;
	s->inited = false;
}

void
muxin_link(struct mux_in *m, struct mux_stream *s)
{
	s->next = m->streams;
	m->streams = s;
}

void
muxin_unlink(struct mux_in *m, struct mux_stream *s)
{
	struct mux_stream **pp;

	for (pp = &m->streams; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	s->next = NULL;
}

size_t
muxin_take(struct mux_stream *s, void *buf, size_t len)
{
	size_t n, first;

	n = len < s->qlen ? len : s->qlen;
	if (n == 0)
		return 0;
	first = s->qcap - s->qoff;
	if (first > n)
		first = n;
	memcpy(buf, s->q + s->qoff, first);
	memcpy((char *)buf + first, s->q, n - first);
	s->qoff = (s->qoff + n) % s->qcap;
	s->qlen -= n;
	return n;
}

/*
 * Room for need bytes in all: the ring grown (doubled, from RING_MIN, at
 * most SUPF_MUX_WINDOW) with what it holds moved to its start. 0, or -1
 * when out of memory.
 */
#define RING_MIN	(16u << 10)

static int
grow(struct mux_stream *s, size_t need)
{
	unsigned char	*nq;
	size_t		 cap = s->qcap != 0 ? s->qcap : RING_MIN;

	while (cap < need)
		cap *= 2;
	if (cap > SUPF_MUX_WINDOW)
		cap = SUPF_MUX_WINDOW;
	if ((nq = malloc(cap)) == NULL)
		return -1;
	s->qlen = s->qlen > 0 ? muxin_take(s, nq, s->qlen) : 0;
	free(s->q);
	s->q = nq;
	s->qcap = cap;
	s->qoff = 0;
	return 0;
}

/* Bytes from the app into the ring; within the window the server gave. */
static int
queue(struct mux_stream *s, const unsigned char *p, size_t len)
{
	size_t tail, first;

	/* The ring's room is exactly the window the supervisor still has. */
	if (s->answer != '+' || s->ended || len > SUPF_MUX_WINDOW - s->qlen)
		return -1;
	if (len == 0)
		return 0;
	if (s->qlen + len > s->qcap && grow(s, s->qlen + len) == -1)
		return -1;
	tail = (s->qoff + s->qlen) % s->qcap;
	first = s->qcap - tail;
	if (first > len)
		first = len;
	memcpy(s->q + tail, p, first);
	memcpy(s->q, p + first, len - first);
	s->qlen += len;
	return 0;
}

static int
on_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct mux_in		*m = arg;
	struct mux_stream	*s;
	uint32_t		 id, v;

	if (type == 'V') {
		if (m->ready || supf_get32(p) != SUPF_MUX_VERSION)
			return -1;
		m->ready = true;
		return 0;
	}
	if (!m->ready || len < 4)
		return -1;
	id = supf_get32(p);
	for (s = m->streams; s != NULL && s->id != id; s = s->next)
		;
	if (s != NULL && s->shut)
		s = NULL;	/* closed on our side: as if unknown */
	switch (type) {
	case 'N':
		if (s == NULL)
			return 0;	/* closed while it connected */
		if (s->answer != 0 || (p[4] != '+' &&
		    p[4] != '-' && (p[4] != 'L' || !s->lane)))
			return -1;
		s->answer = p[4];
		break;
	case 'D':
		if (s == NULL)
			return 0;	/* closed: its last bytes */
		if (s->answer == 'L')
			return -1;	/* handed over: none come this way */
		if (queue(s, p + 4, len - 4) == -1)
			return -1;
		break;
	case 'Z':
		if (s == NULL)
			return 0;
		if (s->answer != '+')
			return -1;
		s->ended = true;
		break;
	case 'G':
		if (s == NULL)
			return 0;
		v = supf_get32(p + 4);
		if (s->answer != '+' || v > SUPF_MUX_WINDOW - s->credit)
			return -1;
		s->credit += v;
		break;
	default:
		return -1;
	}
	pthread_cond_signal(&s->cond);
	return 0;
}

int
muxin_feed(struct mux_in *m, const void *buf, size_t len)
{
	return supf_feed(&m->frames, buf, len, on_frame, m);
}
