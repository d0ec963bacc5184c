/*
 * mux.c: "supervisor mux" (supervisor.c lists the commands): many TCP
 * connections to ports in the container over one exec's stdin and stdout,
 * for preview links (lib/sandbox/portconn.c). The frames and the credit
 * rules are in frames.h, "The mux".
 *
 * One thread polls stdin, the app connections and a pipe; connecting is
 * done by a short thread per stream (a port whose backlog is full may take
 * seconds), which hands its socket back through the pipe, so no stream
 * waits for another. Sockets are non-blocking: a stream whose app does not
 * read keeps the server's bytes here, at most its credit, and holds up no
 * other. Only writes to stdout block: that is the one pipe everything
 * shares, and the server reads it without waiting on any stream.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/connect.h"
#include "supervisor/frames.h"
#include "supervisor/io.h"
#include "supervisor/mux.h"

#define STREAMS		512
#define GRANT_AT	(SUPF_MUX_WINDOW / 4)	/* taken bytes told in batches */

struct stream {
	bool		 used;
	bool		 connecting;
	uint32_t	 id;
	int		 fd;
	uint32_t	 credit;	/* bytes the server still takes */
	unsigned char	*out;		/* the server's bytes for the app */
	size_t		 out_off, out_len;
	uint32_t	 taken;		/* by the app, not yet granted */
};

/* What a connecting thread hands back through the pipe. */
struct result {
	int		slot;
	uint32_t	id;
	int		fd;
};

struct job {
	int		slot;
	uint32_t	id;
	long		port;
	bool		lane;		/* hand the socket over, with key */
	unsigned char	key[SUPF_MUX_KEY];
};

static struct stream	streams[STREAMS];
static int		done_pipe[2] = { -1, -1 };
static const char	*lane;		/* --lane PATH, or NULL */
#define PASSED		(-2)		/* a result's fd: handed over */

static int	flush_out(struct stream *);

static int
send_frame(int type, uint32_t id, const void *body, size_t len)
{
	unsigned char hdr[SUPF_HEADER + 4];

	supf_header(type, (uint32_t)(4 + len), hdr);
	supf_put32(hdr + SUPF_HEADER, id);
	if (sup_write_all(1, hdr, sizeof(hdr)) == -1)
		return -1;
	return len == 0 ? 0 : sup_write_all(1, body, len);
}

static int
send_u32(int type, uint32_t id, uint32_t v)
{
	unsigned char b[4];

	supf_put32(b, v);
	return send_frame(type, id, b, 4);
}

static struct stream *
find(uint32_t id)
{
	int i;

	for (i = 0; i < STREAMS; i++)
		if (streams[i].used && streams[i].id == id)
			return &streams[i];
	return NULL;
}

static void
drop(struct stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->out);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* The stream ended on our side: tell the server, forget it. */
static int
end(struct stream *s)
{
	uint32_t id = s->id;

	drop(s);
	return send_frame('Z', id, NULL, 0);
}

static void *
connecting(void *arg)
{
	struct job	*j = arg;
	struct result	 r;

	r.slot = j->slot;
	r.id = j->id;
	r.fd = connect_port(j->port);
	/* The server reads and writes it itself: we carry no byte. */
	if (r.fd >= 0 && j->lane && connect_give(lane, j->key, sizeof(j->key),
	    r.fd) == 0) {
		close(r.fd);
		r.fd = PASSED;
	}
	free(j);
	/* Smaller than PIPE_BUF: one write, never torn. */
	if (sup_write_all(done_pipe[1], &r, sizeof(r)) == -1 && r.fd >= 0)
		close(r.fd);
	return NULL;
}

static int
open_stream(uint32_t id, long port, const unsigned char *key)
{
	pthread_attr_t	 attr;
	pthread_t	 t;
	struct job	*j;
	int		 i, rc;

	if (find(id) != NULL)
		return -1;	/* the server never reuses a live id */
	for (i = 0; i < STREAMS && streams[i].used; i++)
		;
	if (i == STREAMS || port < 1 || port > 65535 ||
	    (j = malloc(sizeof(*j))) == NULL)
		return send_frame('N', id, "-", 1);
	j->slot = i;
	j->id = id;
	j->port = port;
	j->lane = key != NULL && lane != NULL;
	if (j->lane)
		memcpy(j->key, key, sizeof(j->key));
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64u << 10);
	rc = pthread_create(&t, &attr, connecting, j);
	pthread_attr_destroy(&attr);
	if (rc != 0) {
		free(j);
		return send_frame('N', id, "-", 1);
	}
	streams[i].used = true;
	streams[i].connecting = true;
	streams[i].id = id;
	streams[i].fd = -1;
	streams[i].credit = SUPF_MUX_WINDOW;
	return 0;
}

static int
connected(const struct result *r)
{
	struct stream *s = r->slot >= 0 && r->slot < STREAMS ?
	    &streams[r->slot] : NULL;

	if (s == NULL || !s->used || s->id != r->id || !s->connecting) {
		/* Closed by the server while it connected. */
		if (r->fd >= 0)
			close(r->fd);
		return 0;
	}
	s->connecting = false;
	if (r->fd == PASSED) {
		drop(s);
		return send_frame('N', r->id, "L", 1);
	}
	if (r->fd < 0) {
		drop(s);	/* with any bytes sent ahead */
		return send_frame('N', r->id, "-", 1);
	}
	s->fd = r->fd;
	fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) | O_NONBLOCK);
	if (send_frame('N', r->id, "+", 1) == -1)
		return -1;
	/* The bytes the server sent behind its 'c'. */
	return s->out_len > 0 ? flush_out(s) : 0;
}

/* Write what the app takes now; tell the server in batches. */
static int
flush_out(struct stream *s)
{
	ssize_t n;

	while (s->out_len > 0) {
		n = write(s->fd, s->out + s->out_off, s->out_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0)
			return end(s);
		s->out_off += (size_t)n;
		s->out_len -= (size_t)n;
		s->taken += (uint32_t)n;
	}
	if (s->out_len == 0)
		s->out_off = 0;
	if (s->taken > 0 && (s->taken >= GRANT_AT || s->out_len == 0)) {
		uint32_t n2 = s->taken;

		s->taken = 0;
		return send_u32('G', s->id, n2);
	}
	return 0;
}

/*
 * The server's bytes for the app: within the credit it was given. While
 * the stream connects they are only kept.
 */
static int
data(struct stream *s, const unsigned char *p, size_t len)
{
	if (!s->connecting && s->fd < 0)
		return -1;
	if (s->out_len + s->taken + len > SUPF_MUX_WINDOW)
		return -1;
	if (s->out == NULL && (s->out = malloc(SUPF_MUX_WINDOW)) == NULL)
		return -1;
	if (s->out_off + s->out_len + len > SUPF_MUX_WINDOW) {
		memmove(s->out, s->out + s->out_off, s->out_len);
		s->out_off = 0;
	}
	memcpy(s->out + s->out_off + s->out_len, p, len);
	s->out_len += len;
	return s->connecting ? 0 : flush_out(s);
}

static int
on_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct stream	*s;
	uint32_t	 id, v;

	(void)arg;
	id = supf_get32(p);
	s = find(id);
	switch (type) {
	case 'c':
		return open_stream(id, (long)p[4] << 8 | p[5],
		    len == 6 + SUPF_MUX_KEY ? p + 6 : NULL);
	case 'd':
		return s == NULL ? 0 : data(s, p + 4, len - 4);
	case 'x':
		if (s != NULL)
			drop(s);
		return 0;
	case 'g':
		if (s == NULL)
			return 0;
		v = supf_get32(p + 4);
		if (v > SUPF_MUX_WINDOW - s->credit)
			return -1;
		s->credit += v;
		return 0;
	default:
		return -1;
	}
}

/*
 * The app's bytes to the server, within the stream's credit: read behind
 * room for the frame's head, so the frame goes out in one write.
 */
#define HEAD	(SUPF_HEADER + 4)
static int
from_app(struct stream *s, unsigned char *buf)
{
	size_t	want = s->credit < SUPF_MUX_DATA ? s->credit : SUPF_MUX_DATA;
	ssize_t	n;

	n = read(s->fd, buf + HEAD, want);
	if (n < 0 && (errno == EINTR || errno == EAGAIN ||
	    errno == EWOULDBLOCK))
		return 0;
	if (n <= 0)
		return end(s);
	s->credit -= (uint32_t)n;
	supf_header('D', (uint32_t)(4 + n), buf);
	supf_put32(buf + SUPF_HEADER, s->id);
	return sup_write_all(1, buf, HEAD + (size_t)n);
}

int
mux_main(const char *lane_path)
{
	static struct pollfd	 pfd[2 + STREAMS];
	unsigned char		 hdr[SUPF_HEADER + 4];
	unsigned char		*buf;
	struct supf		 in;
	struct result		 r;
	ssize_t			 got;
	int			 i;

	signal(SIGPIPE, SIG_IGN);
	lane = lane_path;
	for (i = 0; i < STREAMS; i++)
		streams[i].fd = -1;
	if (pipe2(done_pipe, O_CLOEXEC) == -1 ||
	    (buf = malloc(HEAD + SUPF_MUX_DATA)) == NULL)
		return 1;
	supf_init(&in, SUPF_MUX_MAX);
	supf_header('V', 4, hdr);
	supf_put32(hdr + SUPF_HEADER, SUPF_MUX_VERSION);
	if (sup_write_all(1, hdr, sizeof(hdr)) == -1)
		return 1;
	for (;;) {
		pfd[0].fd = 0;
		pfd[0].events = POLLIN;
		pfd[1].fd = done_pipe[0];
		pfd[1].events = POLLIN;
		for (i = 0; i < STREAMS; i++) {
			struct stream *s = &streams[i];

			pfd[2 + i].fd = -1;
			pfd[2 + i].events = 0;
			pfd[2 + i].revents = 0;
			if (!s->used || s->fd < 0)
				continue;
			if (s->credit > 0)
				pfd[2 + i].events |= POLLIN;
			if (s->out_len > 0)
				pfd[2 + i].events |= POLLOUT;
			if (pfd[2 + i].events != 0)
				pfd[2 + i].fd = s->fd;
		}
		if (poll(pfd, 2 + STREAMS, -1) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (i = 0; i < STREAMS; i++) {
			struct stream	*s = &streams[i];
			short		 re = pfd[2 + i].revents;

			if (re == 0 || !s->used || s->fd != pfd[2 + i].fd)
				continue;
			if ((re & POLLOUT) && s->out_len > 0 && flush_out(s) == -1)
				return 0;
			if (!s->used)
				continue;
			/* POLLHUP or POLLERR: the read says which. */
			if ((re & ~POLLOUT) && s->credit > 0 &&
			    from_app(s, buf) == -1)
				return 0;
			if (s->used && (re & (POLLERR | POLLNVAL)) &&
			    s->credit == 0 && end(s) == -1)
				return 0;
		}
		if (pfd[1].revents & POLLIN) {
			if (sup_read_full(done_pipe[0], &r, sizeof(r)) == -1 ||
			    connected(&r) == -1)
				return 0;
		}
		if (pfd[0].revents != 0) {
			got = read(0, buf, SUPF_MUX_DATA);
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				return 0;	/* the server left */
			/* A malformed frame, or stdout failed. */
			if (supf_feed(&in, buf, (size_t)got, on_frame,
			    NULL) == -1)
				return 1;
		}
	}
}
