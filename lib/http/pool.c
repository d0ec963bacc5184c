/*
 * pool.c: the threads that serve FastCGI requests, and the stop.
 *
 * Concurrency: up to nthreads threads serve requests, so a long streamed
 * response or a wait on the engine blocks only its own thread. At most one
 * thread waits in accept() at a time, and the thread that ends a request
 * takes the next itself when none waits: under load the next connection is
 * then already queued, and the same warm thread takes it without sleeping,
 * where a crowd of threads in accept() cost a sleep and a wake-up (two
 * thread switches) per request. The other idle threads wait on a condition.
 * The turn covers accept() alone; libfcgi then reads the web server's
 * records from the connection given to it, under the body deadline (a
 * connection the web server keeps waits for its next request without
 * one). A TCP listener gets libfcgi's own treatment: TCP_NODELAY, and the
 * FCGI_WEB_SERVER_ADDRS list.
 *
 * The signal thread watches the pool between signals. When for a whole
 * tick (POOL_TICK_NS) no thread has waited in accept() and either no
 * connection was taken or connections queue behind slow requests, every
 * thread is held: it lets a waiting thread take accept(), or starts one
 * more, until nthreads; one a tick (pool_watch). An idle server so keeps one thread (its
 * stack, its database connection, its malloc arena); a request that takes
 * longer than a tick lets the next one in after at most two. It sleeps
 * while a thread waits in accept() and nothing comes (the thread that
 * takes a connection wakes it with SIG_TAKEN) and while no thread can be
 * let in.
 *
 * Signals: SIGTERM, SIGINT and SIGHUP are blocked everywhere and taken by
 * that thread, which sets the stop flag, wakes the waiting threads, and
 * interrupts (SIG_WAKE, pool_wake) the one in accept() and those reading
 * a request's records (struct slot); libfcgi's own handler would let a
 * streaming request run forever. The listening socket is never shut down:
 * under systemd it outlives the process and serves the next start. An
 * accept() that fails for good stops the server the same way, and
 * pool_serve (so http_serve) returns 1 (a supervisor starts it again).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "base/log.h"
#include "base/thread.h"
#include "http/extern.h"
#include "http/http.h"

#define THREAD_STACK	(512 * 1024)

#define POOL_TICK_NS	(1000 * 1000)	/* 1 ms */
#define POOL_QUICK	4		/* connections a thread takes a tick */
#define SIG_TAKEN	SIGUSR1		/* to the watch: a connection was taken */
#define SIG_WAKE	SIGUSR2		/* to a worker: leave a blocking call */
#define STOP_WAKE_NS	(10 * 1000 * 1000)	/* between two SIG_WAKEs */
#define STOP_WAKES	500		/* at most, on a stop: 5 s */
#define STOP_WRITES	100		/* wakes before a write is cut: 1 s */

/* The pool; every field under pool_lock. */
struct serve_ctx {
	http_handler	 handler;
	void		*arg;
	pthread_mutex_t	 pool_lock;
	pthread_cond_t	 turn;		/* an idle thread may take accept() */
	pthread_t	 watch;		/* the signal and watch thread */
	sigset_t	 sigs;		/* what it takes */
	pthread_t	*tids;
	int		 max;		/* nthreads */
	int		 started;	/* tids[0..started) to join */
	int		 waiting;	/* idle threads waiting for turn */
	bool		 accepting;	/* a thread is in accept() */
	pthread_t	 acceptor;	/* which, while accepting */
	bool		 calling;	/* a thread was let in, not yet there */
	bool		 watch_asleep;	/* the watch waits for SIG_TAKEN */
	bool		 failed;	/* accept() failed for good */
	bool		 tcp;		/* the listening socket is TCP */
	bool		 allow_set;	/* FCGI_WEB_SERVER_ADDRS is set */
	struct in_addr	 allow[16];	/* its IPv4 addresses */
	int		 nallow;
	struct slot	*slots;		/* one a worker: tids[i], slots[i] */
	time_t		 spawn_failed;	/* when a thread last failed to start */
	unsigned long	 taken;		/* connections accepted, ever */
};

static atomic_bool	 stopping;

bool
pool_stopping(void)
{
	return atomic_load(&stopping);
}

/*
 * Wait for this thread's turn at accept(): now when no other thread is
 * there, else when the watch lets one in or the server stops.
 */
static void
take_turn(struct serve_ctx *ctx)
{
	pthread_mutex_lock(&ctx->pool_lock);
	while (ctx->accepting && !pool_stopping()) {
		ctx->waiting++;
		pthread_cond_wait(&ctx->turn, &ctx->pool_lock);
		ctx->waiting--;
	}
	ctx->accepting = true;
	ctx->acceptor = pthread_self();
	ctx->calling = false;
	pthread_mutex_unlock(&ctx->pool_lock);
}

/* Leave accept(); a connection taken wakes the watch if it sleeps. */
static void
end_turn(struct serve_ctx *ctx, bool took)
{
	pthread_mutex_lock(&ctx->pool_lock);
	ctx->accepting = false;
	if (took)
		ctx->taken++;
	if (ctx->watch_asleep && !pool_stopping()) {
		ctx->watch_asleep = false;
		pthread_kill(ctx->watch, SIG_TAKEN);
	}
	pthread_mutex_unlock(&ctx->pool_lock);
}

/*
 * A TCP listener, as libfcgi's own accept does it: no Nagle delay on the
 * replies, and only the web servers that FCGI_WEB_SERVER_ADDRS lists (IPv4
 * addresses, comma-separated; unset, any) may connect.
 */
static void
listener_init(struct serve_ctx *ctx)
{
	struct sockaddr_storage	 ss;
	socklen_t		 len = sizeof(ss);
	const char		*list = getenv("FCGI_WEB_SERVER_ADDRS");
	char			 one[INET_ADDRSTRLEN];
	int			 room = (int)(sizeof(ctx->allow) / sizeof(ctx->allow[0]));

	if (getsockname(0, (struct sockaddr *)&ss, &len) == -1 ||
	    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
		return;
	ctx->tcp = true;
	ctx->allow_set = list != NULL && *list != '\0';
	/* An entry that is not an IPv4 address lets nobody in (libfcgi's way). */
	while (ctx->allow_set && *list != '\0') {
		size_t n = strcspn(list, ",");

		if (n < sizeof(one) && ctx->nallow < room) {
			memcpy(one, list, n);
			one[n] = '\0';
			if (inet_pton(AF_INET, one, &ctx->allow[ctx->nallow]) == 1)
				ctx->nallow++;
			else
				log_warn("FCGI_WEB_SERVER_ADDRS: \"%s\" is not an "
				    "IPv4 address: no web server matches it", one);
		} else
			log_warn("FCGI_WEB_SERVER_ADDRS: an entry of %zu bytes, "
			    "or past the %d kept, matches no web server", n, room);
		list += n + (list[n] == ',');
	}
}

/*
 * With FCGI_WEB_SERVER_ADDRS set, only an IPv4 peer on the list, or the
 * same address mapped into IPv6 (a dual-stack listener); an IPv6 peer is
 * on no IPv4 list.
 */
static bool
peer_allowed(struct serve_ctx *ctx, int fd)
{
	struct sockaddr_storage	 ss;
	struct in_addr		 a;
	socklen_t		 len = sizeof(ss);
	int			 i, on = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (!ctx->allow_set)
		return true;
	if (getpeername(fd, (struct sockaddr *)&ss, &len) == -1)
		return false;
	if (ss.ss_family == AF_INET)
		a = ((struct sockaddr_in *)&ss)->sin_addr;
	else if (ss.ss_family == AF_INET6 &&
	    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&ss)->sin6_addr))
		memcpy(&a, ((struct sockaddr_in6 *)&ss)->sin6_addr.s6_addr + 12,
		    sizeof(a));
	else
		return false;
	for (i = 0; i < ctx->nallow; i++)
		if (a.s_addr == ctx->allow[i].s_addr)
			return true;
	return false;
}

/*
 * The next connection from the listening socket (fd 0), taken in this
 * thread's turn; -1 when the server stops. The turn covers accept() alone:
 * the web server's records are read after it, under a read deadline, so a
 * connection that sends nothing holds only its own thread. Running out of
 * descriptors or memory is waited out; any other failure stops the server
 * (a supervisor starts it again).
 */
static int
accept_conn(struct serve_ctx *ctx)
{
	struct timespec	 pause = { 0, 10 * 1000 * 1000 };
	int		 fd = -1, e;

	take_turn(ctx);
	while (!pool_stopping()) {
		if ((fd = accept4(0, NULL, NULL, SOCK_CLOEXEC)) != -1) {
			if (!ctx->tcp || peer_allowed(ctx, fd))
				break;
			close(fd);
			fd = -1;
			continue;
		}
		/* accept(2): a connection that failed before it was taken. */
		if ((e = errno) == EINTR || e == ECONNABORTED || e == EPROTO ||
		    e == ECONNRESET || e == ETIMEDOUT || e == EHOSTUNREACH ||
		    e == ENETUNREACH || e == ENETDOWN || e == ENOPROTOOPT ||
		    e == EHOSTDOWN || e == ENONET || e == EPERM)
			continue;
		/* A listening socket left nonblocking: wait, never spin. */
		if (e == EAGAIN || e == EWOULDBLOCK) {
			struct pollfd p = { 0, POLLIN, 0 };

			(void)poll(&p, 1, 1000);
			continue;
		}
		if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
			nanosleep(&pause, NULL);
			continue;
		}
		/*
		 * EINVAL: the socket listens no more. A process beside this
		 * one on the same socket (spawn-fcgi -F) shut it down as it
		 * stopped; this one stops too, as cleanly.
		 */
		pthread_mutex_lock(&ctx->pool_lock);
		if (!pool_stopping()) {
			if (e != EINVAL) {
				log_warn("accept: %s; stopping", strerror(e));
				ctx->failed = true;
			}
			pthread_kill(ctx->watch, SIGTERM);
		}
		pthread_mutex_unlock(&ctx->pool_lock);
		break;
	}
	end_turn(ctx, fd != -1);
	return fd;
}

/*
 * The connection this worker reads records from (-1: none), for the stop
 * to interrupt; false when the server stops.
 */
static bool
slot_set(struct slot *sl, int fd)
{
	bool	ok;

	pthread_mutex_lock(&sl->ctx->pool_lock);
	ok = fd == -1 || !pool_stopping();
	sl->fd = ok ? fd : -1;
	pthread_mutex_unlock(&sl->ctx->pool_lock);
	return ok;
}

static void *
worker(void *arg)
{
	struct slot		*sl = arg;
	struct serve_ctx	*ctx = sl->ctx;
	struct http_req		*r;
	int			 rc;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		pthread_mutex_lock(&ctx->pool_lock);
		ctx->calling = false;
		pthread_mutex_unlock(&ctx->pool_lock);
		return NULL;
	}
	r->status = 200;
	r->slot = sl;
	/* No listening socket: libfcgi reads the connections given to it. */
	(void)FCGX_InitRequest(&r->fcgx, -1, 0);
	while (!pool_stopping()) {
		/*
		 * A connection the web server keeps (FCGI_KEEP_CONN) brings
		 * its next request; else a new one is taken. keepConnection
		 * makes FCGX_Accept_r read it rather than close it; the begin
		 * record then says whether it is kept.
		 */
		if (r->fcgx.ipcFd < 0) {
			long	ms = body_deadline_ms();
			int	fd = accept_conn(ctx);

			if (fd < 0)
				break;
			r->fcgx.ipcFd = fd;
			r->fcgx.keepConnection = 1;
			r->sndtimeo = false;
			r->rcvtimeo_ms = body_set_rcvtimeo(fd, ms) == 0 ? ms : 0;
		}
		if (!slot_set(sl, r->fcgx.ipcFd))
			break;
		rc = FCGX_Accept_r(&r->fcgx);
		(void)slot_set(sl, -1);
		/* Bad records: libfcgi closed the connection; take another. */
		if (rc < 0) {
			r->rcvtimeo_ms = 0;
			continue;
		}
		r->in = r->fcgx.in;
		r->out = r->fcgx.out;
		r->envp = r->fcgx.envp;
		http_handle(r, ctx->handler, ctx->arg);
		out_finish(r);	/* a no-op after http_end */
	}
	FCGX_Free(&r->fcgx, 1);
	free(r);
	return NULL;
}

/*
 * Start one more worker, unless nthreads run; after a failure, not again
 * for a second. Under pool_lock.
 */
static int
pool_spawn(struct serve_ctx *ctx)
{
	pthread_attr_t	attr;
	time_t		now = time(NULL);
	int		rc = -1;

	if (ctx->started >= ctx->max || pool_stopping() ||
	    now - ctx->spawn_failed < 1)
		return -1;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, THREAD_STACK);
	ctx->slots[ctx->started].ctx = ctx;
	ctx->slots[ctx->started].fd = -1;
	if (thread_start(&ctx->tids[ctx->started], &attr, worker,
	    &ctx->slots[ctx->started], "cs-worker") == 0) {
		ctx->started++;
		rc = 0;
	} else {
		ctx->spawn_failed = now;
		log_warn("cannot start a thread (%d running)", ctx->started);
	}
	pthread_attr_destroy(&attr);
	return rc;
}

/* A connection waits in the listening socket's queue. */
static bool
backlog(void)
{
	struct pollfd	p = { 0, POLLIN, 0 };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/*
 * One tick of the watch, under pool_lock: seen is the count of connections
 * taken at the last tick. No thread is in accept(), and either none was
 * taken since (every thread is held by a request), or connections wait
 * while the threads serving take fewer than POOL_QUICK each a tick (their
 * requests are slow ones, or wait on something): one idle thread is let
 * in, or one more started; one a tick. Threads whose requests are quick
 * keep up with the queue alone, and are not joined by threads that would
 * park and wake for nothing.
 */
static void
pool_watch(struct serve_ctx *ctx, unsigned long seen)
{
	unsigned long	busy = (unsigned long)(ctx->started - ctx->waiting);

	if (ctx->accepting || ctx->calling || (ctx->taken != seen &&
	    (ctx->taken - seen >= POOL_QUICK * busy || !backlog())))
		return;
	if (ctx->waiting > 0) {
		pthread_cond_signal(&ctx->turn);
		ctx->calling = true;
	} else if (pool_spawn(ctx) == 0)
		ctx->calling = true;
}

/*
 * On a stop, under pool_lock: wake the thread in accept() and those
 * reading a request's records (their calls fail with EINTR), again every
 * STOP_WAKE_NS until none is left, STOP_WAKES times at most: a signal that
 * comes just before the call blocks is not the last. The listening socket
 * is left as it is: under systemd it is the socket's, and serves the next
 * start. A thread is signalled only while it is known to be there (the
 * lock held), so it is alive.
 */
static void
pool_wake(struct serve_ctx *ctx)
{
	struct timespec	 gap = { 0, STOP_WAKE_NS };
	bool		 left = true;
	int		 n, i;

	for (n = 0; left && n < STOP_WAKES; n++) {
		left = false;
		if (ctx->accepting) {
			pthread_kill(ctx->acceptor, SIG_WAKE);
			left = true;
		}
		for (i = 0; i < ctx->started; i++)
			if (ctx->slots[i].fd != -1) {
				pthread_kill(ctx->tids[i], SIG_WAKE);
				left = true;
			} else if (atomic_load(&ctx->slots[i].writing)) {
				/* Still in a write after STOP_WRITES: stuck. */
				if (n >= STOP_WRITES)
					pthread_kill(ctx->tids[i], SIG_WAKE);
				left = true;
			}
		if (left) {
			pthread_mutex_unlock(&ctx->pool_lock);
			nanosleep(&gap, NULL);
			pthread_mutex_lock(&ctx->pool_lock);
		}
	}
}

static void
on_wake(int sig)
{
	(void)sig;
}

/*
 * The signal thread, which watches the pool between signals: each tick
 * while no thread waits in accept() and one could be let in, asleep while
 * one waits there and nothing comes, or none can be let in.
 */
static void *
signal_thread(void *arg)
{
	struct serve_ctx	*ctx = arg;
	struct timespec		 tick = { 0, POOL_TICK_NS }, second = { 1, 0 };
	unsigned long		 seen;
	bool			 check = false;
	int			 sig;

	pthread_mutex_lock(&ctx->pool_lock);
	seen = ctx->taken;
	for (;;) {
		/* Every thread in a request, and none to let in or start. */
		bool	held = !ctx->accepting && ctx->waiting == 0;
		bool	quiet = (ctx->accepting && ctx->taken == seen) ||
		    (held && ctx->started >= ctx->max);
		/* A thread failed to start: the next try is a second later. */
		bool	backoff = held && time(NULL) - ctx->spawn_failed < 1;

		if (check && !quiet)
			pool_watch(ctx, seen);
		seen = ctx->taken;
		ctx->watch_asleep = quiet;
		pthread_mutex_unlock(&ctx->pool_lock);
		sig = quiet ? sigwaitinfo(&ctx->sigs, NULL) :
		    sigtimedwait(&ctx->sigs, NULL, backoff ? &second : &tick);
		pthread_mutex_lock(&ctx->pool_lock);
		ctx->watch_asleep = false;
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
			break;
		/* A connection just taken gets a whole tick first. */
		check = sig != SIG_TAKEN;
		if (!check)
			seen = ctx->taken;
	}
	atomic_store(&stopping, true);
	pthread_cond_broadcast(&ctx->turn);
	pool_wake(ctx);
	pthread_mutex_unlock(&ctx->pool_lock);
	return NULL;
}

int
pool_serve(http_handler handler, void *arg, int nthreads)
{
	struct serve_ctx	 ctx;
	struct sigaction	 wake;
	sigset_t		 unblock;
	int			 i, rc = 1;

	memset(&ctx, 0, sizeof(ctx));
	ctx.handler = handler;
	ctx.arg = arg;
	sigemptyset(&ctx.sigs);
	sigaddset(&ctx.sigs, SIGTERM);
	sigaddset(&ctx.sigs, SIGINT);
	sigaddset(&ctx.sigs, SIGHUP);
	sigaddset(&ctx.sigs, SIG_TAKEN);
	pthread_sigmask(SIG_BLOCK, &ctx.sigs, NULL);
	signal(SIGPIPE, SIG_IGN);
	/* Without SA_RESTART: a blocking call it comes in fails (EINTR). */
	memset(&wake, 0, sizeof(wake));
	wake.sa_handler = on_wake;
	sigemptyset(&wake.sa_mask);
	sigaction(SIG_WAKE, &wake, NULL);
	sigemptyset(&unblock);
	sigaddset(&unblock, SIG_WAKE);
	pthread_sigmask(SIG_UNBLOCK, &unblock, NULL);

	ctx.max = nthreads < 1 ? 1 : nthreads;
	listener_init(&ctx);
	pthread_mutex_init(&ctx.pool_lock, NULL);
	pthread_cond_init(&ctx.turn, NULL);
	if ((ctx.tids = calloc((size_t)ctx.max, sizeof(*ctx.tids))) == NULL ||
	    (ctx.slots = calloc((size_t)ctx.max, sizeof(*ctx.slots))) == NULL)
		goto out;
	/*
	 * The first worker, then the watch, under the lock: neither looks at
	 * ctx.watch before it is set.
	 */
	pthread_mutex_lock(&ctx.pool_lock);
	if (pool_spawn(&ctx) == -1 ||
	    thread_start(&ctx.watch, NULL, signal_thread, &ctx,
	    "cs-signal") != 0) {
		if (ctx.started > 0) {
			atomic_store(&stopping, true);
			pthread_cond_broadcast(&ctx.turn);
			pool_wake(&ctx);
		}
		pthread_mutex_unlock(&ctx.pool_lock);
		log_warn("cannot start the first thread or the signal thread");
		for (i = 0; i < ctx.started; i++)
			pthread_join(ctx.tids[i], NULL);
		goto out;
	}
	ctx.calling = true;
	pthread_mutex_unlock(&ctx.pool_lock);
	/*
	 * Only the watch starts threads, and none once the stop flag is set,
	 * which it sets before it ends: after it, tids[0..started) is final.
	 */
	pthread_join(ctx.watch, NULL);
	for (i = 0; i < ctx.started; i++)
		pthread_join(ctx.tids[i], NULL);
	if (ctx.failed)
		goto out;
	rc = 0;
out:
	free(ctx.tids);
	free(ctx.slots);
	pthread_cond_destroy(&ctx.turn);
	pthread_mutex_destroy(&ctx.pool_lock);
	return rc;
}
