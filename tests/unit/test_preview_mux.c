/*
 * test_preview_mux.c: the preview channel's two ends without an engine.
 * The server's reader of mux frames (sandbox/muxin.c) with hand-made
 * frames: order, windows, credit, ids it does not know. Then the real
 * supervisor ("supervisor mux") run here on pipes, against listeners on loopback: a stream whose app reads nothing
 * holds at most its window while another stream's bytes go through.
 * The supervisor is the copy compiled into the library (sandbox/sup.h),
 * the bytes the server uploads, written to a temporary file.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "sandbox/muxin.h"
#include "sandbox/portlane.h"
#include "send_fds.h"
#include "sandbox/sup.h"

static size_t
frame(unsigned char *out, int type, uint32_t id, const void *body,
    size_t len)
{
	supf_header(type, (uint32_t)(4 + len), out);
	supf_put32(out + SUPF_HEADER, id);
	memcpy(out + SUPF_HEADER + 4, body, len);
	return SUPF_HEADER + 4 + len;
}

static unsigned char	big[SUPF_HEADER + 4 + SUPF_MUX_DATA];

static void
test_reader(void)
{
	struct mux_in		m;
	struct mux_stream	s, t;
	unsigned char		buf[256], v[SUPF_HEADER + 4], g[4];
	size_t			n, i;
	int			rc;

	muxin_init(&m);
	CHECK(muxin_stream_init(&s, 7) == 0 && muxin_stream_init(&t, 8) == 0,
	    "mux: streams");
	muxin_link(&m, &s);
	muxin_link(&m, &t);
	n = frame(buf, 'N', 7, "+", 1);
	CHECK(muxin_feed(&m, buf, n) == -1, "mux: a frame before 'V' breaks it");
	muxin_free(&m);
	muxin_init(&m);
	muxin_link(&m, &s);
	muxin_link(&m, &t);
	supf_header('V', 4, v);
	supf_put32(v + SUPF_HEADER, SUPF_MUX_VERSION);
	CHECK(muxin_feed(&m, v, sizeof(v)) == 0 && m.ready, "mux: 'V'");
	n = frame(buf, 'D', 7, "x", 1);
	CHECK(muxin_feed(&m, buf, n) == -1, "mux: bytes before '+' break it");
	muxin_free(&m);
	muxin_init(&m);
	muxin_link(&m, &s);
	muxin_link(&m, &t);
	muxin_feed(&m, v, sizeof(v));
	n = frame(buf, 'N', 7, "+", 1);
	rc = muxin_feed(&m, buf, n);
	n = frame(buf, 'N', 8, "-", 1);
	rc |= muxin_feed(&m, buf, n);
	CHECK(rc == 0 && s.answer == '+' && t.answer == '-', "mux: answers");
	n = frame(buf, 'D', 99, "gone", 4);
	CHECK(muxin_feed(&m, buf, n) == 0, "mux: an unknown id is dropped");
	/* A whole window, in frames, then one byte past it. */
	memset(big + SUPF_HEADER + 4, 'a', SUPF_MUX_DATA);
	for (i = 0, rc = 0; i < SUPF_MUX_WINDOW / SUPF_MUX_DATA; i++) {
		frame(big, 'D', 7, big + SUPF_HEADER + 4, SUPF_MUX_DATA);
		rc |= muxin_feed(&m, big, sizeof(big));
	}
	CHECK(rc == 0 && s.qlen == SUPF_MUX_WINDOW, "mux: a window queued");
	n = muxin_take(&s, buf, 100);
	CHECK(n == 100 && s.qlen == SUPF_MUX_WINDOW - 100,
	    "mux: taken from the ring");
	/* Across the ring's end, in order. */
	n = frame(buf, 'D', 7, "0123456789", 10);
	CHECK(muxin_feed(&m, buf, n) == 0, "mux: more within the room taken");
	while (s.qlen > 10)
		muxin_take(&s, big, s.qlen - 10 < sizeof(big) ? s.qlen - 10 :
		    sizeof(big));
	n = muxin_take(&s, buf, sizeof(buf));
	CHECK(n == 10 && memcmp(buf, "0123456789", 10) == 0,
	    "mux: the ring wraps in order");
	/* Our credit: granted back, never past the window. */
	s.credit = 100;
	supf_put32(g, SUPF_MUX_WINDOW - 100);
	n = frame(buf, 'G', 7, g, 4);
	CHECK(muxin_feed(&m, buf, n) == 0 && s.credit == SUPF_MUX_WINDOW,
	    "mux: credit granted back");
	supf_put32(g, 1);
	n = frame(buf, 'G', 7, g, 4);
	CHECK(muxin_feed(&m, buf, n) == -1, "mux: credit past the window "
	    "breaks it");
	muxin_free(&m);
	/* A stream shut on our side: whatever comes for it is dropped. */
	muxin_init(&m);
	muxin_feed(&m, v, sizeof(v));
	t.answer = '+';
	t.shut = true;
	for (i = 0, rc = 0; i < 2 * SUPF_MUX_WINDOW / SUPF_MUX_DATA; i++) {
		frame(big, 'D', 8, big + SUPF_HEADER + 4, SUPF_MUX_DATA);
		rc |= muxin_feed(&m, big, sizeof(big));
	}
	muxin_link(&m, &t);
	CHECK(rc == 0 && t.qlen == 0, "mux: a shut stream's bytes dropped");
	n = frame(buf, 'Z', 8, "", 0);
	CHECK(muxin_feed(&m, buf, n) == 0, "mux: its end dropped");
	muxin_unlink(&m, &t);
	muxin_free(&m);
	muxin_stream_free(&s);
	muxin_stream_free(&t);
}

/*
 * A stream's ring starts empty and grows as bytes come, wrapped or not,
 * keeping them in order.
 */
static void
test_ring(void)
{
	static unsigned char	 data[40000], got[40000], fr[SUPF_HEADER + 4 + 10000];
	struct mux_in		 m;
	struct mux_stream	 u;
	unsigned char		 v[SUPF_HEADER + 4], buf[64];
	size_t			 i, n, have = 0, sent = 0;
	int			 rc = 0;

	for (i = 0; i < sizeof(data); i++)
		data[i] = (unsigned char)(i * 31 + i / 251);
	muxin_init(&m);
	CHECK(muxin_stream_init(&u, 5) == 0 && u.q == NULL && u.qcap == 0,
	    "mux: an idle stream holds no ring");
	muxin_link(&m, &u);
	supf_header('V', 4, v);
	supf_put32(v + SUPF_HEADER, SUPF_MUX_VERSION);
	rc |= muxin_feed(&m, v, sizeof(v));
	n = frame(buf, 'N', 5, "+", 1);
	rc |= muxin_feed(&m, buf, n);
	/* 10 kB in, 6 kB out, 10 kB in (across the ring's end), 10 kB more. */
	n = frame(fr, 'D', 5, data + sent, 10000);
	rc |= muxin_feed(&m, fr, n);
	sent += 10000;
	have += muxin_take(&u, got + have, 6000);
	n = frame(fr, 'D', 5, data + sent, 10000);
	rc |= muxin_feed(&m, fr, n);
	sent += 10000;
	CHECK(rc == 0 && u.qcap < 20000 && u.qoff + u.qlen > u.qcap,
	    "mux: the ring wraps before it grows");
	n = frame(fr, 'D', 5, data + sent, 10000);
	rc |= muxin_feed(&m, fr, n);
	sent += 10000;
	CHECK(rc == 0 && u.qcap >= 24000 && u.qcap <= SUPF_MUX_WINDOW,
	    "mux: the ring grows as bytes come");
	while (u.qlen > 0)
		have += muxin_take(&u, got + have, 7000);
	CHECK(have == sent && memcmp(got, data, sent) == 0,
	    "mux: a grown ring keeps the bytes in order");
	muxin_unlink(&m, &u);
	muxin_free(&m);
	muxin_stream_free(&u);
}

/* The real supervisor's end: run here, on pipes. */
static int	to_sup = -1, from_sup = -1;
static pid_t	sup_pid = -1;
static struct mux_in	rd;

static int
sup_start(const char *path, const char *lane)
{
	int	in[2], out[2];

	if (pipe(in) == -1 || pipe(out) == -1)
		return -1;
	if ((sup_pid = fork()) == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[0]); close(in[1]); close(out[0]); close(out[1]);
		if (lane != NULL)
			execl(path, "supervisor", "mux", "--lane", lane,
			    (char *)NULL);
		else
			execl(path, "supervisor", "mux", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	to_sup = in[1];
	from_sup = out[0];
	return sup_pid > 0 ? 0 : -1;
}

static void
send_all(const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0 && (n = write(to_sup, p, len)) > 0) {
		p += n;
		len -= (size_t)n;
	}
}

static void
send_fr(int type, uint32_t id, const void *body, size_t len)
{
	static unsigned char b[SUPF_HEADER + 4 + SUPF_MUX_DATA];

	send_all(b, frame(b, type, id, body, len));
}

/* 'c': open stream id to port. */
static void
send_open(uint32_t id, int port)
{
	unsigned char p[2] = { (unsigned char)(port >> 8), (unsigned char)port };

	send_fr('c', id, p, 2);
}

/* Read the supervisor's frames for up to ms (until cond holds). */
static void
pump_until(int ms, bool (*cond)(void))
{
	static unsigned char	buf[65536];
	struct pollfd		pfd;
	struct timespec		t0, t1;
	ssize_t			n;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if (cond != NULL && cond())
			return;
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((t1.tv_sec - t0.tv_sec) * 1000 +
		    (t1.tv_nsec - t0.tv_nsec) / 1000000 > ms)
			return;
		pfd.fd = from_sup;
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 50) <= 0)
			continue;
		if ((n = read(from_sup, buf, sizeof(buf))) <= 0)
			return;
		if (muxin_feed(&rd, buf, (size_t)n) == -1)
			return;
	}
}

static int
listener(int *port)
{
	struct sockaddr_in	a;
	socklen_t		len = sizeof(a);
	int			fd;

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(fd, 8) == -1 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) == -1)
		return -1;
	*port = ntohs(a.sin_port);
	return fd;
}

static struct mux_stream	sa, sb, sc, sd;

static bool ready(void) { return rd.ready; }
static bool both_answered(void) { return sa.answer != 0 && sb.answer != 0; }
static bool b_has_5(void) { return sb.qlen >= 5; }
static bool a_out_of_credit(void) { return sa.credit == 0; }
static bool a_ended(void) { return sa.ended; }
static bool cd_answered(void) { return sc.answer != 0 && sd.answer != 0; }

static void
test_supervisor(void)
{
	char		 path[] = "/tmp/cs-test-supervisor.XXXXXX";
	unsigned char	 chunk[SUPF_MUX_DATA], got[16];
	size_t		 sent = 0;
	int		 la = -1, lb = -1, pa = 0, pb = 0, ca, cb, fl, fd;

	signal(SIGPIPE, SIG_IGN);
	if ((fd = mkstemp(path)) == -1 || write(fd, sup_binary,
	    sup_binary_len) != (ssize_t)sup_binary_len || fchmod(fd, 0700) ==
	    -1 || close(fd) == -1) {
		SKIP("mux: the supervisor", "cannot write it to /tmp");
		return;
	}
	muxin_init(&rd);
	fl = (la = listener(&pa)) == -1 || (lb = listener(&pb)) == -1 ||
	    sup_start(path, NULL) == -1;
	/* Running now (or never): its file is no longer needed. */
	pump_until(1000, ready);
	unlink(path);
	if (fl) {
		SKIP("mux: the supervisor", "no loopback listener");
		return;
	}
	muxin_stream_init(&sa, 1);
	muxin_stream_init(&sb, 2);
	muxin_link(&rd, &sa);
	muxin_link(&rd, &sb);
	send_open(1, pa);
	send_open(2, pb);
	pump_until(5000, both_answered);
	CHECK(rd.ready && sa.answer == '+' && sb.answer == '+',
	    "mux: the supervisor connects two streams");
	ca = accept(la, NULL, NULL);
	cb = accept(lb, NULL, NULL);
	/*
	 * Stream 1's app reads nothing: we send what the credit allows, and
	 * the supervisor holds it (the socket's buffers take some first).
	 */
	memset(chunk, 'q', sizeof(chunk));
	while (sa.credit > 0 && sent < 64u * SUPF_MUX_WINDOW) {
		size_t n = sa.credit < sizeof(chunk) ? sa.credit : sizeof(chunk);

		send_fr('d', 1, chunk, n);
		sa.credit -= (uint32_t)n;
		sent += n;
		pump_until(20, a_out_of_credit);
	}
	pump_until(300, NULL);
	CHECK(sa.credit < SUPF_MUX_WINDOW && sent < 64u * SUPF_MUX_WINDOW,
	    "mux: a stream whose app reads nothing runs out of credit");
	/* Stream 2 still goes both ways. */
	send_fr('d', 2, "ping\n", 5);
	sb.credit -= 5;
	CHECK(read(cb, got, 5) == 5 && memcmp(got, "ping\n", 5) == 0,
	    "mux: another stream's bytes reach its app meanwhile");
	fl = (int)write(cb, "pong\n", 5);
	pump_until(3000, b_has_5);
	CHECK(fl == 5 && sb.qlen == 5 && muxin_take(&sb, got, 16) == 5 &&
	    memcmp(got, "pong\n", 5) == 0, "mux: and its app's answer back");
	/*
	 * Bytes right behind an open: kept until the connection is made,
	 * then the app's. Behind an open that fails: dropped, '-', and the
	 * channel goes on.
	 */
	muxin_stream_init(&sc, 3);
	muxin_stream_init(&sd, 4);
	muxin_link(&rd, &sc);
	muxin_link(&rd, &sd);
	send_open(3, pb);
	send_fr('d', 3, "GET / HTTP/1.1\r\n\r\n", 18);
	sc.credit -= 18;
	send_open(4, 1);	/* port 1: nothing listens */
	send_fr('d', 4, "lost", 4);
	pump_until(5000, cd_answered);
	CHECK(sc.answer == '+' && sd.answer == '-',
	    "mux: opens with bytes behind them are answered");
	fd = accept(lb, NULL, NULL);
	memset(got, 0, sizeof(got));
	CHECK(fd >= 0 && read(fd, got, 16) == 16 &&
	    memcmp(got, "GET / HTTP/1.1\r\n", 16) == 0,
	    "mux: bytes sent behind an open reach the app once connected");
	if (fd >= 0)
		close(fd);
	send_fr('d', 2, "more\n", 5);
	sb.credit -= 5;
	CHECK(read(cb, got, 5) == 5 && memcmp(got, "more\n", 5) == 0,
	    "mux: bytes behind a failed open are dropped; the channel goes on");
	muxin_unlink(&rd, &sc);
	muxin_unlink(&rd, &sd);
	muxin_stream_free(&sc);
	muxin_stream_free(&sd);
	/* The app on stream 1 closes: 'Z'. */
	close(ca);
	pump_until(3000, a_ended);
	CHECK(sa.ended, "mux: the app's close ends its stream");
	/* Our stdin's end ends the supervisor. */
	close(to_sup);
	CHECK(waitpid(sup_pid, &fl, 0) == sup_pid && WIFEXITED(fl),
	    "mux: the supervisor ends with its stdin");
	close(cb);
	close(la);
	close(lb);
	close(from_sup);
	muxin_unlink(&rd, &sa);
	muxin_unlink(&rd, &sb);
	muxin_stream_free(&sa);
	muxin_stream_free(&sb);
	muxin_free(&rd);
}

static struct mux_stream	sl, sm;

static bool l_answered(void) { return sl.answer != 0; }
static bool m_answered(void) { return sm.answer != 0; }

/*
 * The lane: a stream opened with a key is handed over on the lane socket
 * ('L'), and is then a socket of ours to the app; one opened without a
 * key goes through the mux as before.
 */
static void
test_lane(void)
{
	char		 path[] = "/tmp/cs-test-supervisor.XXXXXX";
	char		 dir[] = "/tmp/cs-test-lane.XXXXXX", inner[128];
	char		 sock[256];
	unsigned char	 open[2 + PORTLANE_KEY], key[PORTLANE_KEY], got[8];
	int		 la, pa = 0, lfd, conn, fd = -1, app, fl;

	if ((fd = mkstemp(path)) == -1 || write(fd, sup_binary,
	    sup_binary_len) != (ssize_t)sup_binary_len || fchmod(fd, 0700) ==
	    -1 || close(fd) == -1 || mkdtemp(dir) == NULL) {
		SKIP("lane: the supervisor", "cannot write to /tmp");
		return;
	}
	if ((lfd = portlane_listen(dir, inner, sizeof(inner))) == -1 ||
	    (la = listener(&pa)) == -1) {
		SKIP("lane: the supervisor", "no listener");
		return;
	}
	/* The supervisor runs here: the lane's path is the host's. */
	snprintf(sock, sizeof(sock), "%s%s", dir, strrchr(inner, '/'));
	CHECK(strncmp(inner, PORTLANE_TARGET "/p", sizeof(PORTLANE_TARGET)
	    + 1) == 0, "lane: the socket's path in the container");
	muxin_init(&rd);
	fl = sup_start(path, sock);
	pump_until(1000, ready);
	unlink(path);
	muxin_stream_init(&sl, 11);
	muxin_stream_init(&sm, 12);
	sl.lane = true;
	muxin_link(&rd, &sl);
	muxin_link(&rd, &sm);
	open[0] = (unsigned char)(pa >> 8);
	open[1] = (unsigned char)pa;
	memset(open + 2, 0xa5, PORTLANE_KEY);
	send_fr('c', 11, open, sizeof(open));
	pump_until(5000, l_answered);
	CHECK(fl == 0 && sl.answer == 'L', "lane: a keyed open is answered 'L'");
	conn = accept(lfd, NULL, NULL);
	fd = -1;
	CHECK(conn >= 0 && portlane_take(conn, key, &fd, 2000) == 0 &&
	    memcmp(key, open + 2, PORTLANE_KEY) == 0,
	    "lane: the key and the app's connection come on the lane");
	app = accept(la, NULL, NULL);
	CHECK(fd >= 0 && app >= 0 && write(fd, "hi", 2) == 2 &&
	    read(app, got, 2) == 2 && memcmp(got, "hi", 2) == 0 &&
	    write(app, "yo", 2) == 2, "lane: our bytes reach the app directly");
	{
		struct pollfd pfd = { .fd = fd, .events = POLLIN };

		CHECK(poll(&pfd, 1, 2000) == 1 && read(fd, got, 2) == 2 &&
		    memcmp(got, "yo", 2) == 0, "lane: and the app's come back");
	}
	/* Without a key, the mux as before; a second 'N' would be bad. */
	send_open(12, pa);
	pump_until(5000, m_answered);
	CHECK(sm.answer == '+', "lane: an open without a key uses the mux");
	/* A lane that is not there (a container made without the folder). */
	portlane_unlisten(lfd, dir, inner);
	lfd = -1;
	muxin_unlink(&rd, &sl);
	muxin_stream_free(&sl);
	muxin_stream_init(&sl, 13);
	sl.lane = true;
	muxin_link(&rd, &sl);
	send_fr('c', 13, open, sizeof(open));
	pump_until(5000, l_answered);
	CHECK(sl.answer == '+', "lane: a keyed open without a lane uses the mux");
	if (fd >= 0)
		close(fd);
	if (conn >= 0)
		close(conn);
	if (app >= 0)
		close(app);
	close(to_sup);
	waitpid(sup_pid, &fl, 0);
	close(from_sup);
	rmdir(dir);
	close(la);
	muxin_unlink(&rd, &sl);
	muxin_unlink(&rd, &sm);
	muxin_stream_free(&sl);
	muxin_stream_free(&sm);
	muxin_free(&rd);
}

/* One message on a fresh pair through portlane_take: 0 or -1. */
static int
take_one(const void *buf, size_t len, const int *fds, int n, int *fd)
{
	unsigned char	key[PORTLANE_KEY];
	int		sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == -1)
		return -2;
	send_fds(sv[1], buf, len, fds, n);
	rc = portlane_take(sv[0], key, fd, 500);
	close(sv[0]);
	close(sv[1]);
	return rc;
}

/* What the container may send on its lane: only a key and a TCP socket. */
static void
test_take(void)
{
	unsigned char	key[PORTLANE_KEY] = { 0 };
	int		p[2], two[2], lis, port, tcp, fd = -1, before;

	lis = listener(&port);
	tcp = socket(AF_INET, SOCK_STREAM, 0);
	if (lis == -1 || tcp == -1 || pipe(p) == -1) {
		SKIP("lane: hostile messages", "no sockets");
		return;
	}
	{
		struct sockaddr_in a;

		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		CHECK(take_one(key, sizeof(key), &tcp, 1, &fd) == -1,
		    "lane: a TCP socket not connected is refused");
		a.sin_port = htons((uint16_t)port);
		if (connect(tcp, (struct sockaddr *)&a, sizeof(a)) == -1) {
			SKIP("lane: hostile messages", "no loopback");
			return;
		}
	}
	before = fcntl(0, F_DUPFD, 0);
	close(before);
	CHECK(take_one(key, sizeof(key), &tcp, 1, &fd) == 0 && fd >= 0,
	    "lane: a key and a TCP socket are taken");
	if (fd >= 0)
		close(fd);
	CHECK(take_one(key, sizeof(key), &p[0], 1, &fd) == -1 && fd == -1,
	    "lane: a pipe is refused");
	CHECK(take_one(key, sizeof(key), &lis, 1, &fd) == -1,
	    "lane: a listening socket is refused");
	two[0] = tcp;
	two[1] = p[1];
	CHECK(take_one(key, sizeof(key), two, 2, &fd) == -1,
	    "lane: two descriptors are refused");
	CHECK(take_one(key, sizeof(key) - 1, &tcp, 1, &fd) == -1 &&
	    take_one("0123456789abcdefX", 17, &tcp, 1, &fd) == -1,
	    "lane: a key of another length is refused");
	CHECK(take_one(key, sizeof(key), NULL, 0, &fd) == -1,
	    "lane: a key without a socket is refused");
	{
		int sv[2];

		socketpair(AF_UNIX, SOCK_STREAM, 0, sv);
		CHECK(take_one(key, sizeof(key), &sv[0], 1, &fd) == -1,
		    "lane: a unix socket is refused");
		close(sv[0]);
		close(sv[1]);
	}
	/* Nothing refused stays open here. */
	fd = fcntl(0, F_DUPFD, 0);
	CHECK(fd == before, "lane: what is refused is closed");
	close(fd);
	close(p[0]);
	close(p[1]);
	close(tcp);
	close(lis);
}

int
main(void)
{
	test_take();
	test_reader();
	test_ring();
	test_supervisor();
	test_lane();
	return check_status();
}
