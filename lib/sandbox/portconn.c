/*
 * sandbox/portconn.c: see sandbox/portconn.h.
 *
 * A few channels per process, one per container, each with:
 *   - a connection (docker_conn) to an exec of "supervisor mux", replaced
 *     only by the thread that sets the channel up again, after the old
 *     reader has ended and with the send lock held;
 *   - a reader thread: engine frames (docker_frames), then the mux's
 *     frames (sandbox/muxin.c, hostile input) into each stream's ring. It
 *     never waits for a stream: the supervisor sends a stream no more than
 *     the room its ring has (the credit), so a browser that reads nothing
 *     stalls its own stream alone, and memory stays bounded;
 *   - streams, one per portconn, each with its own condition.
 * With a lane (sandbox/portlane.h), a channel also has a listening socket
 * in the container's previews folder and a thread that takes the
 * connections the supervisor hands over on it; such a stream, answered
 * 'L', is then a plain non-blocking socket of this process.
 * Every wait has a deadline and looks at the stop flag at least once a
 * second.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/log.h"
#include "base/thread.h"
#include "engine/docker.h"
#include "sandbox/extern.h"
#include "sandbox/muxin.h"
#include "sandbox/portconn.h"
#include "sandbox/portlane.h"
#include "sandbox/sandbox.h"
#include "sandbox/sup.h"

#define CHAN_MAX	64		/* containers with a channel at once */
#define READY_MS	5000		/* from the exec's start to 'V' */
#define OPEN_MS		10000		/* from 'c' to the supervisor's 'N' */
#define SEND_MS		10000		/* to send one frame */
#define CLOSE_MS	1000		/* to send 'x' */
#define RETRY_MS	2000		/* after a channel could not be had */
#define READ_SIZE	(256u << 10)
#define LANE_TAKE_MS	100		/* for a message once connected */

struct chan {
	pthread_mutex_t		 setup;		/* one thread sets it up */
	pthread_mutex_t		 lock;		/* the fields below, the streams */
	pthread_mutex_t		 send;		/* one frame at a time */
	char			 container[128];
	char			 sup[SUP_PATH_MAX];
	struct docker_conn	*conn;
	pthread_t		 reader;
	bool			 has_reader;
	bool			 alive;
	struct mux_in		 in;
	uint32_t		 next_id;
	int			 streams;
	long long		 used_ms, failed_ms;
	/* The reader's own. */
	struct docker_frames	 df;
	bool			 bad;
	long long		 said_ms;
	/* The lane: set up with the channel, or lane_fd -1. */
	int			 lane_fd;
	char			 lane_folder[PATH_MAX];
	char			 lane_inner[PORTLANE_PATH_MAX];
	pthread_t		 lane_thread;
	bool			 has_lane_thread;
	atomic_bool		 lane_stop;
};

struct portconn {
	struct chan		*c;
	struct mux_stream	 s;
	unsigned char		 key[PORTLANE_KEY];
	bool			 awaiting; /* its open waits for the lane */
	int			 fd;	/* handed over on the lane, or -1 */
	atomic_bool		 fd_shut;
};

#define PC_OF(ms)	((struct portconn *)((char *)(ms) - \
			    offsetof(struct portconn, s)))

static pthread_mutex_t	table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chan	chans[CHAN_MAX];
static bool		table_ready;

static void
wait_until(pthread_cond_t *cond, pthread_mutex_t *m, long long at_ms)
{
	struct timespec ts;

	/* At most a second: the stop flag is looked at that often. */
	if (at_ms > clock_ms() + 1000)
		at_ms = clock_ms() + 1000;
	ts.tv_sec = (time_t)(at_ms / 1000);
	ts.tv_nsec = (long)(at_ms % 1000) * 1000000;
	pthread_cond_timedwait(cond, m, &ts);
}

static void
wake_all(struct chan *c)
{
	struct mux_stream *s;

	for (s = c->in.streams; s != NULL; s = s->next)
		pthread_cond_signal(&s->cond);
}

static void
on_stream(void *arg, int stream, const char *buf, size_t len)
{
	struct chan	*c = arg;
	int		 rc;

	if (c->bad)
		return;
	if (stream == 1) {
		pthread_mutex_lock(&c->lock);
		rc = muxin_feed(&c->in, buf, len);
		pthread_mutex_unlock(&c->lock);
		if (rc == -1) {
			c->bad = true;
			log_warn("container %s: malformed frames on the "
			    "preview channel; closing it", c->container);
		}
		return;
	}
	chan_log_stderr(c->container, "preview channel", &c->said_ms, buf, len);
}

static void *
reader(void *arg)
{
	struct chan		*c = arg;
	struct mux_stream	*s;

	docker_conn_pump(c->conn, &c->df, READ_SIZE, on_stream, c, &c->bad);
	docker_conn_shutdown(c->conn);
	pthread_mutex_lock(&c->lock);
	c->alive = false;
	for (s = c->in.streams; s != NULL; s = s->next)
		s->ended = true;
	wake_all(c);
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/*
 * The lane's thread: each connection on it, one message, matched by its
 * key to a stream that waits for it (hostile: portlane_take checks).
 */
static void *
lane_main(void *arg)
{
	struct chan		*c = arg;
	struct mux_stream	*s;
	struct pollfd		 pfd;
	unsigned char		 key[PORTLANE_KEY];
	int			 conn, fd;
	bool			 taken;

	while (!atomic_load(&c->lane_stop) && !docker_stopping()) {
		pfd.fd = c->lane_fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		if ((conn = accept4(c->lane_fd, NULL, NULL,
		    SOCK_CLOEXEC)) == -1)
			continue;
		if (portlane_take(conn, key, &fd, LANE_TAKE_MS) == 0) {
			taken = false;
			pthread_mutex_lock(&c->lock);
			for (s = c->in.streams; s != NULL && !taken;
			    s = s->next) {
				struct portconn *pc = PC_OF(s);

				if (pc->awaiting && pc->fd == -1 &&
				    crypto_equal(pc->key, key, sizeof(key))) {
					pc->fd = fd;
					taken = true;
					pthread_cond_signal(&s->cond);
				}
			}
			pthread_mutex_unlock(&c->lock);
			if (!taken)
				portlane_close(fd);
		}
		close(conn);
	}
	return NULL;
}

/*
 * A lane for the channel about to open: when the container was made with
 * its previews folder (a container made before has none: no lane).
 */
static void
lane_open(struct chan *c, struct sandbox *sb)
{
	struct stat st;

	c->lane_fd = -1;
	if (portlane_folder(sandbox_config(sb), c->container, c->lane_folder,
	    sizeof(c->lane_folder)) == -1 ||
	    lstat(c->lane_folder, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    (c->lane_fd = portlane_listen(c->lane_folder, c->lane_inner,
	    sizeof(c->lane_inner))) == -1)
		return;
	atomic_store(&c->lane_stop, false);
	if (thread_start(&c->lane_thread, NULL, lane_main, c,
	    "cs-preview-lane") != 0) {
		portlane_unlisten(c->lane_fd, c->lane_folder, c->lane_inner);
		c->lane_fd = -1;
		return;
	}
	c->has_lane_thread = true;
}

/* End the old connection and its reader; c->setup held. */
static void
teardown(struct chan *c)
{
	if (c->conn != NULL)
		docker_conn_shutdown(c->conn);
	if (c->has_reader) {
		pthread_join(c->reader, NULL);
		c->has_reader = false;
	}
	if (c->has_lane_thread) {
		atomic_store(&c->lane_stop, true);
		pthread_join(c->lane_thread, NULL);
		c->has_lane_thread = false;
	}
	if (c->lane_fd >= 0) {
		portlane_unlisten(c->lane_fd, c->lane_folder, c->lane_inner);
		pthread_mutex_lock(&c->lock);
		c->lane_fd = -1;
		pthread_mutex_unlock(&c->lock);
	}
	pthread_mutex_lock(&c->send);
	pthread_mutex_lock(&c->lock);
	docker_conn_close(c->conn);
	c->conn = NULL;
	c->alive = false;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&c->send);
}

/* Open the channel; c->setup held, nothing running on it. */
static int
establish(struct chan *c, struct sandbox *sb, const char *sup,
    struct error *err)
{
	const char		*argv[] = { sup, "mux", NULL, NULL, NULL };
	struct json_object	*cmd;
	char			*id = NULL;
	long long		 until;
	int			 rc = -1;
	bool			 ready = false;

	lane_open(c, sb);
	if (c->lane_fd >= 0) {
		argv[2] = "--lane";
		argv[3] = c->lane_inner;
	}
	if ((cmd = sandbox_str_array(argv)) == NULL) {
		teardown(c);
		return error_set(err, "out of memory");
	}
	if (sandbox_exec_create(sb, cmd, EXEC_ENV_CHANNEL, &id, err) == -1 ||
	    docker_exec_attach(sandbox_docker(sb), id, &c->conn, err) == -1)
		goto out;
	docker_frames_init(&c->df);
	c->bad = false;
	pthread_mutex_lock(&c->lock);
	/* A fresh parser; streams of the old channel stay, ended. */
	muxin_free(&c->in);
	supf_init(&c->in.frames, SUPF_MUX_MAX);
	c->in.ready = false;
	c->alive = true;
	snprintf(c->sup, sizeof(c->sup), "%s", sup);
	pthread_mutex_unlock(&c->lock);
	if (thread_start(&c->reader, NULL, reader, c, "cs-preview-mux") != 0) {
		error_set(err, "cannot start the preview channel's reader");
		goto out;
	}
	c->has_reader = true;
	/* 'V' is the first frame: polled, it comes once per channel. */
	until = clock_ms() + READY_MS;
	for (;;) {
		pthread_mutex_lock(&c->lock);
		ready = c->in.ready;
		rc = c->alive ? 0 : -1;
		pthread_mutex_unlock(&c->lock);
		if (ready || rc == -1 || clock_ms() >= until ||
		    docker_stopping())
			break;
		usleep(5000);
	}
	if (!ready) {
		rc = -1;
		error_kind(err, ERR_NONE, "the supervisor's preview channel did "
		    "not answer within %d s", READY_MS / 1000);
	} else {
		rc = 0;
		log_info("container %s: preview channel open",
		    sandbox_container(sb));
	}
out:
	json_object_put(cmd);
	free(id);
	if (rc == -1)
		teardown(c);
	return rc;
}

/* The table's slot for sb's container, taken over if need be; or NULL. */
static struct chan *
slot(const char *name)
{
	struct chan	*c = NULL, *best = NULL;
	long long	 best_ms = 0;
	int		 i;

	pthread_mutex_lock(&table_lock);
	if (!table_ready) {
		for (i = 0; i < CHAN_MAX; i++) {
			pthread_mutex_init(&chans[i].setup, NULL);
			pthread_mutex_init(&chans[i].lock, NULL);
			pthread_mutex_init(&chans[i].send, NULL);
			muxin_init(&chans[i].in);
			chans[i].lane_fd = -1;
		}
		table_ready = true;
	}
	for (i = 0; i < CHAN_MAX && c == NULL; i++)
		if (strcmp(chans[i].container, name) == 0)
			c = &chans[i];
	for (i = 0; i < CHAN_MAX && c == NULL; i++)
		if (chans[i].container[0] == '\0')
			c = &chans[i];
	/* Else the one used longest ago with no stream. */
	for (i = 0; i < CHAN_MAX && c == NULL; i++) {
		pthread_mutex_lock(&chans[i].lock);
		if (chans[i].streams == 0 && (best == NULL ||
		    chans[i].used_ms < best_ms)) {
			best = &chans[i];
			best_ms = chans[i].used_ms;
		}
		pthread_mutex_unlock(&chans[i].lock);
	}
	if (c == NULL)
		c = best;
	pthread_mutex_unlock(&table_lock);
	return c != NULL && strlen(name) < sizeof(c->container) ? c : NULL;
}

/*
 * The live channel to sb's container with a new stream on it (linked in,
 * counted), opening the channel if needed. 0, or -1 with err set.
 */
static int
chan_get(struct sandbox *sb, struct portconn *pc, struct error *err)
{
	const char	*name = sandbox_container(sb);
	struct chan	*c;
	char		 sup[SUP_PATH_MAX];
	bool		 ok;

	if ((c = slot(name)) == NULL)
		return error_kind(err, ERR_UPSTREAM, "too many sandboxes have "
		    "previews open at once");
	pthread_mutex_lock(&c->setup);
	pthread_mutex_lock(&c->lock);
	if (strcmp(c->container, name) != 0) {
		/* Taken over from another container: only when idle. */
		if (c->streams != 0) {
			pthread_mutex_unlock(&c->lock);
			pthread_mutex_unlock(&c->setup);
			return error_kind(err, ERR_UPSTREAM, "too many "
			    "sandboxes have previews open at once");
		}
		snprintf(c->container, sizeof(c->container), "%s", name);
		c->alive = false;
		c->failed_ms = 0;
	}
	ok = c->alive;
	c->used_ms = clock_ms();
	pthread_mutex_unlock(&c->lock);
	if (!ok) {
		if (c->failed_ms != 0 && clock_ms() - c->failed_ms < RETRY_MS) {
			error_kind(err, ERR_UPSTREAM, "the sandbox's preview "
			    "channel failed a moment ago");
			goto fail;
		}
		teardown(c);
		if (sup_ensure(sb, sup, err) == -1)
			goto failed;
		if (establish(c, sb, sup, err) == -1) {
			if (err->kind == ERR_NOT_FOUND ||
			    err->kind == ERR_CONFLICT)
				goto failed;
			/*
			 * The container runs, but the copy did not answer as
			 * the supervisor: replaced (its root may) or gone.
			 * Upload a fresh one, once.
			 */
			sup_forget(sup);
			if (sup_ensure(sb, sup, err) == -1 ||
			    establish(c, sb, sup, err) == -1)
				goto failed;
		}
		c->failed_ms = 0;
	}
	pthread_mutex_lock(&c->lock);
	if (!c->alive) {
		pthread_mutex_unlock(&c->lock);
		error_kind(err, ERR_UPSTREAM, "the preview channel ended");
		goto fail;
	}
	pc->c = c;
	pc->s.id = ++c->next_id;
	muxin_link(&c->in, &pc->s);
	c->streams++;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&c->setup);
	return 0;
failed:
	log_warn("container %s: no preview channel: %s", name, err->msg);
	c->failed_ms = clock_ms();
fail:
	pthread_mutex_unlock(&c->setup);
	return -1;
}

/*
 * Send one mux frame: type, the stream's id, then body; by until. A frame
 * cut short breaks the channel (the next one could not be found).
 */
static int
send_frame(struct chan *c, int type, uint32_t id, const void *body,
    size_t len, long long until)
{
	unsigned char	one[SUPF_HEADER + 4 + 64];
	struct error	err;
	int		rc;

	supf_header(type, (uint32_t)(4 + len), one);
	supf_put32(one + SUPF_HEADER, id);
	if (len <= 64) {
		if (len > 0)
			memcpy(one + SUPF_HEADER + 4, body, len);
		len += SUPF_HEADER + 4;
		body = one;
	}
	pthread_mutex_lock(&c->send);
	if (c->conn == NULL)
		rc = -1;
	else if (body == one)
		rc = docker_conn_send(c->conn, one, len, until, &err);
	else if ((rc = docker_conn_send(c->conn, one, SUPF_HEADER + 4, until,
	    &err)) == 0)
		rc = docker_conn_send(c->conn, body, len, until, &err);
	if (rc == -1 && c->conn != NULL)
		docker_conn_shutdown(c->conn);
	pthread_mutex_unlock(&c->send);
	return rc;
}

/* Send all len bytes on a lane's socket by until. 0, or -1. */
static int
fd_send(struct portconn *pc, const void *buf, size_t len, long long until)
{
	const char	*p = buf;
	struct pollfd	 pfd;
	ssize_t		 n;
	long long	 left;

	while (len > 0) {
		if (atomic_load(&pc->fd_shut) || docker_stopping())
			return -1;
		n = send(pc->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) ||
		    (left = until - clock_ms()) <= 0)
			return -1;
		pfd.fd = pc->fd;
		pfd.events = POLLOUT;
		poll(&pfd, 1, left < 1000 ? (int)left : 1000);
	}
	return 0;
}

/*
 * Open a stream to port on a channel; 1 when the channel died first. On
 * the mux, first's bytes go right behind the open (the supervisor keeps
 * them until it has connected: no round trip waited for); on a lane, the
 * socket comes back first, then they go on it.
 */
static int
open_once(struct sandbox *sb, long port, const void *first, size_t first_len,
    struct portconn *pc, struct error *err)
{
	unsigned char	 p[2 + PORTLANE_KEY];
	struct chan	*c;
	long long	 until;
	int		 answer;
	bool		 ended, lane;

	if (muxin_stream_init(&pc->s, 0) == -1)
		return error_set(err, "out of memory");
	if (chan_get(sb, pc, err) == -1) {
		muxin_stream_free(&pc->s);
		return -1;
	}
	c = pc->c;
	p[0] = (unsigned char)(port >> 8);
	p[1] = (unsigned char)port;
	pthread_mutex_lock(&c->lock);
	lane = c->lane_fd >= 0 && crypto_random(pc->key, sizeof(pc->key)) == 0;
	pc->s.lane = lane;
	pc->awaiting = lane;
	pthread_mutex_unlock(&c->lock);
	if (lane)
		memcpy(p + 2, pc->key, sizeof(pc->key));
	until = clock_ms() + OPEN_MS;
	if (send_frame(c, 'c', pc->s.id, p, lane ? sizeof(p) : 2, until) == -1)
		return 1;
	if (!lane && first_len > 0 && portconn_send(pc, first, first_len,
	    OPEN_MS) == -1) {
		pthread_mutex_lock(&c->lock);
		ended = !c->alive;
		pthread_mutex_unlock(&c->lock);
		if (ended)
			return 1;
		/* Else the app took the connection and closed it at once. */
	}
	pthread_mutex_lock(&c->lock);
	/*
	 * The answer, or the socket on the lane: it comes before the 'L' (the
	 * supervisor sends it first, and not through the engine), so it is
	 * not waited for.
	 */
	while (pc->fd == -1 && ((pc->s.answer == 0 && !pc->s.ended) ||
	    pc->s.answer == 'L') && clock_ms() < until && !docker_stopping())
		wait_until(&pc->s.cond, &c->lock, until);
	answer = pc->fd >= 0 ? 'L' : pc->s.answer;
	ended = pc->s.ended;
	/* From here pc->fd is settled: no socket is taken for it later. */
	pc->awaiting = false;
	if (answer == 0 && !ended && c->conn != NULL) {
		/* A channel that does not answer is of no use. */
		log_warn("container %s: the preview channel did not answer "
		    "within %d s; closing it", c->container, OPEN_MS / 1000);
		docker_conn_shutdown(c->conn);
	}
	pthread_mutex_unlock(&c->lock);
	if (answer == 'L' && pc->fd == -1)
		return error_kind(err, ERR_UPSTREAM, "the sandbox did not hand "
		    "the connection over within %d s", OPEN_MS / 1000);
	if (answer == 'L') {
		/* A failed send: the app closed it; its reads say so. */
		if (first_len > 0)
			fd_send(pc, first, first_len, clock_ms() + OPEN_MS);
		return 0;
	}
	if (answer == '+') {
		/* A lane the supervisor could not use: the mux carries it. */
		if (lane && first_len > 0 && portconn_send(pc, first,
		    first_len, OPEN_MS) == -1) {
			pthread_mutex_lock(&c->lock);
			ended = !c->alive;
			pthread_mutex_unlock(&c->lock);
			if (ended)
				return 1;
		}
		return 0;
	}
	if (answer == '-')
		return error_kind(err, ERR_NOT_FOUND, "nothing listens on port "
		    "%ld in the sandbox", port);
	if (ended)
		return 1;
	return error_kind(err, ERR_UPSTREAM, "the sandbox did not answer "
	    "within %d s", OPEN_MS / 1000);
}

int
portconn_open(struct sandbox *sb, long port, const void *first,
    size_t first_len, struct portconn **out, struct error *err)
{
	struct portconn	*pc;
	int		 rc, tries;

	*out = NULL;
	if (first_len > SUPF_MUX_WINDOW)
		return error_set(err, "too much to send ahead of a connection");
	/* A channel that died under the first try (a restart): a new one. */
	for (tries = 0; tries < 2; tries++) {
		if ((pc = calloc(1, sizeof(*pc))) == NULL)
			return error_set(err, "out of memory");
		pc->fd = -1;
		if ((rc = open_once(sb, port, first, first_len, pc,
		    err)) == 0) {
			*out = pc;
			return 0;
		}
		portconn_close(pc);
		if (rc == -1)
			return -1;
	}
	return error_kind(err, ERR_UPSTREAM, "the preview channel into the "
	    "sandbox ended before the connection was made");
}

/* A lane's socket: as portconn_recv. */
static long
fd_recv(struct portconn *pc, void *buf, size_t len, long long until)
{
	struct pollfd	pfd;
	ssize_t		n;
	long long	left;

	for (;;) {
		n = recv(pc->fd, buf, len, MSG_DONTWAIT);
		if (n > 0)
			return (long)n;
		if (n == 0)
			return -1;
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		if ((left = until - clock_ms()) <= 0 || docker_stopping())
			return 0;
		pfd.fd = pc->fd;
		pfd.events = POLLIN;
		poll(&pfd, 1, left < 1000 ? (int)left : 1000);
	}
}

long
portconn_recv(struct portconn *pc, void *buf, size_t len, int wait_ms)
{
	struct chan	*c = pc->c;
	long long	 until = clock_ms() + wait_ms;
	size_t		 n;
	bool		 ended;

	if (pc->fd >= 0)
		return fd_recv(pc, buf, len, until);
	pthread_mutex_lock(&c->lock);
	while (pc->s.qlen == 0 && !pc->s.ended && clock_ms() < until &&
	    !docker_stopping())
		wait_until(&pc->s.cond, &c->lock, until);
	n = muxin_take(&pc->s, buf, len);
	ended = pc->s.ended;
	pthread_mutex_unlock(&c->lock);
	if (n == 0)
		return ended ? -1 : 0;
	/* Taken: the supervisor may send as much again. */
	if (!ended)
		send_frame(c, 'g', pc->s.id, (unsigned char[4]){
		    (unsigned char)(n >> 24), (unsigned char)(n >> 16),
		    (unsigned char)(n >> 8), (unsigned char)n }, 4,
		    clock_ms() + SEND_MS);
	return (long)n;
}

int
portconn_send(struct portconn *pc, const void *buf, size_t len, int wait_ms)
{
	struct chan	*c = pc->c;
	const char	*p = buf;
	long long	 until = clock_ms() + wait_ms;
	size_t		 n;

	if (pc->fd >= 0)
		return fd_send(pc, buf, len, until);
	while (len > 0) {
		pthread_mutex_lock(&c->lock);
		while (pc->s.credit == 0 && !pc->s.ended &&
		    clock_ms() < until && !docker_stopping())
			wait_until(&pc->s.cond, &c->lock, until);
		if (pc->s.ended || pc->s.credit == 0) {
			pthread_mutex_unlock(&c->lock);
			return -1;
		}
		n = len < pc->s.credit ? len : pc->s.credit;
		if (n > SUPF_MUX_DATA)
			n = SUPF_MUX_DATA;
		pc->s.credit -= (uint32_t)n;
		pthread_mutex_unlock(&c->lock);
		if (send_frame(c, 'd', pc->s.id, p, n, until) == -1)
			return -1;
		p += n;
		len -= n;
	}
	return 0;
}

int
portconn_fd(const struct portconn *pc)
{
	return pc->fd;
}

void
portconn_shutdown(struct portconn *pc)
{
	if (pc == NULL || pc->c == NULL)
		return;
	if (pc->fd >= 0) {
		/* The app sees the end; a read has what was queued, then 0. */
		atomic_store(&pc->fd_shut, true);
		shutdown(pc->fd, SHUT_RDWR);
		return;
	}
	pthread_mutex_lock(&pc->c->lock);
	pc->s.ended = true;
	pc->s.shut = true;
	pthread_cond_broadcast(&pc->s.cond);
	pthread_mutex_unlock(&pc->c->lock);
}

void
portconn_close(struct portconn *pc)
{
	struct chan	*c;
	bool		 alive;

	if (pc == NULL)
		return;
	if ((c = pc->c) != NULL) {
		pthread_mutex_lock(&c->lock);
		muxin_unlink(&c->in, &pc->s);
		c->streams--;
		/* A stream handed over is the supervisor's no more. */
		alive = c->alive && pc->s.answer != 'L' && pc->fd == -1;
		pthread_mutex_unlock(&c->lock);
		if (alive)
			send_frame(c, 'x', pc->s.id, NULL, 0,
			    clock_ms() + CLOSE_MS);
	}
	if (pc->fd >= 0)
		portlane_close(pc->fd);
	muxin_stream_free(&pc->s);
	free(pc);
}

void
portconn_end(void)
{
	int	i;
	bool	ready;

	pthread_mutex_lock(&table_lock);
	ready = table_ready;
	pthread_mutex_unlock(&table_lock);
	for (i = 0; ready && i < CHAN_MAX; i++) {
		pthread_mutex_lock(&chans[i].setup);
		teardown(&chans[i]);
		pthread_mutex_unlock(&chans[i].setup);
	}
}
