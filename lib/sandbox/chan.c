/*
 * sandbox/chan.c: the channel to the supervisor; see sandbox/chan.h.
 *
 * A few channels per process, one per container, each with:
 *   - a connection (docker_conn) replaced only by the thread that sets
 *     the channel up again, after the old reader has ended and with the
 *     send lock held;
 *   - a reader thread: engine frames (docker_frames), then the
 *     supervisor's channel frames (supf_feed, hostile input), each tagged
 *     one handed to the waiter of its run id and kind, or dropped when
 *     nobody waits (a run whose waiter went away is collected from its
 *     record);
 *   - waiters, on their callers' stacks, each with its own condition and
 *     a queue of bytes the reader fills and the caller empties. A queue
 *     over QUEUE_MAX makes the reader wait (a slow caller slows the
 *     supervisor, as an exec stream would), never grow without bound.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/thread.h"
#include "engine/docker.h"
#include "sandbox/chan.h"
#include "sandbox/extern.h"
#include "sandbox/guard.h"
#include "sandbox/sandbox.h"
#include "sandbox/sup.h"
#include "supervisor/frames.h"

#define CHAN_MAX	4		/* containers with a channel at once */
#define READY_MS	5000		/* from the exec's start to 'V' */
#define SEND_MS		10000		/* to send one frame */
#define ASK_MS		5000		/* for the answer to 'k' or 'q' */
#define RETRY_MS	10000		/* after a channel could not be had */
#define QUEUE_MAX	(1u << 20)	/* bytes waiting for one caller */
#define READ_SIZE	(64u << 10)
#define SAID_MS		10000		/* between two of its stderr lines */

struct waiter {
	struct waiter	*next;
	char		 id[SUPF_ID_MAX + 1];
	int		 kind;		/* 'r', 'k' or 'q' */
	pthread_cond_t	 cond;
	unsigned char	*q;
	size_t		 qlen, qcap;
	bool		 ended, lost;
	bool		 busy;		/* in its tick: it empties nothing */
	bool		 overflow;	/* bytes were dropped */
	int		 code;
};

struct chan {
	pthread_mutex_t		 setup;		/* one thread sets it up */
	pthread_mutex_t		 lock;		/* the fields below */
	pthread_mutex_t		 send;		/* one frame at a time */
	pthread_cond_t		 changed;	/* ready, alive, queue room */
	char			 container[128];
	struct docker_conn	*conn;
	pthread_t		 reader;
	bool			 has_reader;
	bool			 alive, ready;
	struct waiter		*waiters;
	long long		 failed_ms;
	long long		 used_ms;
	/* The reader's own. */
	struct docker_frames	 df;
	struct supf		 frames;
	bool			 bad;
	long long		 said_ms;	/* its stderr last logged */
};

static pthread_mutex_t	table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct chan	chans[CHAN_MAX];
static bool		table_ready;

static void
cond_init(pthread_cond_t *c)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(c, &a);
	pthread_condattr_destroy(&a);
}

/* Wait on cond until the monotonic time at_ms at the latest. */
static void
cond_wait_until(pthread_cond_t *cond, pthread_mutex_t *m, long long at_ms)
{
	struct timespec ts;

	ts.tv_sec = (time_t)(at_ms / 1000);
	ts.tv_nsec = (long)(at_ms % 1000) * 1000000;
	pthread_cond_timedwait(cond, m, &ts);
}

static struct waiter *
find(struct chan *c, const char *id, int kind)
{
	struct waiter *w;

	for (w = c->waiters; w != NULL; w = w->next)
		if (w->kind == kind && strcmp(w->id, id) == 0)
			return w;
	return NULL;
}

/* One channel frame from the supervisor; c->lock is not held. */
static int
chan_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct chan		*c = arg;
	struct waiter		*w;
	char			 id[SUPF_ID_MAX + 1];
	const unsigned char	*rest;
	size_t			 n;
	int			 kind;

	if (type == 'V') {
		if (supf_get32(p) != SUPF_CHAN_VERSION)
			return -1;
		pthread_mutex_lock(&c->lock);
		c->ready = true;
		pthread_cond_broadcast(&c->changed);
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	if (!c->ready || supf_tag_split(p, len, id, &rest, &n) == -1)
		return -1;
	switch (type) {
	case 'M':
		kind = 'r';
		break;
	case 'E':
		kind = 'r';
		break;
	case 'K':
		kind = 'k';
		break;
	case 'Q':
		kind = 'q';
		break;
	default:
		return -1;	/* the live and record frames go inside 'M' */
	}
	if ((type == 'M' && n < 1) || (type != 'M' && n != 1))
		return -1;
	pthread_mutex_lock(&c->lock);
	if (type != 'M') {
		if ((w = find(c, id, kind)) != NULL && !w->ended) {
			w->ended = true;
			w->code = rest[0];
			pthread_cond_signal(&w->cond);
		}
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	/*
	 * Room in the caller's queue, or no caller any more. A caller in its
	 * tick (which may itself wait for an answer on this channel: a kill)
	 * is not waited for: its bytes are dropped, and it takes the run's
	 * result from the record instead.
	 */
	while ((w = find(c, id, kind)) != NULL && w->qlen > QUEUE_MAX &&
	    !w->busy && !docker_stopping())
		cond_wait_until(&c->changed, &c->lock, clock_ms() + 1000);
	if (w != NULL && (w->overflow || w->qlen > QUEUE_MAX)) {
		w->overflow = true;
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	if (w != NULL && !w->ended) {
		if (w->qlen + n > w->qcap) {
			size_t		 cap = (w->qlen + n) * 2;
			unsigned char	*nq = realloc(w->q, cap);

			if (nq == NULL) {
				pthread_mutex_unlock(&c->lock);
				return -1;
			}
			w->q = nq;
			w->qcap = cap;
		}
		memcpy(w->q + w->qlen, rest, n);
		w->qlen += n;
		pthread_cond_signal(&w->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/*
 * A supervisor's stderr (its complaints, or a stand-in's) on the channel
 * named what: escaped, and a line per SAID_MS at most, whatever comes.
 */
void
chan_log_stderr(const char *container, const char *what, long long *said_ms,
    const void *buf, size_t len)
{
	char	esc[256];

	if (*said_ms != 0 && clock_ms() - *said_ms < SAID_MS)
		return;
	*said_ms = clock_ms();
	log_warn("container %s: %s: %s", container, what,
	    log_escape(esc, sizeof(esc), buf, len));
}

static void
on_stream(void *arg, int stream, const char *buf, size_t len)
{
	struct chan *c = arg;

	if (c->bad)
		return;
	if (stream == 1) {
		if (supf_feed(&c->frames, buf, len, chan_frame, c) == -1) {
			c->bad = true;
			log_warn("container %s: malformed frames on the "
			    "supervisor's channel; closing it", c->container);
		}
		return;
	}
	chan_log_stderr(c->container, "supervisor channel", &c->said_ms,
	    buf, len);
}

static void *
reader(void *arg)
{
	struct chan	*c = arg;
	struct waiter	*w;

	docker_conn_pump(c->conn, &c->df, READ_SIZE, on_stream, c, &c->bad);
	docker_conn_shutdown(c->conn);
	pthread_mutex_lock(&c->lock);
	c->alive = false;
	for (w = c->waiters; w != NULL; w = w->next) {
		w->lost = true;
		pthread_cond_signal(&w->cond);
	}
	pthread_cond_broadcast(&c->changed);
	pthread_mutex_unlock(&c->lock);
	supf_free(&c->frames);
	guard_stale(c->container);	/* the container may have restarted */
	return NULL;
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
	pthread_mutex_lock(&c->send);
	pthread_mutex_lock(&c->lock);
	docker_conn_close(c->conn);
	c->conn = NULL;
	pthread_mutex_unlock(&c->lock);
	pthread_mutex_unlock(&c->send);
}

/* Open the channel; c->setup held, nothing running on it. */
static int
establish(struct chan *c, struct sandbox *sb, const char *sup,
    struct error *err)
{
	const char *const	 argv[] = { sup, "channel", NULL };
	struct json_object	*cmd;
	char			*id = NULL;
	long long		 until;
	int			 rc = -1;

	if ((cmd = sandbox_str_array(argv)) == NULL)
		return error_set(err, "out of memory");
	if (sandbox_exec_create(sb, cmd, EXEC_ENV_CHANNEL, &id, err) == -1 ||
	    docker_exec_attach(sandbox_docker(sb), id, &c->conn, err) == -1)
		goto out;
	docker_frames_init(&c->df);
	supf_init(&c->frames, SUPF_CHAN_OUT_MAX);
	c->bad = false;
	pthread_mutex_lock(&c->lock);
	c->alive = true;
	c->ready = false;
	pthread_mutex_unlock(&c->lock);
	if (thread_start(&c->reader, NULL, reader, c, "cs-channel") != 0) {
		supf_free(&c->frames);
		c->alive = false;
		error_set(err, "cannot start the channel's reader");
		goto out;
	}
	c->has_reader = true;
	until = clock_ms() + READY_MS;
	pthread_mutex_lock(&c->lock);
	while (c->alive && !c->ready && clock_ms() < until)
		cond_wait_until(&c->changed, &c->lock, until);
	rc = c->alive && c->ready ? 0 : -1;
	pthread_mutex_unlock(&c->lock);
	if (rc == -1)
		/* Status 0: the exec ran, but not as the supervisor. */
		error_kind(err, ERR_NONE, "the supervisor's channel did not "
		    "answer within %d s", READY_MS / 1000);
	else
		log_info("container %s: supervisor channel open",
		    sandbox_container(sb));
out:
	json_object_put(cmd);
	free(id);
	if (rc == -1) {
		teardown(c);
		pthread_mutex_lock(&c->lock);
		c->alive = false;
		pthread_mutex_unlock(&c->lock);
	}
	return rc;
}

/* The live channel to sb's container, opening it if needed; NULL if none. */
static struct chan *
chan_get(struct sandbox *sb, const char *sup)
{
	const char	*name = sandbox_container(sb);
	struct chan	*c = NULL, *held;
	struct error	 e;
	char		 fresh[SUP_PATH_MAX];
	long long	 now = clock_ms();
	int		 i;
	bool		 ok, takeover;

	pthread_mutex_lock(&table_lock);
	if (!table_ready) {
		for (i = 0; i < CHAN_MAX; i++) {
			pthread_mutex_init(&chans[i].setup, NULL);
			pthread_mutex_init(&chans[i].lock, NULL);
			pthread_mutex_init(&chans[i].send, NULL);
			cond_init(&chans[i].changed);
		}
		table_ready = true;
	}
	for (i = 0; i < CHAN_MAX && c == NULL; i++)
		if (strcmp(chans[i].container, name) == 0)
			c = &chans[i];
	/* Else the free one, or the one used longest ago with no waiter. */
	for (i = 0; i < CHAN_MAX && c == NULL; i++)
		if (chans[i].container[0] == '\0')
			c = &chans[i];
	if (c == NULL) {
		struct chan	*best = NULL;
		long long	 best_ms = 0;

		for (i = 0; i < CHAN_MAX; i++) {
			pthread_mutex_lock(&chans[i].lock);
			if (chans[i].waiters == NULL && (best == NULL ||
			    chans[i].used_ms < best_ms)) {
				best = &chans[i];
				best_ms = chans[i].used_ms;
			}
			pthread_mutex_unlock(&chans[i].lock);
		}
		c = best;
	}
	if (c == NULL || strlen(name) >= sizeof(c->container)) {
		pthread_mutex_unlock(&table_lock);
		return NULL;
	}
	pthread_mutex_unlock(&table_lock);

	held = c;
	pthread_mutex_lock(&held->setup);
	pthread_mutex_lock(&c->lock);
	takeover = strcmp(c->container, name) != 0;
	if (takeover) {
		/* Taken over from another container: only when idle. */
		if (c->waiters != NULL) {
			pthread_mutex_unlock(&c->lock);
			pthread_mutex_unlock(&held->setup);
			return NULL;
		}
		snprintf(c->container, sizeof(c->container), "%s", name);
		c->failed_ms = 0;
		if (c->conn != NULL)
			docker_conn_shutdown(c->conn);
	}
	/*
	 * A live channel is used whatever copy of the supervisor it was
	 * started from: its process runs in this container (the container's
	 * end ends it), and a caller holding an older path (a copy uploaded
	 * again since) must not end the runs in flight on it.
	 */
	ok = !takeover && c->alive;
	c->used_ms = now;
	pthread_mutex_unlock(&c->lock);
	if (!ok) {
		if (c->failed_ms != 0 && now - c->failed_ms < RETRY_MS)
			c = NULL;
		else {
			teardown(c);
			if (establish(c, sb, sup, &e) == -1 && e.kind != ERR_NOT_FOUND &&
			    e.kind != ERR_CONFLICT && e.kind != ERR_UNAVAILABLE) {
				/*
				 * The container runs, but the copy did not
				 * answer as the supervisor: replaced (its root
				 * may) or gone. Upload a fresh one, once.
				 */
				sup_forget(sup);
				if (sup_ensure(sb, fresh, &e) == 0)
					establish(c, sb, fresh, &e);
			}
			if (!c->alive) {
				log_warn("container %s: no supervisor channel, "
				    "one exec per command: %s", name, e.msg);
				c->failed_ms = clock_ms();
				c = NULL;
			} else
				c->failed_ms = 0;
		}
	}
	pthread_mutex_unlock(&held->setup);
	return c;
}

/*
 * Wait on c for the frames of run id. c must still be sb's channel:
 * chan_get returns it unlocked, and until a waiter is on it a call for
 * another container may take it over (only an idle channel is taken over),
 * so a frame must never leave for a container not sb's.
 */
static int
waiter_add(struct chan *c, struct sandbox *sb, struct waiter *w,
    const char *id, int kind)
{
	memset(w, 0, sizeof(*w));
	snprintf(w->id, sizeof(w->id), "%s", id);
	w->kind = kind;
	cond_init(&w->cond);
	pthread_mutex_lock(&c->lock);
	if (!c->alive || strcmp(c->container, sandbox_container(sb)) != 0 ||
	    find(c, id, kind) != NULL) {
		pthread_mutex_unlock(&c->lock);
		pthread_cond_destroy(&w->cond);
		return -1;
	}
	w->next = c->waiters;
	c->waiters = w;
	pthread_mutex_unlock(&c->lock);
	return 0;
}

static void
waiter_remove(struct chan *c, struct waiter *w)
{
	struct waiter **pp;

	pthread_mutex_lock(&c->lock);
	for (pp = &c->waiters; *pp != NULL; pp = &(*pp)->next)
		if (*pp == w) {
			*pp = w->next;
			break;
		}
	pthread_cond_broadcast(&c->changed);	/* the reader may wait on it */
	pthread_mutex_unlock(&c->lock);
	pthread_cond_destroy(&w->cond);
	free(w->q);
}

/*
 * Send one frame: head (header and tag) then body; a small one in one
 * write.
 */
static int
send_frame(struct chan *c, const unsigned char *head, size_t hlen,
    const void *body, size_t blen, struct error *err)
{
	unsigned char	one[4096];
	long long	until = clock_ms() + SEND_MS;
	int		rc;

	if (hlen + blen <= sizeof(one)) {
		memcpy(one, head, hlen);
		if (blen > 0)
			memcpy(one + hlen, body, blen);
		head = one;
		hlen += blen;
		blen = 0;
	}
	pthread_mutex_lock(&c->send);
	rc = c->conn == NULL ? error_set(err, "no channel") :
	    docker_conn_send(c->conn, head, hlen, until, err);
	if (rc == 0 && blen > 0)
		rc = docker_conn_send(c->conn, body, blen, until, err);
	if (rc == -1 && c->conn != NULL)
		docker_conn_shutdown(c->conn);	/* a cut frame: start anew */
	pthread_mutex_unlock(&c->send);
	return rc;
}

/*
 * Send a frame of type ('r' a run, 'p' a terminal request) for run_id,
 * pre (prelen <= 8 bytes) and body after its tag, and wait for the run's
 * stream to end as chan_run does.
 */
static int
run_frame(struct sandbox *sb, const char *sup, int type, const char *run_id,
    const unsigned char *pre, size_t prelen, const void *body, size_t blen,
    const struct chan_cb *cb, int *exit_code, struct error *err)
{
	unsigned char	 head[SUPF_HEADER + 1 + SUPF_ID_MAX + 8];
	unsigned char	*take = NULL, *t;
	size_t		 tcap = 0, c2;
	struct waiter	 w;
	struct chan	*c;
	size_t		 hlen, tlen;
	long long	 tick_at;
	int		 rc = CHAN_NONE;

	*exit_code = -1;
	if (prelen > 8 || (c = chan_get(sb, sup)) == NULL)
		return CHAN_NONE;
	if ((hlen = supf_tag_header(type, run_id, prelen + blen, head)) == 0 ||
	    waiter_add(c, sb, &w, run_id, 'r') == -1)
		return CHAN_NONE;
	if (prelen > 0)
		memcpy(head + hlen, pre, prelen);
	if (send_frame(c, head, hlen + prelen, body, blen, err) == -1) {
		waiter_remove(c, &w);
		return CHAN_NONE;
	}
	tick_at = clock_ms() + docker_tick_ms(sb->docker);
	for (;;) {
		bool ended, lost;

		pthread_mutex_lock(&c->lock);
		while (w.qlen == 0 && !w.ended && !w.lost &&
		    clock_ms() < tick_at)
			cond_wait_until(&w.cond, &c->lock, tick_at);
		/*
		 * Take the queue whole and give the reader the buffer emptied
		 * last time: two buffers per run, no churn of allocations.
		 */
		t = take;
		c2 = tcap;
		take = w.q;
		tcap = w.qcap;
		tlen = w.qlen;
		w.q = t;
		w.qcap = c2;
		w.qlen = 0;
		ended = w.ended;
		lost = w.lost;
		*exit_code = w.code;
		if (tlen > QUEUE_MAX)
			pthread_cond_broadcast(&c->changed);
		pthread_mutex_unlock(&c->lock);
		if (tlen > 0 && cb->bytes != NULL)
			cb->bytes(cb->arg, (const char *)take, tlen);
		if (ended) {
			rc = CHAN_ENDED;
			break;
		}
		if (docker_stopping()) {
			rc = CHAN_STOPPED;
			break;
		}
		if (lost) {
			error_kind(err, ERR_UPSTREAM, "the supervisor's channel "
			    "closed while run %s ran", run_id);
			rc = CHAN_LOST;
			break;
		}
		if (clock_ms() >= tick_at) {
			int stop;

			tick_at = clock_ms() + docker_tick_ms(sb->docker);
			pthread_mutex_lock(&c->lock);
			w.busy = true;
			pthread_cond_broadcast(&c->changed);
			pthread_mutex_unlock(&c->lock);
			stop = cb->tick != NULL && cb->tick(cb->arg) != 0;
			pthread_mutex_lock(&c->lock);
			w.busy = false;
			pthread_mutex_unlock(&c->lock);
			if (stop) {
				rc = CHAN_STOPPED;
				break;
			}
		}
	}
	if (rc == CHAN_ENDED && w.overflow) {
		/* Its live output has a gap: the record has it whole. */
		error_set(err, "run %s: live output dropped while busy", run_id);
		rc = CHAN_LOST;
	}
	free(take);
	waiter_remove(c, &w);
	return rc;
}

int
chan_run(struct sandbox *sb, const char *sup, const char *run_id,
    long timeout_s, size_t max_output, const char *command,
    const struct chan_cb *cb, int *exit_code, struct error *err)
{
	unsigned char	pre[8];
	size_t		clen = strlen(command);

	*exit_code = -1;
	if (clen < 1 || clen > SUPF_COMMAND_MAX || max_output > 0xffffffffu)
		return CHAN_NONE;
	supf_put32(pre, (uint32_t)timeout_s);
	supf_put32(pre + 4, (uint32_t)max_output);
	return run_frame(sb, sup, 'r', run_id, pre, sizeof(pre), command, clen,
	    cb, exit_code, err);
}

int
chan_term(struct sandbox *sb, const char *sup, const char *req_id,
    const void *args, size_t len, const struct chan_cb *cb, int *exit_code,
    struct error *err)
{
	*exit_code = -1;
	if (len < 3 || len > SUPF_CHAN_IN_MAX - 1 - SUPF_ID_MAX)
		return CHAN_NONE;
	return run_frame(sb, sup, 'p', req_id, NULL, 0, args, len, cb,
	    exit_code, err);
}

int
chan_ask(struct sandbox *sb, const char *sup, int type, const char *run_id)
{
	unsigned char	 head[SUPF_HEADER + 1 + SUPF_ID_MAX];
	struct waiter	 w;
	struct chan	*c;
	struct error	 e;
	size_t		 hlen;
	long long	 until;
	int		 rc = -1;

	if ((type != 'k' && type != 'q') || (c = chan_get(sb, sup)) == NULL)
		return -1;
	if ((hlen = supf_tag_header(type, run_id, 0, head)) == 0 ||
	    waiter_add(c, sb, &w, run_id, type) == -1)
		return -1;
	if (send_frame(c, head, hlen, NULL, 0, &e) == 0) {
		until = clock_ms() + ASK_MS;
		pthread_mutex_lock(&c->lock);
		while (!w.ended && !w.lost && !docker_stopping() &&
		    clock_ms() < until)
			cond_wait_until(&w.cond, &c->lock,
			    clock_ms() + 1000 < until ?
			    clock_ms() + 1000 : until);
		if (w.ended)
			rc = w.code;
		else if (!w.lost && c->conn != NULL) {
			/* A channel that does not answer is of no use. */
			log_warn("container %s: the supervisor's channel did "
			    "not answer within %d s; closing it", c->container,
			    ASK_MS / 1000);
			docker_conn_shutdown(c->conn);
		}
		pthread_mutex_unlock(&c->lock);
	}
	waiter_remove(c, &w);
	return rc;
}

void
chan_shutdown(void)
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
