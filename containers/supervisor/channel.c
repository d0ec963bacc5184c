/*
 * channel.c: "supervisor channel", many runs and terminal requests over
 * one exec (frames.h, "The channel"); see channel.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "supervisor/channel.h"
#include "supervisor/frames.h"
#include "supervisor/io.h"
#include "supervisor/run.h"
#include "supervisor/term.h"

/* The channel: its runs in flight. */
#define CHAN_RUNS	512

/*
 * A run or request in flight: a child whose stdout is fd (pid > 0), or a
 * terminal request the channel sent itself, fd its daemon's socket
 * (pid 0), ended at its deadline if the daemon keeps silent.
 */
struct slot {
	pid_t		 pid;
	int		 fd;		/* its live stream, -1 when free */
	bool		 any;		/* a request's answer has begun */
	long long	 deadline;	/* a request's, in clock_ms */
	char		 id[SUPF_ID_MAX + 1];
};

static struct slot	slots[CHAN_RUNS];

/* A tagged frame on stdout; -1 when the server is gone. */
static int
tagged(int type, const char *id, const void *body, size_t len)
{
	unsigned char hdr[SUPF_HEADER + 1 + SUPF_ID_MAX];
	size_t n;

	if ((n = supf_tag_header(type, id, len, hdr)) == 0)
		return 0;
	if (sup_write_all(1, hdr, n) == -1)
		return -1;
	return len == 0 ? 0 : sup_write_all(1, body, len);
}

static int
reply(int type, const char *id, int code)
{
	unsigned char c = (unsigned char)code;

	return tagged(type, id, &c, 1);
}

/* Request id failed: an 'X' frame saying why, then its end with code. */
static int
failed(const char *id, int code, const char *why)
{
	unsigned char	f[SUPF_HEADER + SUPF_MESSAGE_MAX];
	size_t		n = strlen(why);

	if (n > SUPF_MESSAGE_MAX)
		n = SUPF_MESSAGE_MAX;
	supf_header('X', (uint32_t)n, f);
	memcpy(f + SUPF_HEADER, why, n);
	if (tagged('M', id, f, SUPF_HEADER + n) == -1)
		return -1;
	return reply('E', id, code);
}

/* A free slot's index, or -1. */
static int
free_slot(void)
{
	int i;

	for (i = 0; i < CHAN_RUNS; i++)
		if (slots[i].fd < 0)
			return i;
	return -1;
}

/*
 * A child for request id whose stdout comes back, through a pipe, as the
 * request's 'M' frames: 0 in the child (stdin and stderr /dev/null, none
 * of the channel's streams), the pid in the channel (the slot taken), -1
 * when there is no free slot or the fork failed (nothing taken).
 */
static pid_t
chan_fork(const char *id)
{
	pid_t	pid;
	int	pfd[2], i, null;

	if ((i = free_slot()) == -1 || pipe2(pfd, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (pid == 0) {
		/* Nothing of the channel's exec streams stays with the run. */
		/*
		 * Nor the other runs' streams: a reader left open here would
		 * keep a run writing into a pipe nobody drains, not EPIPE.
		 */
		for (i = 0; i < CHAN_RUNS; i++)
			if (slots[i].fd >= 0)
				close(slots[i].fd);
		if ((null = open("/dev/null", O_RDWR)) == -1 ||
		    dup2(null, 0) == -1 || dup2(pfd[1], 1) == -1 ||
		    dup2(null, 2) == -1)
			_exit(125);
		/* Only fd 1 holds the stream: a drain child must not keep it. */
		close(pfd[0]);
		close(pfd[1]);
		if (null > 2)
			close(null);
		return 0;
	}
	close(pfd[1]);
	slots[i].pid = pid;
	slots[i].fd = pfd[0];
	slots[i].any = false;
	slots[i].deadline = 0;
	memcpy(slots[i].id, id, strlen(id) + 1);
	return pid;
}

/* Start a run as a child; its live stream comes back on a pipe. */
static int
chan_start(const char *id, const unsigned char *p, size_t len)
{
	char		*cmd, *chunks[2];
	long		 timeout, max;
	pid_t		 pid;

	timeout = (long)supf_get32(p);
	max = (long)supf_get32(p + 4);
	p += 8;
	len -= 8;
	if (len < 1 || timeout < 1 || timeout > RUN_TIMEOUT_MAX ||
	    max > RUN_OUTPUT_MAX || memchr(p, '\0', len) != NULL ||
	    (pid = chan_fork(id)) == -1)
		return reply('E', id, 125);
	if (pid == 0) {
		if ((cmd = malloc(len + 1)) == NULL)
			sup_die(125, "out of memory");
		memcpy(cmd, p, len);
		cmd[len] = '\0';
		chunks[0] = cmd;
		chunks[1] = "";
		/* Too long for one argument: run's file, as with chunks. */
		exit(run_main(id, timeout, max, len > 96 * 1024 ? 2 : 1, chunks));
	}
	return 0;
}

/*
 * A terminal request ('p'): its argv (frames.h) as "supervisor term-*".
 * A request to a terminal's daemon (term-send, term-watch, term-close)
 * the channel sends on the daemon's socket itself, and relays the answer
 * as the request's 'M' frames: no process per keystroke. term-start and
 * term-list run in a child whose stdout comes back the same way.
 */
#define TERM_ARGS	10

static int
chan_term(const char *id, const unsigned char *p, size_t len)
{
	char		*buf, *argv[TERM_ARGS + 2];
	const char	*why;
	unsigned char	*req;
	size_t		 o, n;
	pid_t		 pid;
	int		 argc, i, fd, rc;

	if (len < 1 || p[len - 1] != '\0' || (buf = malloc(len)) == NULL)
		return reply('E', id, 125);
	memcpy(buf, p, len);
	argv[0] = "supervisor";
	for (argc = 1, o = 0; o < len && argc <= TERM_ARGS; argc++) {
		argv[argc] = buf + o;
		o += strlen(buf + o) + 1;
	}
	argv[argc] = NULL;
	if (o != len || argc < 2 || strncmp(argv[1], "term-", 5) != 0 ||
	    (argc > 2 && !run_valid_id(argv[2]))) {
		free(buf);
		return failed(id, 125, "bad terminal request");
	}
	if ((rc = term_request(argc, argv, &req, &n, &why)) == 1) {
		if ((pid = chan_fork(id)) == -1) {
			free(buf);
			return reply('E', id, 125);
		}
		if (pid == 0)
			exit(term_main(argc, argv));
		free(buf);
		return 0;
	}
	if (rc == -1 || (i = free_slot()) == -1) {
		free(buf);
		return failed(id, 125, rc == -1 ? why : "too many requests");
	}
	fd = term_connect(argv[2]);
	free(buf);
	if (fd == -1) {
		free(req);
		return failed(id, 5, TERM_NONE);
	}
	/* A new connection's buffer holds a whole request (at most 21 KiB). */
	if (send(fd, req, n, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)n) {
		free(req);
		close(fd);
		return failed(id, 125, "the terminal did not take the request");
	}
	slots[i].pid = 0;
	slots[i].fd = fd;
	slots[i].any = false;
	slots[i].deadline = clock_ms() + supf_get32(req + 8) +
	    TERM_SLACK_S * 1000;
	memcpy(slots[i].id, id, strlen(id) + 1);
	free(req);
	return 0;
}

/* The end of slot s: its stream closed (or its request timed out). */
static int
slot_end(struct slot *s, bool late)
{
	int status = 125;

	close(s->fd);
	s->fd = -1;
	if (s->pid == 0)
		return s->any && !late ? reply('E', s->id, 0) :
		    failed(s->id, 125, TERM_SILENT);
	if (waitpid(s->pid, &status, 0) == s->pid)
		status = WIFEXITED(status) ? WEXITSTATUS(status) :
		    128 + WTERMSIG(status);
	return reply('E', s->id, status);
}

static int
chan_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	char			 id[SUPF_ID_MAX + 1];
	const unsigned char	*rest;
	size_t			 n;
	int			 fd, rc;

	(void)arg;
	if (supf_tag_split(p, len, id, &rest, &n) == -1)
		return -1;
	switch (type) {
	case 'r':
		return n < 8 ? -1 : chan_start(id, rest, n);
	case 'p':
		return chan_term(id, rest, n);
	case 'k':
		return n != 0 ? -1 : reply('K', id, run_kill(id));
	case 'q':
		if (n != 0)
			return -1;
		if ((rc = run_state(id, &fd)) == 0)
			close(fd);
		return reply('Q', id, rc);
	default:
		return -1;
	}
}

int
channel_main(void)
{
	static struct pollfd	 pfd[1 + CHAN_RUNS];
	static int		 which[1 + CHAN_RUNS];
	unsigned char		 hdr[SUPF_HEADER + 4];
	char			 buf[SUP_READ_CHUNK];
	struct supf		 in;
	long long		 now, next;
	int			 i, n, wait;
	ssize_t			 got;

	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < CHAN_RUNS; i++)
		slots[i].fd = -1;
	supf_init(&in, SUPF_CHAN_IN_MAX);
	supf_header('V', 4, hdr);
	supf_put32(hdr + SUPF_HEADER, SUPF_CHAN_VERSION);
	if (sup_write_all(1, hdr, sizeof(hdr)) == -1)
		return 1;
	for (;;) {
		pfd[0].fd = 0;
		pfd[0].events = POLLIN;
		n = 1;
		now = clock_ms();
		next = -1;
		for (i = 0; i < CHAN_RUNS; i++) {
			if (slots[i].fd < 0)
				continue;
			if (slots[i].pid == 0 && slots[i].deadline <= now) {
				if (slot_end(&slots[i], true) == -1)
					return 0;
				continue;
			}
			if (slots[i].pid == 0 && (next == -1 ||
			    slots[i].deadline < next))
				next = slots[i].deadline;
			pfd[n].fd = slots[i].fd;
			pfd[n].events = POLLIN;
			which[n++] = i;
		}
		wait = next == -1 ? -1 : (int)(next - now);
		if (poll(pfd, (nfds_t)n, wait) < 0) {
			if (errno == EINTR)
				continue;
			return 1;
		}
		for (i = 1; i < n; i++) {
			struct slot *s = &slots[which[i]];

			if (pfd[i].revents == 0)
				continue;
			got = read(s->fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got > 0) {
				s->any = true;
				if (tagged('M', s->id, buf, (size_t)got) == -1)
					return 0;
				continue;
			}
			/* The run's process, or the daemon, closed its stream. */
			if (slot_end(s, false) == -1)
				return 0;
		}
		if (pfd[0].revents != 0) {
			got = read(0, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0)
				return 0;	/* the server left: the runs go on */
			if (supf_feed(&in, buf, (size_t)got, chan_frame,
			    NULL) == -1)
				sup_die(1, "malformed frame on the channel");
		}
	}
}
