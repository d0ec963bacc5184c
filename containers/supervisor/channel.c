/*
 * channel.c: "supervisor channel", many runs and terminal requests over
 * one exec (frames.h, "The channel"); see channel.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervisor/channel.h"
#include "supervisor/frames.h"
#include "supervisor/io.h"
#include "supervisor/run.h"
#include "supervisor/term.h"

/* The channel: its runs in flight. */
#define CHAN_RUNS	512

struct slot {
	pid_t	pid;
	int	fd;		/* the run's live stream, -1 when free */
	char	id[SUPF_ID_MAX + 1];
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

	for (i = 0; i < CHAN_RUNS && slots[i].fd >= 0; i++)
		;
	if (i == CHAN_RUNS || pipe2(pfd, O_CLOEXEC) == -1)
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
 * A terminal request ('p'): its argv (frames.h) run as "supervisor term-*"
 * in a child whose stdout comes back as the request's 'M' frames, like a
 * run's.
 */
#define TERM_ARGS	10

static int
chan_term(const char *id, const unsigned char *p, size_t len)
{
	char	*buf, *argv[TERM_ARGS + 2];
	size_t	 o;
	pid_t	 pid;
	int	 argc;

	if (len < 1 || p[len - 1] != '\0' || (pid = chan_fork(id)) == -1)
		return reply('E', id, 125);
	if (pid == 0) {
		if ((buf = malloc(len)) == NULL)
			_exit(125);
		memcpy(buf, p, len);
		argv[0] = "supervisor";
		for (argc = 1, o = 0; o < len && argc <= TERM_ARGS; argc++) {
			argv[argc] = buf + o;
			o += strlen(buf + o) + 1;
		}
		argv[argc] = NULL;
		if (o != len || argc < 2 || strncmp(argv[1], "term-", 5) != 0 ||
		    (argc > 2 && !run_valid_id(argv[2])))
			sup_die(125, "bad terminal request");
		exit(term_main(argc, argv));
	}
	return 0;
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
	int			 i, n, status;
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
		for (i = 0; i < CHAN_RUNS; i++) {
			if (slots[i].fd < 0)
				continue;
			pfd[n].fd = slots[i].fd;
			pfd[n].events = POLLIN;
			which[n++] = i;
		}
		if (poll(pfd, (nfds_t)n, -1) < 0) {
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
				if (tagged('M', s->id, buf, (size_t)got) == -1)
					return 0;
				continue;
			}
			/* The run's process closed its stream: it is ending. */
			close(s->fd);
			s->fd = -1;
			status = 125;
			if (waitpid(s->pid, &status, 0) == s->pid)
				status = WIFEXITED(status) ? WEXITSTATUS(status) :
				    128 + WTERMSIG(status);
			if (reply('E', s->id, status) == -1)
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
