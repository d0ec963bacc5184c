/*
 * preview/serve.c: the preview program; see preview/preview.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/error.h"
#include "base/log.h"
#include "engine/docker.h"
#include "links/previews.h"
#include "preview/phead.h"
#include "preview/preview.h"
#include "sandbox/portconn.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "store/db.h"

#define BUF_SIZE	(64u << 10)
#define SPLICE_SIZE	(256u << 10)	/* a pipe's size, at most, per move */
#define OUT_HEAD_MAX	(PHEAD_MAX + 512)

static volatile sig_atomic_t	 stop;
static atomic_int		 live;
static const struct config	*cfg;

struct conn {
	int			 fd;
	struct portconn		*pc;
	atomic_llong		 last_ms;	/* a byte either way */
	atomic_bool		 done;
	char			 head[PHEAD_MAX];
	size_t			 head_len;
	struct preview_row	 row;
};

static bool
stopping(void)
{
	return stop != 0;
}

static void
on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

/* Write all of buf to the front; -1 when it is gone or stalled. */
static int
front_write(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void
html_esc(char *out, size_t n, const char *s)
{
	size_t	o = 0;
	const char *r;

	for (; *s != '\0'; s++) {
		switch (*s) {
		case '<': r = "&lt;"; break;
		case '>': r = "&gt;"; break;
		case '&': r = "&amp;"; break;
		case '"': r = "&quot;"; break;
		default: r = NULL; break;
		}
		if (r != NULL) {
			if (o + strlen(r) >= n)
				break;
			memcpy(out + o, r, strlen(r));
			o += strlen(r);
		} else {
			if (o + 1 >= n)
				break;
			out[o++] = *s;
		}
	}
	out[o] = '\0';
}

/* One of the program's own pages, and the end of the connection. */
static void
page(int fd, int status, const char *title, const char *text)
{
	char	 esc[1024], body[2048], head[512];
	int	 bn, hn;
	const char *reason;

	switch (status) {
	case 400: reason = "Bad Request"; break;
	case 403: reason = "Forbidden"; break;
	case 404: reason = "Not Found"; break;
	case 410: reason = "Gone"; break;
	case 429: reason = "Too Many Requests"; break;
	case 502: reason = "Bad Gateway"; break;
	case 503: reason = "Service Unavailable"; break;
	default: reason = "Error"; break;
	}
	html_esc(esc, sizeof(esc), text);
	bn = snprintf(body, sizeof(body), "<!doctype html>\n<html><head>"
	    "<meta charset=\"utf-8\"><title>%s</title></head>\n<body>"
	    "<h1>%s</h1>\n<p>%s</p>\n</body></html>\n", title, title, esc);
	if (bn < 0 || (size_t)bn >= sizeof(body))
		bn = (int)strlen(body);
	hn = snprintf(head, sizeof(head), "HTTP/1.1 %d %s\r\n"
	    "Content-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n"
	    "Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n"
	    "Referrer-Policy: no-referrer\r\nConnection: close\r\n\r\n",
	    status, reason, bn);
	if (front_write(fd, head, (size_t)hn) == 0)
		front_write(fd, body, (size_t)bn);
}

/* The page for a link that did not pass previews_check. */
static void
refused(int fd, const struct error *err)
{
	switch (err->kind) {
	case ERR_GONE:
		page(fd, 410, "This preview has ended", err->msg);
		break;
	case ERR_INTERNAL:
		page(fd, 503, "The preview cannot be checked now", err->msg);
		break;
	default:
		page(fd, 403, "This preview needs its link",
		    "Open the preview link you were given (it sets a cookie for "
		    "this site). This link or cookie is not valid.");
		break;
	}
}

/* Read the request head within PREVIEW_HEAD_S. Its length, or -1. */
static long
read_head(struct conn *c, struct phead *h, const char **why)
{
	long long	until = clock_ms() + PREVIEW_HEAD_S * 1000LL;
	struct pollfd	pfd;
	ssize_t		n;
	long		hl;

	*why = "the request did not arrive in time";
	for (;;) {
		if (stop || clock_ms() >= until)
			return -1;
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		n = recv(c->fd, c->head + c->head_len,
		    sizeof(c->head) - c->head_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			*why = NULL;
			return -1;
		}
		c->head_len += (size_t)n;
		if ((hl = phead_parse(c->head, c->head_len, false, h, why)) != 0)
			return hl;
	}
}

/* The bytes from the front to the app, on their own thread. */
static void *
pump(void *arg)
{
	struct conn	*c = arg;
	struct pollfd	 pfd;
	char		*buf;
	ssize_t		 n;

	if ((buf = malloc(BUF_SIZE)) == NULL)
		goto out;
	while (!atomic_load(&c->done) && !stop) {
		pfd.fd = c->fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 1000) <= 0) {
			/* Idle both ways: the relay is woken by the shutdown. */
			if (clock_ms() - atomic_load(&c->last_ms) >
			    PREVIEW_IDLE_S * 1000LL)
				break;
			continue;
		}
		n = recv(c->fd, buf, BUF_SIZE, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		atomic_store(&c->last_ms, clock_ms());
		if (portconn_send(c->pc, buf, (size_t)n,
		    PREVIEW_IDLE_S * 1000) == -1)
			break;
	}
out:
	free(buf);
	atomic_store(&c->done, true);
	portconn_shutdown(c->pc);
	return NULL;
}

/*
 * The rest of an answer from a socket of the app's (a lane's), moved to
 * the front without a copy here (splice, through a pipe). splice stops at
 * an urgent byte and says EAGAIN while poll says readable: such bytes are
 * read and written as any (buf, BUF_SIZE bytes). Every pass without a
 * byte looks at the idle deadline; a socket made blocking again by the
 * container (its copy shares the flags) is woken by the pump's shutdown
 * (idle or SIGTERM). 0 when it ended; -1 when splice cannot be used and
 * nothing was moved.
 */
static int
splice_rest(struct conn *c, int app, char *buf)
{
	struct pollfd	pfd;
	ssize_t		n, m;
	bool		moved = false, ready = false;
	int		p[2];

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	fcntl(p[1], F_SETPIPE_SZ, (int)SPLICE_SIZE);
	while (!atomic_load(&c->done) && !stop) {
		n = splice(app, NULL, p[1], NULL, SPLICE_SIZE, SPLICE_F_MOVE |
		    SPLICE_F_NONBLOCK);
		if (n == 0)
			break;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			if (!moved && errno == EINVAL) {
				close(p[0]);
				close(p[1]);
				return -1;
			}
			break;
		}
		if (n < 0 && ready) {
			/* Readable, yet splice will not: copy what is there. */
			ready = false;
			n = recv(app, buf, BUF_SIZE, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN &&
			    errno != EINTR))
				break;
			if (n > 0) {
				atomic_store(&c->last_ms, clock_ms());
				if (front_write(c->fd, buf, (size_t)n) == -1)
					break;
				continue;
			}
		}
		if (n < 0) {
			if (clock_ms() - atomic_load(&c->last_ms) >
			    PREVIEW_IDLE_S * 1000LL)
				break;
			pfd.fd = app;
			pfd.events = POLLIN;
			ready = poll(&pfd, 1, 1000) > 0;
			continue;
		}
		ready = false;
		moved = true;
		atomic_store(&c->last_ms, clock_ms());
		while (n > 0) {
			m = splice(p[0], NULL, c->fd, NULL, (size_t)n,
			    SPLICE_F_MOVE);
			if (m < 0 && errno == EINTR)
				continue;
			if (m <= 0)
				goto out;
			n -= m;
		}
	}
out:
	close(p[0]);
	close(p[1]);
	return 0;
}

/*
 * The app's answer to the front: its head parsed and rewritten, then the
 * bytes as they come. Returns when either side ends, SIGTERM, or
 * PREVIEW_IDLE_S of silence.
 */
static void
relay(struct conn *c, bool upgrade, bool may_splice)
{
	struct phead	 h;
	const char	*why;
	char		*buf, *ahead, out[OUT_HEAD_MAX];
	size_t		 alen = 0, off, take;
	long		 n, hl, ol;
	bool		 in_head = true, sent = false;
	const char	*cookie = previews_cookie(cfg);

	buf = malloc(BUF_SIZE);
	ahead = malloc(PHEAD_MAX);
	if (buf == NULL || ahead == NULL)
		goto out;
	while (!atomic_load(&c->done) && !stop) {
		n = portconn_recv(c->pc, buf, BUF_SIZE, 1000);
		if (n < 0)
			break;
		if (n == 0) {
			if (clock_ms() - atomic_load(&c->last_ms) >
			    PREVIEW_IDLE_S * 1000LL)
				break;
			continue;
		}
		atomic_store(&c->last_ms, clock_ms());
		if (!in_head) {
			if (front_write(c->fd, buf, (size_t)n) == -1)
				break;
			continue;
		}
		/* The head: gathered within PHEAD_MAX, then rewritten. */
		off = 0;
		while (in_head && off < (size_t)n) {
			take = (size_t)n - off < PHEAD_MAX - alen ?
			    (size_t)n - off : PHEAD_MAX - alen;
			memcpy(ahead + alen, buf + off, take);
			alen += take;
			off += take;
			/* Each whole head gathered: interim ones, then the answer's. */
			while (in_head && (hl = phead_parse(ahead, alen, true, &h,
			    &why)) != 0) {
				if (hl < 0 || (ol = phead_response(&h, cookie, out,
				    sizeof(out), &why)) < 0 ||
				    (h.status == 101 && !upgrade)) {
					if (!sent)
						page(c->fd, 502, "The app's answer "
						    "was refused", why != NULL ? why :
						    "an upgrade that was not asked "
						    "for");
					goto out;
				}
				if (front_write(c->fd, out, (size_t)ol) == -1)
					goto out;
				sent = true;
				if (h.status >= 200 || h.status == 101)
					in_head = false;
				alen -= (size_t)hl;
				memmove(ahead, ahead + hl, alen);
			}
		}
		if (in_head)
			continue;
		/* What came after the answer's head: the body's first bytes. */
		if ((alen > 0 && front_write(c->fd, ahead, alen) == -1) ||
		    (off < (size_t)n && front_write(c->fd, buf + off,
		    (size_t)n - off) == -1))
			break;
		alen = 0;
		/* The rest, from a lane's socket: moved, not copied. */
		if (may_splice && portconn_fd(c->pc) >= 0 &&
		    splice_rest(c, portconn_fd(c->pc), buf) == 0)
			break;
	}
	if (!sent)
		page(c->fd, 502, "The app closed the connection",
		    "The app in the sandbox closed the connection without an "
		    "answer.");
out:
	free(buf);
	free(ahead);
}

/* The first request of a link: its cookie, and a redirect to the path. */
static void
land(struct conn *c, struct db *db, const char *id, const char *target)
{
	const char	*sig = target + strlen(PREVIEW_PREFIX), *rest;
	size_t		 siglen = strcspn(sig, "/?");
	struct error	 err;
	char		 head[OUT_HEAD_MAX];
	long long	 now = (long long)time(NULL);
	int		 n;

	if (previews_check(db, cfg->api_key, id, sig, siglen, now, &c->row,
	    &err) == -1) {
		refused(c->fd, &err);
		return;
	}
	rest = sig + siglen;
	n = snprintf(head, sizeof(head), "HTTP/1.1 302 Found\r\n"
	    "Location: %s%s\r\nSet-Cookie: %s=%.*s; Path=/; Max-Age=%lld; "
	    "HttpOnly; SameSite=Lax%s\r\nCache-Control: no-store\r\n"
	    "Referrer-Policy: no-referrer\r\nContent-Length: 0\r\n"
	    "Connection: close\r\n\r\n", rest[0] == '/' ? "" : "/", rest,
	    previews_cookie(cfg), (int)siglen, sig, c->row.expires - now,
	    previews_https(cfg) ? "; Secure" : "");
	if (n > 0 && (size_t)n < sizeof(head))
		front_write(c->fd, head, (size_t)n);
	else
		page(c->fd, 400, "Bad request", "The path is too long.");
}

/* A request whose head may reach the app twice: GET or HEAD. */
static bool
safe_twice(const struct phead *h)
{
	return (h->part_len[0] == 3 && memcmp(h->part[0], "GET", 3) == 0) ||
	    (h->part_len[0] == 4 && memcmp(h->part[0], "HEAD", 4) == 0);
}

static void
serve(struct conn *c)
{
	struct phead		 h;
	const struct phead_field *host;
	struct sandbox		*sb = NULL;
	struct error		 err;
	struct db		*db;
	const char		*why, *target;
	char			 id[PREVIEW_ID_LEN + 1], sig[LINK_SIG_LEN + 8];
	char			 out[OUT_HEAD_MAX], msg[640];
	long			 hl, ol, sl;
	bool			 counted = false, upgrade, ahead;
	pthread_t		 t;

	if ((hl = read_head(c, &h, &why)) < 0) {
		if (why != NULL)
			page(c->fd, 400, "Bad request", why);
		return;
	}
	if ((host = phead_get(&h, "host")) == NULL ||
	    previews_host_id(host->value, host->value_len, id) == -1) {
		page(c->fd, 404, "No such preview", "This host names no "
		    "preview.");
		return;
	}
	if ((db = db_thread(cfg->db_path, &err)) == NULL) {
		log_warn("%s", err.msg);
		page(c->fd, 503, "Unavailable", "The server's database is "
		    "unavailable.");
		return;
	}
	target = h.part[1];
	if (h.part_len[1] >= strlen(PREVIEW_PREFIX) &&
	    strncmp(target, PREVIEW_PREFIX, strlen(PREVIEW_PREFIX)) == 0) {
		/* NUL-terminated copy of the target for land(). */
		char tgt[PHEAD_MAX];

		memcpy(tgt, target, h.part_len[1]);
		tgt[h.part_len[1]] = '\0';
		land(c, db, id, tgt);
		return;
	}
	if ((sl = phead_cookie(&h, previews_cookie(cfg), sig,
	    sizeof(sig))) < 0) {
		page(c->fd, 403, "This preview needs its link", "Open the "
		    "preview link you were given: it sets a cookie for this "
		    "site, which this request does not carry.");
		return;
	}
	if (previews_check(db, cfg->api_key, id, sig, (size_t)sl,
	    (long long)time(NULL), &c->row, &err) == -1) {
		refused(c->fd, &err);
		return;
	}
	if (db_exec(db, STMT_PREVIEW_OPEN, "itti", (long long)time(NULL), id,
	    c->row.owner, (long long)cfg->preview_conns) != 1) {
		page(c->fd, 429, "Too many preview connections", "This "
		    "sandbox's previews have as many connections open as the "
		    "server allows (SANDBOX_PREVIEW_CONNECTIONS). Close some "
		    "tabs, or try again in a moment.");
		return;
	}
	counted = true;
	upgrade = phead_is_upgrade(&h);
	if ((ol = phead_request(&h, NULL, previews_cookie(cfg), out,
	    sizeof(out))) < 0) {
		page(c->fd, 400, "Bad request", "The request head is too long.");
		goto out;
	}
	/* Someone looking at a preview is using the sandbox (idle stop). */
	sandboxes_touch(cfg, db, c->row.owner);
	atomic_store(&c->last_ms, clock_ms());
	/*
	 * A GET's head goes right behind the open (sent again if the channel
	 * dies before the answer); any other's once connected.
	 */
	ahead = safe_twice(&h);
	if (sandbox_open(cfg, c->row.owner, &sb, &err) == -1 ||
	    portconn_open(sb, c->row.port, out, ahead ? (size_t)ol : 0,
	    &c->pc, &err) == -1) {
		if (err.kind == ERR_NOT_FOUND && sb != NULL)
			snprintf(msg, sizeof(msg), "Nothing listens on port %ld "
			    "in the sandbox. Start the server there, then "
			    "reload this page.", c->row.port);
		else
			snprintf(msg, sizeof(msg), "The sandbox cannot be "
			    "reached for port %ld: %.400s", c->row.port, err.msg);
		page(c->fd, 502, err.kind == ERR_NOT_FOUND && sb != NULL ?
		    "Nothing listens on this port" : "The sandbox cannot be "
		    "reached", msg);
		goto out;
	}
	if ((!ahead && portconn_send(c->pc, out, (size_t)ol, 30000) == -1) ||
	    ((size_t)hl < c->head_len && portconn_send(c->pc, c->head + hl,
	    c->head_len - (size_t)hl, 30000) == -1)) {
		/*
		 * The app stopped taking the request: it may have answered
		 * first (a 413 for a body too large). That answer, else a
		 * 502 page.
		 */
		relay(c, upgrade, false);	/* no pump to wake a splice */
		goto out;
	}
	if (pthread_create(&t, NULL, pump, c) != 0) {
		page(c->fd, 503, "Unavailable", "The server is busy.");
		goto out;
	}
	relay(c, upgrade, true);
	atomic_store(&c->done, true);
	/* Our answer is whole: the front sees its end (the pump, within 1 s). */
	shutdown(c->fd, SHUT_WR);
	portconn_shutdown(c->pc);
	pthread_join(t, NULL);
out:
	portconn_close(c->pc);
	c->pc = NULL;
	if (sb != NULL)
		sandbox_close(sb);
	if (counted)
		db_exec(db, STMT_PREVIEW_CLOSE, "t", id);
}

/*
 * A lingering close: our side ends first, then what the front still sends
 * is read and dropped for a moment, so closing with bytes unread does not
 * reset the connection under the answer just written.
 */
static void
linger_close(int fd)
{
	struct pollfd	pfd;
	char		buf[4096];
	long long	until = clock_ms() + 1000;

	shutdown(fd, SHUT_WR);
	while (clock_ms() < until) {
		pfd.fd = fd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			break;
		if (pfd.revents != 0 && recv(fd, buf, sizeof(buf),
		    MSG_DONTWAIT) <= 0)
			break;
	}
	close(fd);
}

static void *
conn_main(void *arg)
{
	struct conn *c = arg;

	serve(c);
	linger_close(c->fd);
	free(c);
	atomic_fetch_sub(&live, 1);
	return NULL;
}

/* fd 0 when it is a listening socket, else a new one at path. */
static int
listener(const char *path)
{
	struct sockaddr_un	sun;
	int			fd, on = 0;
	socklen_t		len = sizeof(on);

	if (getsockopt(0, SOL_SOCKET, SO_ACCEPTCONN, &on, &len) == 0 && on)
		return 0;
	if (path == NULL) {
		fprintf(stderr, "preview: no listening socket on fd 0 and no "
		    "socket path given (usage: preview [SOCKET])\n");
		return -1;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		fprintf(stderr, "preview: socket path too long\n");
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    chmod(path, 0660) == -1 || listen(fd, 128) == -1) {
		fprintf(stderr, "preview: cannot listen on %s: %s\n", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int
preview_main(int argc, char **argv)
{
	struct config		*c;
	struct error		 err;
	struct sigaction	 sa;
	struct pollfd		 pfd;
	struct conn		*cn;
	struct db		*db;
	pthread_attr_t		 attr;
	pthread_t		 t;
	long long		 until, beat;
	int			 lfd, fd;

	log_init("preview");
	if (config_load(&c, &err) == -1) {
		fprintf(stderr, "preview: %s\n", err.msg);
		return 1;
	}
	cfg = c;
	if ((lfd = listener(argc > 1 ? argv[1] : NULL)) == -1 ||
	    docker_global_init() == -1) {
		config_free(c);
		return 1;
	}
	docker_set_stop(stopping);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	db_set_cache_kib(c->db_cache_kib);
	if ((db = db_thread(c->db_path, &err)) != NULL) {
		db_exec(db, STMT_PREVIEW_RESET, "");
		previews_beat(db, (long long)time(NULL));
	} else
		log_warn("%s", err.msg);
	beat = clock_ms();
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 512u << 10);
	log_info("serving previews");
	while (!stop) {
		if (clock_ms() - beat >= PREVIEW_BEAT_S * 1000LL) {
			beat = clock_ms();
			if ((db = db_thread(c->db_path, &err)) != NULL)
				previews_beat(db, (long long)time(NULL));
		}
		pfd.fd = lfd;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 1000) <= 0)
			continue;
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		if (atomic_load(&live) >= PREVIEW_CONNS_MAX ||
		    (cn = calloc(1, sizeof(*cn))) == NULL) {
			page(fd, 503, "Unavailable", "The server has too many "
			    "preview connections open.");
			close(fd);
			continue;
		}
		cn->fd = fd;
		atomic_fetch_add(&live, 1);
		if (pthread_create(&t, &attr, conn_main, cn) != 0) {
			atomic_fetch_sub(&live, 1);
			page(fd, 503, "Unavailable", "The server is busy.");
			close(fd);
			free(cn);
		}
	}
	close(lfd);
	/* Each connection sees the stop flag within a second or two. */
	until = clock_ms() + 10000;
	while (atomic_load(&live) > 0 && clock_ms() < until)
		usleep(50000);
	pthread_attr_destroy(&attr);
	if (atomic_load(&live) == 0) {
		portconn_end();
		docker_global_cleanup();
	}
	config_free(c);
	return 0;
}
