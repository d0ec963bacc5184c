/*
 * term.c: the supervisor's terminals' daemon. Each terminal is a small
 * daemon of its own (its own session, parent: the container's init),
 * holding a PTY whose other end runs `bash -c COMMAND` as the leader of a
 * new session and process group, and a libvterm screen fed with
 * everything the program writes. It serves requests (term_cmd.c sends
 * them) on a Unix socket, TERMS/ID/sock, so a terminal outlives the exec
 * that started it, the server's workers and the channel, like a run.
 *
 * The daemon ends IDLE_S seconds after the last input or output (the
 * session killed as by term-close). Up to CLIENTS_MAX requests wait at
 * once, so a long wait (the model's, or the link's watch) never holds up
 * keystrokes.
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
#include "supervisor/term_int.h"

#define OUT_MAX		(1024 * 1024)	/* input not yet taken by the PTY */
#define FIRST_MS	1000	/* no output yet: how long quiet must last */
/*
 * A changed screen is written once the output paused COAL_QUIET_MS, or
 * COAL_MAX_MS after the change at the latest: one answer for a burst,
 * and a flood still streams.
 */
#define COAL_QUIET_MS	2
#define COAL_MAX_MS	10

/* A request on the socket (term_int.h). */
struct req {
	int		op;		/* 'I' type and wait, 'G' watch, 'C' close */
	int		flags;		/* REQ_* */
	uint32_t	quiet_ms, wait_ms, scrollback;
	char		*in;
	uint32_t	 inlen;
	char		*keys;
	uint32_t	 keylen;
};

int
term_sock_path(const char *id, struct sockaddr_un *sa)
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
			b.len = 0;
			term_cells_payload(t, &b);
			if (!b.bad && b.len <= SUPF_CELLS_MAX) {
				supf_header('C', (uint32_t)b.len, hdr);
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
	q->flags = h[1];
	q->quiet_ms = supf_get32(h + 4);
	q->wait_ms = supf_get32(h + 8);
	q->scrollback = supf_get32(h + 12);
	q->inlen = supf_get32(h + 16);
	q->keylen = supf_get32(h + 20);
	if ((q->op != 'I' && q->op != 'C' && q->op != 'G') ||
	    q->inlen > SUPF_TERM_INPUT_MAX ||
	    q->keylen > REQ_KEYS_MAX || q->wait_ms > SUPF_TERM_WAIT_MAX)
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

/* Answer every waiting request with the screen now (the terminal ends). */
static void
answer_all(struct term *t)
{
	int i;

	for (i = 0; i < CLIENTS_MAX; i++) {
		if (t->cl[i].fd < 0)
			continue;
		reply_screen(t, t->cl[i].fd, t->cl[i].sb, t->cl[i].attrs);
		close(t->cl[i].fd);
		t->cl[i].fd = -1;
	}
}

static void
on_request(struct term *t, int fd, const char *dir)
{
	struct client	*c = NULL;
	struct req	 q;
	long long	 now = clock_ms();
	int		 i;

	if (read_req(fd, &q) == -1) {
		close(fd);
		return;
	}
	if (q.op == 'C') {
		term_end(t, dir);
		/* The last output, then the screen, to every waiting request. */
		answer_all(t);
		reply_screen(t, fd, q.scrollback, false);
		close(fd);
		exit(0);
	}
	for (i = 0; i < CLIENTS_MAX && c == NULL; i++)
		if (t->cl[i].fd < 0)
			c = &t->cl[i];
	if (c == NULL || apply_input(t, &q) == -1) {
		static const char m[] = "an unknown key name, or too much input";
		unsigned char hdr[SUPF_HEADER];

		supf_header('X', sizeof(m) - 1, hdr);
		(void)!sup_write_all(fd, hdr, sizeof(hdr));
		(void)!sup_write_all(fd, m, sizeof(m) - 1);
		close(fd);
	} else {
		memset(c, 0, sizeof(*c));
		c->fd = fd;
		c->sb = q.scrollback;
		c->attrs = (q.flags & REQ_ATTRS) != 0;
		c->deadline = now + q.wait_ms;
		c->since = now;
		c->typed = q.inlen > 0 || q.keylen > 0;
		if (q.op == 'G') {
			c->mode = CL_CHANGE;
			c->watch = true;
			c->gen = q.quiet_ms;
		} else if (q.flags & REQ_CHANGED) {
			c->mode = CL_CHANGE;
			c->gen = t->gen;
		} else {
			c->mode = CL_QUIET;
			c->quiet_ms = q.quiet_ms;
		}
		if (c->typed)
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
quiet(const struct client *c)
{
	if (c->fresh || c->quiet_ms >= FIRST_MS)
		return c->quiet_ms;
	return FIRST_MS;
}

/*
 * When request c is due (its answer written at or after that time, in ms
 * on the monotonic clock); now or earlier: answer it.
 */
static long long
due(const struct term *t, struct client *c, long long now)
{
	long long last, at;

	if (!c->watch && t->exited && t->eof)
		return now;
	if (c->typed && t->out_len > 0)
		return c->deadline;	/* not all typed yet */
	if (c->mode == CL_QUIET) {
		last = t->last_output > c->since ? t->last_output : c->since;
		at = last + quiet(c);
	} else if (t->gen == c->gen)
		return c->deadline;
	else {
		if (c->changed == 0)
			c->changed = now;
		at = t->last_output + COAL_QUIET_MS;
		if (c->changed + COAL_MAX_MS < at)
			at = c->changed + COAL_MAX_MS;
	}
	return at < c->deadline ? at : c->deadline;
}

static void	term_serve(struct term *, int, const char *, long)
		    __attribute__((noreturn));

/* The daemon's loop; never returns. */
static void
term_serve(struct term *t, int lsock, const char *dir, long idle_s)
{
	struct pollfd	 pfd[2];
	struct client	*c;
	char		 buf[16384];
	long long	 now, next, at;
	ssize_t		 n;
	int		 fd, wait, i, free_slots;

	for (;;) {
		now = clock_ms();
		if (!t->exited && waitpid(t->pid, &t->status, WNOHANG) ==
		    t->pid) {
			t->exited = true;
			t->gen++;
		}
		if (now - t->last_activity >= idle_s * 1000) {
			term_end(t, dir);
			answer_all(t);
			exit(0);
		}
		/* Waiting requests: answered when due; the next wake-up. */
		next = now + 200;
		free_slots = 0;
		for (i = 0; i < CLIENTS_MAX; i++) {
			c = &t->cl[i];
			if (c->fd < 0) {
				free_slots++;
				continue;
			}
			if ((at = due(t, c, now)) <= now) {
				reply_screen(t, c->fd, c->sb, c->attrs);
				close(c->fd);
				c->fd = -1;
				free_slots++;
			} else if (at < next)
				next = at;
		}
		wait = (int)(next - now);
		if (wait < 0)
			wait = 0;
		pfd[0].fd = t->eof ? -1 : t->master;
		pfd[0].events = POLLIN | (t->out_len > 0 ? POLLOUT : 0);
		pfd[1].fd = free_slots > 0 ? lsock : -1;
		pfd[1].events = POLLIN;
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
				for (i = 0; i < CLIENTS_MAX; i++)
					t->cl[i].fresh = true;
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

/* libvterm's screen callbacks: any change of what the frame carries. */
static int
on_damage(VTermRect r, void *user)
{
	(void)r;
	((struct term *)user)->gen++;
	return 1;
}

static int
on_moverect(VTermRect dst, VTermRect src, void *user)
{
	(void)dst;
	(void)src;
	((struct term *)user)->gen++;
	return 1;
}

static int
on_movecursor(VTermPos pos, VTermPos old, int visible, void *user)
{
	(void)pos;
	(void)old;
	(void)visible;
	((struct term *)user)->gen++;
	return 1;
}

void
term_daemon(const char *id, const char *dir, int cols, int rows, long idle_s,
    const char *command, int ready)
{
	static struct term	 t;
	VTermScreenCallbacks	 cbs;
	struct sockaddr_un	 sa;
	struct winsize		 ws;
	int			 lsock, i;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < CLIENTS_MAX; i++)
		t.cl[i].fd = -1;
	t.rows = rows;
	t.cols = cols;
	sup_null_stdio();
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
	cbs.damage = on_damage;
	cbs.moverect = on_moverect;
	cbs.movecursor = on_movecursor;
	vterm_screen_set_callbacks(t.scr, &cbs, &t);
	vterm_screen_enable_altscreen(t.scr, 1);
	vterm_screen_reset(t.scr, 1);
	if (term_sock_path(id, &sa) == -1 ||
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
	term_serve(&t, lsock, dir, idle_s);
}
