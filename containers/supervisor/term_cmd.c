/*
 * term_cmd.c: the supervisor's terminal commands, each a request to a
 * terminal's daemon (term.c) on its socket, its answer copied to stdout:
 *
 *   supervisor term-start ID COLS ROWS IDLE_S QUIET_MS WAIT_MS COMMAND
 *	Start the daemon, then answer as term-send with no input.
 *   supervisor term-send ID QUIET_MS WAIT_MS SCROLLBACK HEXINPUT KEYS [FLAGS]
 *	Type the input (hex; "\n" is sent as Enter, "\r"), then the keys
 *	(KEYS: names joined by commas, or "-"), and write the screen ('W',
 *	frames.h) on stdout once the program has been quiet QUIET_MS, or at
 *	WAIT_MS. SCROLLBACK: how many lines that scrolled off to add. FLAGS,
 *	joined by commas: "attrs", an 'A' frame (the colours) follows the
 *	screen; "changed", the screen is written as soon as it changed
 *	after the input was typed (COAL_QUIET_MS, term.c), not after quiet.
 *   supervisor term-watch ID GEN WAIT_MS SCROLLBACK [FLAGS]
 *	Write the screen as soon as it is no longer generation GEN (the
 *	'W' frame's), or at WAIT_MS: a screen pushed on change, for the
 *	terminal link's event stream.
 *   supervisor term-list
 *	An 'L' frame: the ids of the terminals whose daemon answers.
 *   supervisor term-close ID
 *	Kill every process of the terminal's session, write its last
 *	screen, and end the daemon.
 * Exit 0 with a 'W' frame (term-list: 'L'), 5 with an 'X' frame when
 * there is no such terminal, 125 with an 'X' frame on any other failure.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/frames.h"
#include "supervisor/io.h"
#include "supervisor/term.h"
#include "supervisor/term_int.h"

#define READY_MS	5000

/* Connect to terminal id's daemon, send a request, copy its answer. */
static int
term_ask(const char *id, int op, int flags, uint32_t quiet, uint32_t wait,
    uint32_t scrollback, const char *in, size_t inlen, const char *keys)
{
	struct sockaddr_un	 sa;
	unsigned char		 h[REQ_HEAD], buf[16384];
	struct timeval		 tv;
	size_t			 klen = strlen(keys);
	ssize_t			 n;
	int			 fd;
	bool			 any = false;

	if (term_sock_path(id, &sa) == -1)
		sup_die(125, "bad terminal id");
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		sup_die(125, "cannot make a socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		sup_die(5, "no such terminal (closed, or ended when idle)");
	tv.tv_sec = (time_t)(wait / 1000 + 10);
	tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	memset(h, 0, sizeof(h));
	h[0] = (unsigned char)op;
	h[1] = (unsigned char)flags;
	supf_put32(h + 4, quiet);
	supf_put32(h + 8, wait);
	supf_put32(h + 12, scrollback);
	supf_put32(h + 16, (uint32_t)inlen);
	supf_put32(h + 20, (uint32_t)klen);
	if (sup_write_all(fd, h, sizeof(h)) == -1 ||
	    sup_write_all(fd, in, inlen) == -1 ||
	    sup_write_all(fd, keys, klen) == -1)
		sup_die(125, "the terminal did not take the request");
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 &&
	    errno == EINTR)) {
		if (n < 0)
			continue;
		any = true;
		if (sup_write_all(1, buf, (size_t)n) == -1)
			return 1;
	}
	if (!any)
		sup_die(125, "the terminal did not answer");
	return 0;
}

static long
num(const char *s, long min, long max)
{
	long v;

	if ((v = sup_number(s, min, max)) < 0)
		sup_die(125, "bad number");
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

/* A request's FLAGS argument: "attrs" and "changed", joined by commas. */
static int
req_flags(const char *s)
{
	const char	*e;
	size_t		 n;
	int		 f = 0;

	for (; *s != '\0'; s = *e == ',' ? e + 1 : e) {
		e = s + strcspn(s, ",");
		n = (size_t)(e - s);
		if (n == 5 && strncmp(s, "attrs", n) == 0)
			f |= REQ_ATTRS;
		else if (n == 7 && strncmp(s, "changed", n) == 0)
			f |= REQ_CHANGED;
		else
			sup_die(125, "bad flags");
	}
	return f;
}

/*
 * term-list: the terminals whose daemon takes a connection, as one 'L'
 * frame: their ids, each ended by '\n'. A daemon killed outright leaves
 * its folder and socket behind; only a connection tells it is there.
 */
static int
term_list(void)
{
	static char		 out[SUPF_LIVE_MAX];
	unsigned char		 hdr[SUPF_HEADER];
	struct sockaddr_un	 sa;
	struct dirent		*de;
	DIR			*d;
	size_t			 n = 0, len;
	int			 fd, up;

	if ((d = opendir(TERMS)) != NULL) {
		while ((de = readdir(d)) != NULL) {
			len = strlen(de->d_name);
			if (len == 0 || len > SUPF_ID_MAX || strspn(de->d_name,
			    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789_-") != len || de->d_name[0] == '-' ||
			    term_sock_path(de->d_name, &sa) == -1)
				continue;
			if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
			    0)) == -1)
				continue;
			up = connect(fd, (struct sockaddr *)&sa,
			    sizeof(sa)) == 0;
			close(fd);
			if (!up || n + len + 1 > sizeof(out))
				continue;
			memcpy(out + n, de->d_name, len);
			out[n + len] = '\n';
			n += len + 1;
		}
		closedir(d);
	}
	supf_header('L', (uint32_t)n, hdr);
	if (sup_write_all(1, hdr, sizeof(hdr)) == -1 ||
	    sup_write_all(1, out, n) == -1)
		return 1;
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
	if (strcmp(argv[1], "term-list") == 0 && argc == 2)
		return term_list();
	if (argc < 3)
		sup_die(125, "a terminal id is needed");
	id = argv[2];
	snprintf(dir, sizeof(dir), TERMS "/%s", id);
	if (strcmp(argv[1], "term-start") == 0 && argc == 9) {
		cols = (int)num(argv[3], 2, SUPF_TERM_COLS_MAX);
		rows = (int)num(argv[4], 2, SUPF_TERM_ROWS_MAX);
		idle = num(argv[5], 1, 30L * 86400);
		if (mkdir("/run/code-sandbox", 0700) == -1 && errno != EEXIST)
			sup_die(125, "cannot create /run/code-sandbox");
		if (mkdir(TERMS, 0700) == -1 && errno != EEXIST)
			sup_die(125, "cannot create " TERMS);
		if (mkdir(dir, 0700) == -1)
			sup_die(125, errno == EEXIST ? "the terminal exists "
			    "already" : "cannot create the terminal's folder");
		if (pipe2(p, O_CLOEXEC) == -1)
			sup_die(125, "cannot make a pipe");
		if ((pid = fork()) == -1)
			sup_die(125, "cannot fork");
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
			sup_die(125, "the terminal did not start");
		}
		msg[n] = '\0';
		if (n > 1 || msg[0] != '\0')
			sup_die(125, msg);
		close(p[0]);
		return term_ask(id, 'I', 0, (uint32_t)num(argv[6], 0, 60000),
		    (uint32_t)num(argv[7], 0, SUPF_TERM_WAIT_MAX), 0, "", 0,
		    "");
	}
	if (strcmp(argv[1], "term-send") == 0 && (argc == 8 || argc == 9)) {
		if (unhex(argv[6], &in, &inlen) == -1)
			sup_die(125, "bad input");
		return term_ask(id, 'I', argc == 9 ? req_flags(argv[8]) : 0,
		    (uint32_t)num(argv[3], 0, 60000),
		    (uint32_t)num(argv[4], 0, SUPF_TERM_WAIT_MAX),
		    (uint32_t)num(argv[5], 0, SB_LINES), in, inlen,
		    strcmp(argv[7], "-") == 0 ? "" : argv[7]);
	}
	if (strcmp(argv[1], "term-watch") == 0 && (argc == 6 || argc == 7))
		return term_ask(id, 'G', argc == 7 ? req_flags(argv[6]) : 0,
		    (uint32_t)num(argv[3], 0, UINT32_MAX),
		    (uint32_t)num(argv[4], 0, SUPF_TERM_WAIT_MAX),
		    (uint32_t)num(argv[5], 0, SB_LINES), "", 0, "");
	if (strcmp(argv[1], "term-close") == 0 && argc == 3)
		return term_ask(id, 'C', 0, 0, 0, 0, "", 0, "");
	sup_die(125, "usage: supervisor term-start ID COLS ROWS IDLE QUIET "
	    "WAIT COMMAND | term-send ID QUIET WAIT SCROLLBACK HEX KEYS "
	    "[FLAGS] | term-watch ID GEN WAIT SCROLLBACK [FLAGS] | "
	    "term-close ID");
	return 125;
}
