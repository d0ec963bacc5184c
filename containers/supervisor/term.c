/*
 * term.c: the supervisor's terminals. Each terminal is a small daemon of
 * its own (its own session, parent: the container's init), holding a PTY
 * whose other end runs `bash -c COMMAND` as the leader of a new session
 * and process group, and a libvterm screen fed with everything the
 * program writes. It serves requests on a Unix socket,
 * TERMS/ID/sock, one at a time, so a terminal outlives the exec that
 * started it, the server's workers and the channel, like a run.
 *
 *   supervisor term-start ID COLS ROWS IDLE_S QUIET_MS WAIT_MS COMMAND
 *	Start the daemon, then answer as term-send with no input.
 *   supervisor term-send ID QUIET_MS WAIT_MS SCROLLBACK HEXINPUT KEYS [attrs]
 *	Type the input (hex; "\n" is sent as Enter, "\r"), then the keys
 *	(KEYS: names joined by commas, or "-"), and write the screen ('W',
 *	frames.h) on stdout once the program has been quiet QUIET_MS, or at
 *	WAIT_MS. SCROLLBACK: how many lines that scrolled off to add. With
 *	"attrs", an 'A' frame (the colours) follows the screen.
 *   supervisor term-close ID
 *	Kill every process of the terminal's session, write its last
 *	screen, and end the daemon.
 * Exit 0 with a 'W' frame, 5 with an 'X' frame when there is no such
 * terminal, 125 with an 'X' frame on any other failure.
 *
 * The daemon ends IDLE_S seconds after the last input or output (the
 * session killed as by term-close).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <vterm.h>

#include "base/clock.h"
#include "supervisor/frames.h"
#include "supervisor/io.h"
#include "supervisor/term.h"
#include "supervisor/term_int.h"

#define TERMS		"/run/code-sandbox/terms"
#define REQ_HEAD	24
#define OUT_MAX		(1024 * 1024)	/* input not yet taken by the PTY */
#define READY_MS	5000
#define FIRST_MS	1000	/* no output yet: how long quiet must last */

/* A request on the socket: REQ_HEAD bytes, then input, then keys. */
struct req {
	int		op;		/* 'I' type and wait, 'C' close */
	bool		attrs;		/* add the colours ('A') */
	uint32_t	quiet_ms, wait_ms, scrollback;
	char		*in;
	uint32_t	 inlen;
	char		*keys;
	uint32_t	 keylen;
};

static void	term_die(int, const char *) __attribute__((noreturn));

static void
term_die(int code, const char *msg)
{
	unsigned char	hdr[SUPF_HEADER];
	size_t		n = strlen(msg);

	supf_header('X', (uint32_t)n, hdr);
	if (write(1, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr))
		(void)!write(1, msg, n);
	exit(code);
}

static int
sock_path(const char *id, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	return snprintf(sa->sun_path, sizeof(sa->sun_path), TERMS "/%s/sock",
	    id) >= (int)sizeof(sa->sun_path) ? -1 : 0;
}

/* Append bytes for the PTY; -1 when too many are waiting already. */
static int
out_add(struct term *t, const char *p, size_t len)
{
	char *n;

	if (t->out_len + len > OUT_MAX)
		return -1;
	if ((n = realloc(t->out, t->out_len + len + 1)) == NULL)
		return -1;
	t->out = n;
	memcpy(t->out + t->out_len, p, len);
	t->out_len += len;
	return 0;
}

/* libvterm's answers to the program (device attributes, cursor reports). */
static void
on_vterm_output(const char *s, size_t len, void *user)
{
	(void)out_add(user, s, len);
}

static void
reply_screen(struct term *t, int fd, uint32_t scrollback, bool attrs)
{
	struct buf	b = { NULL, 0, 0, false };
	unsigned char	hdr[SUPF_HEADER];

	term_screen_payload(t, scrollback, &b);
	if (b.bad || b.len > SUPF_SCREEN_MAX) {
		static const char m[] = "the screen is too large";

		supf_header('X', sizeof(m) - 1, hdr);
		(void)!sup_write_all(fd, hdr, sizeof(hdr));
		(void)!sup_write_all(fd, m, sizeof(m) - 1);
	} else {
		supf_header('W', (uint32_t)b.len, hdr);
		if (sup_write_all(fd, hdr, sizeof(hdr)) == 0)
			(void)!sup_write_all(fd, b.p, b.len);
		b.len = 0;
		if (attrs) {
			term_attrs_payload(t, &b);
			if (!b.bad && b.len <= SUPF_ATTRS_MAX) {
				supf_header('A', (uint32_t)b.len, hdr);
				if (sup_write_all(fd, hdr, sizeof(hdr)) == 0)
					(void)!sup_write_all(fd, b.p, b.len);
			}
		}
	}
	free(b.p);
}

/* The named keys (frames.h lists them). */
static const struct {
	const char	*name;
	int		 key;		/* VTermKey, or 0 for a control character */
	uint32_t	 ch;
	int		 mod;
} key_names[] = {
	{ "Enter", VTERM_KEY_ENTER, 0, 0 },
	{ "Tab", VTERM_KEY_TAB, 0, 0 },
	{ "Escape", VTERM_KEY_ESCAPE, 0, 0 },
	{ "Backspace", VTERM_KEY_BACKSPACE, 0, 0 },
	{ "Ctrl-C", 0, 'c', VTERM_MOD_CTRL },
	{ "Ctrl-D", 0, 'd', VTERM_MOD_CTRL },
	{ "Ctrl-Z", 0, 'z', VTERM_MOD_CTRL },
	{ "Up", VTERM_KEY_UP, 0, 0 },
	{ "Down", VTERM_KEY_DOWN, 0, 0 },
	{ "Left", VTERM_KEY_LEFT, 0, 0 },
	{ "Right", VTERM_KEY_RIGHT, 0, 0 },
	{ "PageUp", VTERM_KEY_PAGEUP, 0, 0 },
	{ "PageDown", VTERM_KEY_PAGEDOWN, 0, 0 },
	{ "Home", VTERM_KEY_HOME, 0, 0 },
	{ "End", VTERM_KEY_END, 0, 0 },
	{ "Delete", VTERM_KEY_DEL, 0, 0 },
};

/* Send one named key; -1 when the name is unknown. */
static int
send_key(struct term *t, const char *name, size_t len)
{
	size_t	i;
	int	f;

	for (i = 0; i < sizeof(key_names) / sizeof(key_names[0]); i++) {
		if (strlen(key_names[i].name) != len ||
		    memcmp(key_names[i].name, name, len) != 0)
			continue;
		if (key_names[i].key != 0)
			vterm_keyboard_key(t->vt, (VTermKey)key_names[i].key,
			    VTERM_MOD_NONE);
		else
			vterm_keyboard_unichar(t->vt, key_names[i].ch,
			    (VTermModifier)key_names[i].mod);
		return 0;
	}
	if ((len == 2 || len == 3) && name[0] == 'F' && name[1] >= '1' &&
	    name[1] <= '9') {
		f = name[1] - '0';
		if (len == 3) {
			if (name[2] < '0' || name[2] > '9')
				return -1;
			f = f * 10 + name[2] - '0';
		}
		if (f < 1 || f > 12)
			return -1;
		vterm_keyboard_key(t->vt, (VTermKey)VTERM_KEY_FUNCTION(f),
		    VTERM_MOD_NONE);
		return 0;
	}
	return -1;
}

/* The input as typed ("\n" is Enter), then the keys. -1 on a bad key. */
static int
apply_input(struct term *t, const struct req *q)
{
	const char	*k, *e;
	uint32_t	 i;

	for (i = 0; i < q->inlen; i++) {
		char c = q->in[i] == '\n' ? '\r' : q->in[i];

		if (out_add(t, &c, 1) == -1)
			return -1;
	}
	for (k = q->keys; k < q->keys + q->keylen; k = e + 1) {
		if ((e = memchr(k, ',', (size_t)(q->keys + q->keylen - k))) ==
		    NULL)
			e = q->keys + q->keylen;
		if (e > k && send_key(t, k, (size_t)(e - k)) == -1)
			return -1;
	}
	return 0;
}

/* Every process of the terminal's session: sig. */
static void
kill_session(pid_t sid, int sig)
{
	char		 path[64], buf[512], *p;
	struct dirent	*de;
	DIR		*d;
	long		 pid, s;
	int		 fd, i;
	ssize_t		 n;

	kill(-sid, sig);
	if ((d = opendir("/proc")) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if ((pid = strtol(de->d_name, &p, 10)) <= 1 || *p != '\0')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		/* After the command's name: state ppid pgrp session. */
		if ((p = strrchr(buf, ')')) == NULL)
			continue;
		p++;
		for (i = 0; i < 3 && p != NULL; i++)
			p = strchr(p + 1, ' ');
		if (p == NULL)
			continue;
		s = strtol(p + 1, NULL, 10);
		if (s == (long)sid && pid != (long)getpid())
			kill((pid_t)pid, sig);
	}
	closedir(d);
}

static void
term_end(struct term *t, const char *dir)
{
	char path[256];

	kill_session(t->pid, SIGHUP);
	usleep(50 * 1000);
	kill_session(t->pid, SIGKILL);
	snprintf(path, sizeof(path), "%s/sock", dir);
	unlink(path);
	rmdir(dir);
}

static int
read_req(int fd, struct req *q)
{
	unsigned char	h[REQ_HEAD];
	struct timeval	tv = { 2, 0 };

	memset(q, 0, sizeof(*q));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (sup_read_full(fd, h, sizeof(h)) == -1)
		return -1;
	q->op = h[0];
	q->attrs = (h[1] & 1) != 0;
	q->quiet_ms = supf_get32(h + 4);
	q->wait_ms = supf_get32(h + 8);
	q->scrollback = supf_get32(h + 12);
	q->inlen = supf_get32(h + 16);
	q->keylen = supf_get32(h + 20);
	if ((q->op != 'I' && q->op != 'C') || q->inlen > SUPF_TERM_INPUT_MAX ||
	    q->keylen > 4096 || q->wait_ms > SUPF_TERM_WAIT_MAX)
		return -1;
	if ((q->in = malloc(q->inlen + 1)) == NULL ||
	    (q->keys = malloc(q->keylen + 1)) == NULL ||
	    sup_read_full(fd, q->in, q->inlen) == -1 ||
	    sup_read_full(fd, q->keys, q->keylen) == -1) {
		free(q->in);
		free(q->keys);
		return -1;
	}
	return 0;
}

static void
on_request(struct term *t, int fd, const char *dir)
{
	struct req	q;
	long long	now = clock_ms();

	if (read_req(fd, &q) == -1) {
		close(fd);
		return;
	}
	if (q.op == 'C') {
		term_end(t, dir);
		/* The last output, then the screen. */
		reply_screen(t, fd, q.scrollback, false);
		close(fd);
		exit(0);
	}
	if (apply_input(t, &q) == -1) {
		static const char m[] = "an unknown key name, or too much input";
		unsigned char hdr[SUPF_HEADER];

		supf_header('X', sizeof(m) - 1, hdr);
		(void)!sup_write_all(fd, hdr, sizeof(hdr));
		(void)!sup_write_all(fd, m, sizeof(m) - 1);
		close(fd);
	} else {
		t->client = fd;
		t->client_sb = q.scrollback;
		t->client_attrs = q.attrs;
		t->quiet_ms = q.quiet_ms;
		t->deadline = now + q.wait_ms;
		t->last_output = t->asked = now;
		t->fresh = false;
		if (q.inlen > 0 || q.keylen > 0)
			t->last_activity = now;
	}
	free(q.in);
	free(q.keys);
}

/* The child: a new session on the PTY's other end, into bash. */
static void
term_child(int master, const char *command)
{
	char	*argv[4];
	int	 slave;

	setsid();
	if ((slave = open(ptsname(master), O_RDWR)) == -1)
		_exit(125);
	ioctl(slave, TIOCSCTTY, 0);
	close(master);
	if (dup2(slave, 0) == -1 || dup2(slave, 1) == -1 ||
	    dup2(slave, 2) == -1)
		_exit(125);
	if (slave > 2)
		close(slave);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	setenv("TERM", "xterm-256color", 1);
	unsetenv("COLUMNS");
	unsetenv("LINES");
	if (chdir("/sandbox") == -1 && chdir("/") == -1)
		_exit(125);
	argv[0] = "bash";
	argv[1] = "-c";
	argv[2] = (char *)command;
	argv[3] = NULL;
	execvp("bash", argv);
	_exit(127);
}

/*
 * How long the output must have been quiet: the request's window once
 * the program has answered, a little longer while it has said nothing
 * yet (a program starting up).
 */
static long long
quiet(const struct term *t)
{
	if (t->fresh || t->quiet_ms >= FIRST_MS)
		return t->quiet_ms;
	return FIRST_MS;
}

/* The daemon's loop; never returns. */
static void
term_serve(struct term *t, int lsock, const char *dir, long idle_s)
{
	struct pollfd	 pfd[3];
	char		 buf[16384];
	long long	 now, next;
	ssize_t		 n;
	int		 fd, wait;

	for (;;) {
		now = clock_ms();
		if (!t->exited && waitpid(t->pid, &t->status, WNOHANG) ==
		    t->pid)
			t->exited = true;
		/* A waiting request: answered once quiet, or at its wait. */
		if (t->client >= 0 && ((now - t->last_output >= quiet(t) &&
		    t->out_len == 0) || now >= t->deadline ||
		    (t->exited && t->eof))) {
			reply_screen(t, t->client, t->client_sb,
			    t->client_attrs);
			close(t->client);
			t->client = -1;
		}
		if (now - t->last_activity >= idle_s * 1000) {
			term_end(t, dir);
			exit(0);
		}
		next = now + 200;
		if (t->client >= 0) {
			if (t->last_output + quiet(t) < next)
				next = t->last_output + quiet(t);
			if (t->deadline < next)
				next = t->deadline;
		}
		wait = (int)(next - now);
		if (wait < 0)
			wait = 0;
		pfd[0].fd = t->eof ? -1 : t->master;
		pfd[0].events = POLLIN | (t->out_len > 0 ? POLLOUT : 0);
		pfd[1].fd = t->client >= 0 ? -1 : lsock;
		pfd[1].events = POLLIN;
		pfd[2].fd = -1;
		if (poll(pfd, 2, wait) < 0) {
			if (errno == EINTR)
				continue;
			term_end(t, dir);
			exit(1);
		}
		if (pfd[0].revents & POLLOUT && t->out_len > 0) {
			n = write(t->master, t->out, t->out_len);
			if (n > 0) {
				memmove(t->out, t->out + n, t->out_len -
				    (size_t)n);
				t->out_len -= (size_t)n;
			}
		}
		if (pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			n = read(t->master, buf, sizeof(buf));
			if (n > 0) {
				vterm_input_write(t->vt, buf, (size_t)n);
				t->last_output = t->last_activity = clock_ms();
				t->fresh = true;
			} else if (n == 0 || (errno != EINTR &&
			    errno != EAGAIN)) {
				/* EIO: no process holds the PTY's other end. */
				if (t->exited)
					t->eof = true;
				else
					usleep(20 * 1000);
			}
		}
		if (pfd[1].revents & POLLIN &&
		    (fd = accept4(lsock, NULL, NULL, SOCK_CLOEXEC)) >= 0)
			on_request(t, fd, dir);
	}
}

/*
 * The daemon: PTY, child, screen, socket; tells the starter on ready
 * (one byte) or why not (a message), then serves.
 */
static void
term_daemon(const char *id, const char *dir, int cols, int rows, long idle_s,
    const char *command, int ready)
{
	static struct term	 t;
	VTermScreenCallbacks	 cbs;
	struct sockaddr_un	 sa;
	struct winsize		 ws;
	int			 lsock, null;

	memset(&t, 0, sizeof(t));
	t.client = -1;
	t.rows = rows;
	t.cols = cols;
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	if ((t.master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) == -1 ||
	    grantpt(t.master) == -1 || unlockpt(t.master) == -1) {
		(void)!write(ready, "cannot open a PTY", 17);
		_exit(1);
	}
	memset(&ws, 0, sizeof(ws));
	ws.ws_row = (unsigned short)rows;
	ws.ws_col = (unsigned short)cols;
	ioctl(t.master, TIOCSWINSZ, &ws);
	if ((t.vt = vterm_new(rows, cols)) == NULL) {
		(void)!write(ready, "out of memory", 13);
		_exit(1);
	}
	vterm_set_utf8(t.vt, 1);
	vterm_output_set_callback(t.vt, on_vterm_output, &t);
	t.scr = vterm_obtain_screen(t.vt);
	memset(&cbs, 0, sizeof(cbs));
	cbs.sb_pushline = term_on_pushline;
	vterm_screen_set_callbacks(t.scr, &cbs, &t);
	vterm_screen_enable_altscreen(t.scr, 1);
	vterm_screen_reset(t.scr, 1);
	if (sock_path(id, &sa) == -1 ||
	    (lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(lsock, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(lsock, 16) == -1) {
		(void)!write(ready, "cannot listen on the terminal's socket", 38);
		_exit(1);
	}
	if ((t.pid = fork()) == -1) {
		(void)!write(ready, "cannot fork", 11);
		_exit(1);
	}
	if (t.pid == 0) {
		close(lsock);
		close(ready);
		term_child(t.master, command);
	}
	fcntl(t.master, F_SETFL, fcntl(t.master, F_GETFL) | O_NONBLOCK);
	t.last_activity = t.last_output = clock_ms();
	(void)!write(ready, "", 1);
	close(ready);
	(void)dir;
	term_serve(&t, lsock, dir, idle_s);
}

/* Connect to terminal id's daemon, send a request, copy its answer. */
static int
term_ask(const char *id, int op, bool attrs, uint32_t quiet, uint32_t wait,
    uint32_t scrollback, const char *in, size_t inlen, const char *keys)
{
	struct sockaddr_un	 sa;
	unsigned char		 h[REQ_HEAD], buf[16384];
	struct timeval		 tv;
	size_t			 klen = strlen(keys);
	ssize_t			 n;
	int			 fd;
	bool			 any = false;

	if (sock_path(id, &sa) == -1)
		term_die(125, "bad terminal id");
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		term_die(125, "cannot make a socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		term_die(5, "no such terminal (closed, or ended when idle)");
	tv.tv_sec = (time_t)(wait / 1000 + 10);
	tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(h, 0, sizeof(h));
	h[0] = (unsigned char)op;
	h[1] = attrs ? 1 : 0;
	supf_put32(h + 4, quiet);
	supf_put32(h + 8, wait);
	supf_put32(h + 12, scrollback);
	supf_put32(h + 16, (uint32_t)inlen);
	supf_put32(h + 20, (uint32_t)klen);
	if (sup_write_all(fd, h, sizeof(h)) == -1 ||
	    sup_write_all(fd, in, inlen) == -1 ||
	    sup_write_all(fd, keys, klen) == -1)
		term_die(125, "the terminal did not take the request");
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 &&
	    errno == EINTR)) {
		if (n < 0)
			continue;
		any = true;
		if (sup_write_all(1, buf, (size_t)n) == -1)
			return 1;
	}
	if (!any)
		term_die(125, "the terminal did not answer");
	return 0;
}

static long
num(const char *s, long min, long max)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		term_die(125, "bad number");
	return v;
}

static int
unhex(const char *s, char **out, size_t *len)
{
	size_t	n = strlen(s), i;
	int	hi, lo;

	if (strcmp(s, "-") == 0)
		n = 0;
	if (n % 2 != 0 || n / 2 > SUPF_TERM_INPUT_MAX ||
	    (*out = malloc(n / 2 + 1)) == NULL)
		return -1;
	for (i = 0; i < n; i += 2) {
		hi = s[i] >= 'a' ? s[i] - 'a' + 10 : s[i] - '0';
		lo = s[i + 1] >= 'a' ? s[i + 1] - 'a' + 10 : s[i + 1] - '0';
		if (hi < 0 || hi > 15 || lo < 0 || lo > 15)
			return -1;
		(*out)[i / 2] = (char)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}

int
term_main(int argc, char **argv)
{
	char		 dir[256], msg[128];
	const char	*id;
	char		*in = NULL;
	size_t		 inlen = 0;
	int		 p[2], cols, rows;
	long		 idle;
	pid_t		 pid;
	ssize_t		 n = 0;
	struct pollfd	 pfd;

	signal(SIGPIPE, SIG_IGN);
	id = argv[2];
	snprintf(dir, sizeof(dir), TERMS "/%s", id);
	if (strcmp(argv[1], "term-start") == 0 && argc == 9) {
		cols = (int)num(argv[3], 2, SUPF_TERM_COLS_MAX);
		rows = (int)num(argv[4], 2, SUPF_TERM_ROWS_MAX);
		idle = num(argv[5], 1, 30L * 86400);
		if (mkdir("/run/code-sandbox", 0700) == -1 && errno != EEXIST)
			term_die(125, "cannot create /run/code-sandbox");
		if (mkdir(TERMS, 0700) == -1 && errno != EEXIST)
			term_die(125, "cannot create " TERMS);
		if (mkdir(dir, 0700) == -1)
			term_die(125, errno == EEXIST ? "the terminal exists "
			    "already" : "cannot create the terminal's folder");
		if (pipe2(p, O_CLOEXEC) == -1)
			term_die(125, "cannot make a pipe");
		if ((pid = fork()) == -1)
			term_die(125, "cannot fork");
		if (pid == 0) {
			close(p[0]);
			setsid();
			if ((pid = fork()) != 0)
				_exit(pid == -1);
			term_daemon(id, dir, cols, rows, idle, argv[8], p[1]);
		}
		close(p[1]);
		waitpid(pid, NULL, 0);
		pfd.fd = p[0];
		pfd.events = POLLIN;
		if (poll(&pfd, 1, READY_MS) != 1 ||
		    (n = read(p[0], msg, sizeof(msg) - 1)) <= 0) {
			rmdir(dir);
			term_die(125, "the terminal did not start");
		}
		msg[n] = '\0';
		if (n > 1 || msg[0] != '\0')
			term_die(125, msg);
		close(p[0]);
		return term_ask(id, 'I', false, (uint32_t)num(argv[6], 0, 60000),
		    (uint32_t)num(argv[7], 0, SUPF_TERM_WAIT_MAX), 0, "", 0,
		    "");
	}
	if (strcmp(argv[1], "term-send") == 0 && (argc == 8 || (argc == 9 &&
	    strcmp(argv[8], "attrs") == 0))) {
		if (unhex(argv[6], &in, &inlen) == -1)
			term_die(125, "bad input");
		return term_ask(id, 'I', argc == 9,
		    (uint32_t)num(argv[3], 0, 60000),
		    (uint32_t)num(argv[4], 0, SUPF_TERM_WAIT_MAX),
		    (uint32_t)num(argv[5], 0, SB_LINES), in, inlen,
		    strcmp(argv[7], "-") == 0 ? "" : argv[7]);
	}
	if (strcmp(argv[1], "term-close") == 0 && argc == 3)
		return term_ask(id, 'C', false, 0, 0, 0, "", 0, "");
	term_die(125, "usage: supervisor term-start ID COLS ROWS IDLE QUIET "
	    "WAIT COMMAND | term-send ID QUIET WAIT SCROLLBACK HEX KEYS | "
	    "term-close ID");
	return 125;
}
