/*
 * supervisor: runs the sandbox's commands inside the container, so a
 * command's result exists whatever happens to the server process that
 * asked for it. Static, no dependencies; the server uploads it into the
 * container on start (lib/sandbox/sup.c) and runs it through an engine exec.
 *
 *   supervisor run ID TIMEOUT MAX CHUNK...
 *	Run `bash -c COMMAND` (COMMAND is the CHUNKs joined; when there are
 *	several, from a file) in /sandbox, stdin /dev/null, as the leader of
 *	its own session and process group. Kill the whole group with SIGKILL
 *	TIMEOUT seconds after the start. stdout carries the live frames
 *	(frames.h): S, o/e as output comes, R. Keep at most MAX bytes of each
 *	stream (head and tail) and write them with the result as the run's
 *	record, RUNS/ID/record, for whoever collects it. Exit with the
 *	command's status (128+N for signal N), 125 when it could not start.
 *	Processes the command detached keep their output pipes drained by a
 *	small child of the supervisor until they close them.
 *   supervisor kill ID
 *	SIGKILL the process group of run ID, if it still runs. Exit 0, or 1
 *	when the supervisor never ran such a run.
 *   supervisor collect ID
 *	Copy run ID's record to stdout: exit 0; 3 while it runs, 4 when its
 *	supervisor ended without a record, 5 when there is no such run.
 *   supervisor mux
 *	Carry many TCP connections to ports in the container (preview
 *	links, lib/preview/) over one exec (frames.h, "The mux"): each port
 *	is tried at 127.0.0.1, then ::1, then the container's own addresses
 *	(a server bound to one of them), 2 s each; bytes go unchanged both
 *	ways, each stream within its credit. Ends when stdin ends.
 *   supervisor channel
 *	Serve many runs over one exec (frames.h, "The channel"): 'r', 'k'
 *	and 'q' frames on stdin; each run is a child doing what "run" does,
 *	its live stream sent back as 'M' frames tagged with its id, then 'E'
 *	with its exit status. Ends when stdin ends or stdout fails; the runs
 *	in flight go on and keep their records.
 *
 * Records are kept under RUNS (outside /sandbox) and removed KEEP_S after
 * they were written, by the next run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/output.h"
#include "supervisor/frames.h"
#include "supervisor/io.h"
#include "supervisor/mux.h"
#include "supervisor/term.h"

#define RUNS		"/run/code-sandbox/runs"
#define KEEP_S		(2 * 86400)
#define PRUNE_EVERY_S	60
#define TIMEOUT_MAX	(30L * 86400)
#define MAX_OUTPUT	(10L * 1000 * 1000)
#define READ_CHUNK	(32 * 1024)
#define DRAIN_MS	20	/* after the command: output still in the pipes */

static int	sigchld_pipe[2] = { -1, -1 };

static void
die(int code, const char *msg)
{
	unsigned char	hdr[SUPF_HEADER];
	size_t		n = strlen(msg);

	if (n > SUPF_MESSAGE_MAX)
		n = SUPF_MESSAGE_MAX;
	supf_header('X', (uint32_t)n, hdr);
	if (write(1, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr) && n > 0 &&
	    write(1, msg, n) < 0)
		code = 125;
	fprintf(stderr, "supervisor: %s\n", msg);
	exit(code);
}

static bool
valid_id(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
}

static long
number(const char *s, long min, long max)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	return v;
}

static int
frame(int fd, int type, const void *buf, size_t len)
{
	unsigned char hdr[SUPF_HEADER];

	supf_header(type, (uint32_t)len, hdr);
	if (sup_write_all(fd, hdr, sizeof(hdr)) == -1)
		return -1;
	return len == 0 ? 0 : sup_write_all(fd, buf, len);
}

/* Head, then tail in order, as frames ht and tt (lib/base/output.c keeps them). */
static int
cap_write(int fd, const struct capture *c, int ht, int tt)
{
	const unsigned char	*head, *tail[2];
	unsigned char		 hdr[SUPF_HEADER];
	size_t			 hlen, tlen[2];

	capture_parts(c, &head, &hlen, tail, tlen);
	if (hlen > 0 && frame(fd, ht, head, hlen) == -1)
		return -1;
	if (tlen[0] + tlen[1] == 0)
		return 0;
	supf_header(tt, (uint32_t)(tlen[0] + tlen[1]), hdr);
	if (sup_write_all(fd, hdr, sizeof(hdr)) == -1 ||
	    sup_write_all(fd, tail[0], tlen[0]) == -1 ||
	    sup_write_all(fd, tail[1], tlen[1]) == -1)
		return -1;
	return 0;
}

/* The container's count of processes killed by its memory limit. */
static unsigned long long
oom_count(void)
{
	static const char *const files[] = { "/sys/fs/cgroup/memory.events",
	    "/sys/fs/cgroup/memory/memory.oom_control", NULL };
	char			 line[128];
	unsigned long long	 v = 0;
	FILE			*f;
	int			 i;

	for (i = 0; files[i] != NULL; i++) {
		if ((f = fopen(files[i], "re")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "oom_kill ", 9) == 0)
				v = strtoull(line + 9, NULL, 10);
		fclose(f);
		break;
	}
	return v;
}

/*
 * Remove records older than KEEP_S (and their folders), at most once every
 * PRUNE_EVERY_S: a stamp file's time says when it last ran, so a command
 * costs one stat, not one per run kept.
 */
static void
prune(void)
{
	char		 path[512];
	struct dirent	*de;
	struct stat	 st;
	DIR		*d;
	time_t		 now = time(NULL);
	const char	*files[] = { "record", "cmd.sh", "pgid", "lock", NULL };
	int		 i, fd;

	if (stat(RUNS "/.pruned", &st) == 0 && now - st.st_mtime >= 0 &&
	    now - st.st_mtime < PRUNE_EVERY_S)
		return;
	if ((fd = open(RUNS "/.pruned", O_WRONLY | O_CREAT | O_CLOEXEC,
	    0600)) >= 0) {
		futimens(fd, NULL);
		close(fd);
	}
	if ((d = opendir(RUNS)) == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if (!valid_id(de->d_name))
			continue;
		snprintf(path, sizeof(path), RUNS "/%s/record", de->d_name);
		if (stat(path, &st) == -1 || now - st.st_mtime < KEEP_S)
			continue;
		for (i = 0; files[i] != NULL; i++) {
			snprintf(path, sizeof(path), RUNS "/%s/%s", de->d_name,
			    files[i]);
			unlink(path);
		}
		snprintf(path, sizeof(path), RUNS "/%s", de->d_name);
		rmdir(path);
	}
	closedir(d);
}

static void
on_sigchld(int sig)
{
	int saved = errno;

	(void)sig;
	if (write(sigchld_pipe[1], "c", 1) < 0)
		errno = saved;
	errno = saved;
}

/*
 * After the command: keep reading what its detached processes write until
 * they close the pipes, and kill what stayed in its group at the deadline.
 * Runs in its own session with no link to the exec's streams.
 */
static void
drain(int fds[2], pid_t pgid, long long deadline)
{
	struct pollfd	 pfd[2];
	char		 buf[READ_CHUNK];
	bool		 killed = false;
	int		 i, nopen, null, wait;

	setsid();
	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	for (;;) {
		nopen = 0;
		for (i = 0; i < 2; i++) {
			pfd[i].fd = fds[i];
			pfd[i].events = POLLIN;
			nopen += fds[i] >= 0;
		}
		if (!killed && clock_ms() >= deadline) {
			kill(-pgid, SIGKILL);
			killed = true;
		}
		if (nopen == 0 && (killed || kill(-pgid, 0) == -1))
			_exit(0);
		wait = killed ? 1000 : (int)(deadline - clock_ms() < 1000 ?
		    deadline - clock_ms() : 1000);
		if (poll(pfd, 2, wait < 0 ? 0 : wait) < 0 && errno != EINTR)
			_exit(1);
		for (i = 0; i < 2; i++)
			if (fds[i] >= 0 && pfd[i].revents != 0 &&
			    read(fds[i], buf, sizeof(buf)) <= 0) {
				close(fds[i]);
				fds[i] = -1;
			}
	}
}

/* One "run", and what its steps share. */
struct run {
	char			 dir[256];	/* RUNS/ID */
	char			 cmd[320];	/* the command's file, when in chunks */
	char			 pgid[320];	/* the file naming its process group */
	int			 lock;		/* held while the run runs */
	struct capture		*out, *err;
	int			 po[2], pe[2];	/* its stdout and stderr pipes */
	int			 fds[2];	/* our ends of them; -1 closed */
	pid_t			 pid;
	int			 status;
	int			 live;		/* frames still go to stdout */
	long long		 start, deadline, drain_end;
	bool			 exited, deadline_kill;
	struct supf_result	 res;
};

/* The captures, the run's folder (after a prune of old ones), its lock. */
static void
run_prepare(struct run *r, const char *id, long max)
{
	char	path[320];

	signal(SIGPIPE, SIG_IGN);
	/* The same bounds and cut as the server's (lib/base/output.c). */
	if ((r->out = capture_new((size_t)max)) == NULL ||
	    (r->err = capture_new((size_t)max)) == NULL)
		die(125, "out of memory");
	if (mkdir("/run/code-sandbox", 0700) == -1 && errno != EEXIST)
		die(125, "cannot create /run/code-sandbox");
	if (mkdir(RUNS, 0700) == -1 && errno != EEXIST)
		die(125, "cannot create " RUNS);
	prune();
	snprintf(r->dir, sizeof(r->dir), RUNS "/%s", id);
	if (mkdir(r->dir, 0700) == -1)
		die(125, errno == EEXIST ? "the run exists already" :
		    "cannot create the run's folder");
	snprintf(path, sizeof(path), "%s/lock", r->dir);
	if ((r->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1 ||
	    flock(r->lock, LOCK_EX) == -1)
		die(125, "cannot lock the run");
}

/* bash's argv: -c COMMAND, or the chunks joined into the run's cmd.sh. */
static void
run_command(struct run *r, int nchunks, char **chunks, char *argv[4])
{
	int	fd, i;

	argv[0] = "bash";
	if (nchunks == 1) {
		argv[1] = "-c";
		argv[2] = chunks[0];
		argv[3] = NULL;
		return;
	}
	snprintf(r->cmd, sizeof(r->cmd), "%s/cmd.sh", r->dir);
	if ((fd = open(r->cmd, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) == -1)
		die(125, "cannot write the command's file");
	for (i = 0; i < nchunks; i++)
		if (sup_write_all(fd, chunks[i], strlen(chunks[i])) == -1)
			die(125, "cannot write the command's file");
	close(fd);
	argv[1] = r->cmd;
	argv[2] = NULL;
}

/* The child: its own session, in /sandbox, stdin /dev/null, into bash. */
static void
run_child(struct run *r, char **argv)
{
	int	fd;

	signal(SIGPIPE, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	setsid();
	if (chdir("/sandbox") == -1 && chdir("/") == -1)
		_exit(125);
	if ((fd = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(fd, 0) == -1 || dup2(r->po[1], 1) == -1 ||
	    dup2(r->pe[1], 2) == -1)
		_exit(125);
	execvp("bash", argv);
	dprintf(2, "supervisor: cannot run bash: %s\n", strerror(errno));
	_exit(127);
}

/*
 * Start the command: the pipes and SIGCHLD's, the 'S' frame, the fork,
 * and the pgid file that "kill" reads.
 */
static void
run_start(struct run *r, long timeout, char **argv)
{
	struct sigaction	 sa;
	char			 tmp[320];
	int			 fd;

	if (pipe2(r->po, O_CLOEXEC) == -1 || pipe2(r->pe, O_CLOEXEC) == -1 ||
	    pipe2(sigchld_pipe, O_CLOEXEC | O_NONBLOCK) == -1)
		die(125, "cannot make pipes");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigchld;
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	memset(&r->res, 0, sizeof(r->res));
	r->res.oom_before = oom_count();
	if (frame(1, 'S', NULL, 0) == -1)
		r->live = 0;
	r->start = clock_ms();
	r->deadline = r->start + timeout * 1000;
	if ((r->pid = fork()) == -1)
		die(125, "cannot fork");
	if (r->pid == 0)
		run_child(r, argv);
	close(r->po[1]);
	close(r->pe[1]);
	r->fds[0] = r->po[0];
	r->fds[1] = r->pe[0];
	snprintf(r->pgid, sizeof(r->pgid), "%s/pgid", r->dir);
	snprintf(tmp, sizeof(tmp), "%s/pgid.tmp", r->dir);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) >= 0) {
		dprintf(fd, "%ld\n", (long)r->pid);
		close(fd);
		rename(tmp, r->pgid);
	}
}

/* Read what poll found on the pipes: kept, and sent live while the reader is there. */
static void
run_read(struct run *r, const struct pollfd pfd[2])
{
	char	buf[READ_CHUNK];
	ssize_t	n;
	int	i;

	for (i = 0; i < 2; i++) {
		if (r->fds[i] < 0 || pfd[i].revents == 0)
			continue;
		n = read(r->fds[i], buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			close(r->fds[i]);
			r->fds[i] = -1;
			continue;
		}
		capture_add(i == 0 ? r->out : r->err, buf, (size_t)n);
		if (r->live && frame(1, i == 0 ? 'o' : 'e', buf,
		    (size_t)n) == -1)
			r->live = 0;	/* the reader left: keep the record */
	}
}

/*
 * Until the command exited and its pipes closed (or DRAIN_MS after it
 * exited): its output read, the group killed at the deadline.
 */
static void
run_wait(struct run *r)
{
	struct pollfd	pfd[3];
	char		buf[64];
	int		i, wait;

	for (;;) {
		long long now = clock_ms();

		if (!r->exited && now >= r->deadline && !r->deadline_kill) {
			kill(-r->pid, SIGKILL);
			r->deadline_kill = true;
		}
		if (r->exited && (r->fds[0] < 0 && r->fds[1] < 0))
			break;
		if (r->exited && now >= r->drain_end)
			break;
		for (i = 0; i < 2; i++) {
			pfd[i].fd = r->fds[i];
			pfd[i].events = POLLIN;
			pfd[i].revents = 0;
		}
		pfd[2].fd = sigchld_pipe[0];
		pfd[2].events = POLLIN;
		pfd[2].revents = 0;
		if (r->exited)
			wait = (int)(r->drain_end - now);
		else if (r->deadline_kill)
			wait = 1000;
		else
			wait = (int)(r->deadline - now > 1000 ? 1000 :
			    r->deadline - now);
		if (poll(pfd, 3, wait < 0 ? 0 : wait) < 0 && errno != EINTR)
			die(125, "poll failed");
		run_read(r, pfd);
		if (pfd[2].revents != 0)
			while (read(sigchld_pipe[0], buf, sizeof(buf)) > 0)
				;
		if (!r->exited && waitpid(r->pid, &r->status, WNOHANG) == r->pid) {
			r->exited = true;
			r->res.duration_ms = (unsigned long long)(clock_ms() -
			    r->start);
			r->drain_end = clock_ms() + DRAIN_MS;
			unlink(r->pgid);	/* nothing to kill now */
		}
	}
}

/* Detached processes hold the pipes or stay in the group: a child drains them. */
static void
run_detach(struct run *r)
{
	int	i;

	if (r->fds[0] >= 0 || r->fds[1] >= 0 || kill(-r->pid, 0) == 0) {
		pid_t d = fork();

		if (d == 0) {
			close(r->lock);
			drain(r->fds, r->pid, r->deadline);
		}
	}
	for (i = 0; i < 2; i++)
		if (r->fds[i] >= 0)
			close(r->fds[i]);
}

/*
 * The result, written with the kept output as the run's record (RUNS/ID/
 * record, renamed into place whole) and sent live: the exit status.
 */
static int
run_record(struct run *r)
{
	unsigned char	enc[SUPF_RESULT_LEN];
	char		path[320], tmp[320];
	int		fd, status = r->status;

	if (WIFEXITED(status)) {
		r->res.how = SUPF_EXITED;
		r->res.code = WEXITSTATUS(status);
	} else {
		r->res.how = r->deadline_kill ? SUPF_DEADLINE : SUPF_SIGNALLED;
		r->res.code = WTERMSIG(status);
	}
	r->res.out_total = capture_total(r->out);
	r->res.err_total = capture_total(r->err);
	r->res.oom_after = oom_count();
	supf_result_encode(&r->res, enc);

	snprintf(path, sizeof(path), "%s/record", r->dir);
	snprintf(tmp, sizeof(tmp), "%s/record.tmp", r->dir);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
	    0600)) >= 0) {
		if (cap_write(fd, r->out, 'H', 'T') == 0 &&
		    cap_write(fd, r->err, 'h', 't') == 0 &&
		    frame(fd, 'R', enc, sizeof(enc)) == 0 && close(fd) == 0)
			rename(tmp, path);
		else
			unlink(tmp);
	}
	if (r->live)
		frame(1, 'R', enc, sizeof(enc));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int
run(const char *id, long timeout, long max, int nchunks, char **chunks)
{
	struct run	 r;
	char		*argv[4];

	memset(&r, 0, sizeof(r));
	r.live = 1;
	run_prepare(&r, id, max);
	run_command(&r, nchunks, chunks, argv);
	run_start(&r, timeout, argv);
	run_wait(&r);
	run_detach(&r);
	return run_record(&r);
}

static int
kill_run(const char *id)
{
	char	path[256], line[32];
	long	pgid;
	FILE	*f;

	snprintf(path, sizeof(path), RUNS "/%s/pgid", id);
	if ((f = fopen(path, "re")) == NULL) {
		/* Ended already (0), or not a run of the supervisor (1). */
		snprintf(path, sizeof(path), RUNS "/%s", id);
		return access(path, F_OK) == 0 ? 0 : 1;
	}
	if (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if ((pgid = number(line, 2, 1L << 22)) > 0)
			kill(-(pid_t)pgid, SIGKILL);
	}
	fclose(f);
	return 0;
}

/*
 * How run id stands: 0 with *fd its record open, 3 running, 4 ended
 * without a record, 5 no such run.
 */
static int
run_state(const char *id, int *fd)
{
	char	path[256];
	int	lock, rc;

	*fd = -1;
	snprintf(path, sizeof(path), RUNS "/%s/lock", id);
	if ((lock = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return 5;
	if (flock(lock, LOCK_EX | LOCK_NB) == -1)
		rc = 3;
	else {
		snprintf(path, sizeof(path), RUNS "/%s/record", id);
		rc = (*fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ? 4 : 0;
	}
	close(lock);
	return rc;
}

static int
collect(const char *id)
{
	char	buf[READ_CHUNK];
	int	fd, rc;
	ssize_t	n;

	if ((rc = run_state(id, &fd)) != 0)
		return rc;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (sup_write_all(1, buf, (size_t)n) == -1)
			return 1;
	close(fd);
	return n < 0 ? 1 : 0;
}

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
	if (len < 1 || timeout < 1 || timeout > TIMEOUT_MAX ||
	    max > MAX_OUTPUT || memchr(p, '\0', len) != NULL ||
	    (pid = chan_fork(id)) == -1)
		return reply('E', id, 125);
	if (pid == 0) {
		if ((cmd = malloc(len + 1)) == NULL)
			die(125, "out of memory");
		memcpy(cmd, p, len);
		cmd[len] = '\0';
		chunks[0] = cmd;
		chunks[1] = "";
		/* Too long for one argument: run's file, as with chunks. */
		exit(run(id, timeout, max, len > 96 * 1024 ? 2 : 1, chunks));
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
		    (argc > 2 && !valid_id(argv[2])))
			die(125, "bad terminal request");
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
		return n != 0 ? -1 : reply('K', id, kill_run(id));
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

static int
channel(void)
{
	static struct pollfd	 pfd[1 + CHAN_RUNS];
	static int		 which[1 + CHAN_RUNS];
	unsigned char		 hdr[SUPF_HEADER + 4];
	char			 buf[READ_CHUNK];
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
				die(1, "malformed frame on the channel");
		}
	}
}

int
main(int argc, char **argv)
{
	long timeout = 0, max = 0;

	if (argc == 2 && strcmp(argv[1], "mux") == 0)
		return mux_main();
	if (argc >= 3 && !valid_id(argv[2]))
		die(125, "bad run id");
	if (argc >= 6 && strcmp(argv[1], "run") == 0) {
		if ((timeout = number(argv[3], 1, TIMEOUT_MAX)) < 0 ||
		    (max = number(argv[4], 0, MAX_OUTPUT)) < 0)
			die(125, "bad timeout or output limit");
		return run(argv[2], timeout, max, argc - 5, argv + 5);
	}
	if (argc == 3 && strcmp(argv[1], "kill") == 0)
		return kill_run(argv[2]);
	if (argc == 3 && strcmp(argv[1], "collect") == 0)
		return collect(argv[2]);
	if (argc == 2 && strcmp(argv[1], "channel") == 0)
		return channel();
	if (argc >= 2 && strncmp(argv[1], "term-", 5) == 0)
		return term_main(argc, argv);
	die(125, "usage: supervisor run ID TIMEOUT MAX CHUNK... | kill ID | "
	    "collect ID | mux | channel | term-start ... | "
	    "term-send ... | term-watch ... | term-close ID | term-list");
	return 125;
}
