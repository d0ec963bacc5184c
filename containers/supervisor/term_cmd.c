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

/* A request's bytes for the socket (term_int.h), in a new buffer. */
static unsigned char *
req_make(int op, int flags, uint32_t quiet, uint32_t wait,
    uint32_t scrollback, const char *in, size_t inlen, const char *keys,
    size_t *len)
{
	unsigned char	*h;
	size_t		 klen = strlen(keys);

	if ((h = malloc(REQ_HEAD + inlen + klen)) == NULL)
		return NULL;
	memset(h, 0, REQ_HEAD);
	h[0] = (unsigned char)op;
	h[1] = (unsigned char)flags;
	supf_put32(h + 4, quiet);
	supf_put32(h + 8, wait);
	supf_put32(h + 12, scrollback);
	supf_put32(h + 16, (uint32_t)inlen);
	supf_put32(h + 20, (uint32_t)klen);
	memcpy(h + REQ_HEAD, in, inlen);
	memcpy(h + REQ_HEAD + inlen, keys, klen);
	*len = REQ_HEAD + inlen + klen;
	return h;
}

int
term_connect(const char *id)
{
	struct sockaddr_un	sa;
	int			fd;

	if (term_sock_path(id, &sa) == -1 ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Send request req (len bytes) to terminal id's daemon, copy its answer. */
static int
term_ask(const char *id, unsigned char *req, size_t len, uint32_t wait)
{
	unsigned char	buf[16384];
	struct timeval	tv;
	ssize_t		n;
	int		fd;
	bool		any = false;

	if (req == NULL)
		sup_die(125, "out of memory");
	if ((fd = term_connect(id)) == -1)
		sup_die(5, TERM_NONE);
	tv.tv_sec = (time_t)(wait / 1000 + TERM_SLACK_S);
	tv.tv_usec = 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (sup_write_all(fd, req, len) == -1)
		sup_die(125, "the terminal did not take the request");
	free(req);
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 &&
	    errno == EINTR)) {
		if (n < 0)
			continue;
		any = true;
		if (sup_write_all(1, buf, (size_t)n) == -1)
			return 1;
	}
	if (!any)
		sup_die(125, TERM_SILENT);
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
		if (hi < 0 || hi > 15 || lo < 0 || lo > 15) {
			free(*out);
			*out = NULL;
			return -1;
		}
		(*out)[i / 2] = (char)(hi << 4 | lo);
	}
	*len = n / 2;
	return 0;
}

/*
 * A request's FLAGS argument: "attrs" and "changed", joined by commas;
 * -1 for anything else.
 */
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
			return -1;
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
term_request(int argc, char **argv, unsigned char **req, size_t *len,
    const char **why)
{
	const char	*keys = "";
	char		*in = NULL;
	size_t		 inlen = 0;
	long		 q = 0, w = 0, sb = 0;
	int		 op, flags = 0;

	*req = NULL;
	*why = "bad terminal request";
	if (strcmp(argv[1], "term-send") == 0 && (argc == 8 || argc == 9)) {
		op = 'I';
		if ((q = sup_number(argv[3], 0, 60000)) < 0 ||
		    (w = sup_number(argv[4], 0, SUPF_TERM_WAIT_MAX)) < 0 ||
		    (sb = sup_number(argv[5], 0, SB_LINES)) < 0 ||
		    (argc == 9 && (flags = req_flags(argv[8])) < 0))
			return -1;
		if (strcmp(argv[7], "-") != 0)
			keys = argv[7];
		if (strlen(keys) > REQ_KEYS_MAX)
			return -1;
		if (unhex(argv[6], &in, &inlen) == -1) {
			*why = "bad input";
			return -1;
		}
	} else if (strcmp(argv[1], "term-watch") == 0 &&
	    (argc == 6 || argc == 7)) {
		op = 'G';
		if ((q = sup_number(argv[3], 0, UINT32_MAX)) < 0 ||
		    (w = sup_number(argv[4], 0, SUPF_TERM_WAIT_MAX)) < 0 ||
		    (sb = sup_number(argv[5], 0, SB_LINES)) < 0 ||
		    (argc == 7 && (flags = req_flags(argv[6])) < 0))
			return -1;
	} else if (strcmp(argv[1], "term-close") == 0 && argc == 3)
		op = 'C';
	else
		return 1;
	*req = req_make(op, flags, (uint32_t)q, (uint32_t)w, (uint32_t)sb,
	    in != NULL ? in : "", inlen, keys, len);
	free(in);
	if (*req == NULL) {
		*why = "out of memory";
		return -1;
	}
	return 0;
}

int
term_main(int argc, char **argv)
{
	char		 dir[256], msg[128];
	const char	*id;
	const char	*why;
	unsigned char	*req;
	size_t		 len;
	uint32_t	 wait;
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
		wait = (uint32_t)num(argv[7], 0, SUPF_TERM_WAIT_MAX);
		req = req_make('I', 0, (uint32_t)num(argv[6], 0, 60000), wait,
		    0, "", 0, "", &len);
		return term_ask(id, req, len, wait);
	}
	switch (term_request(argc, argv, &req, &len, &why)) {
	case 0:
		return term_ask(id, req, len, supf_get32(req + 8));
	case -1:
		sup_die(125, why);
	}
	sup_die(125, "usage: supervisor term-start ID COLS ROWS IDLE QUIET "
	    "WAIT COMMAND | term-send ID QUIET WAIT SCROLLBACK HEX KEYS "
	    "[FLAGS] | term-watch ID GEN WAIT SCROLLBACK [FLAGS] | "
	    "term-close ID");
	return 125;
}
