/*
 * run.c: durable runs, the supervisor's "run", "kill" and "collect"; see
 * run.h and supervisor.c for what each does.
 *
 * Records are kept under RUNS (outside /sandbox) and removed KEEP_S after
 * they were written, by the next run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/output.h"
#include "supervisor/frames.h"
#include "supervisor/io.h"
#include "supervisor/run.h"

#define RUNS		"/run/code-sandbox/runs"
#define KEEP_S		(2 * 86400)
#define PRUNE_EVERY_S	60
#define DRAIN_MS	20	/* after the command: output still in the pipes */

static int	sigchld_pipe[2] = { -1, -1 };

bool
run_valid_id(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 && strspn(s, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == n;
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
		if (!run_valid_id(de->d_name))
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
	char		 buf[SUP_READ_CHUNK];
	bool		 killed = false;
	int		 i, nopen, wait;

	setsid();
	sup_null_stdio();
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
		sup_die(125, "out of memory");
	if (mkdir("/run/code-sandbox", 0700) == -1 && errno != EEXIST)
		sup_die(125, "cannot create /run/code-sandbox");
	if (mkdir(RUNS, 0700) == -1 && errno != EEXIST)
		sup_die(125, "cannot create " RUNS);
	prune();
	snprintf(r->dir, sizeof(r->dir), RUNS "/%s", id);
	if (mkdir(r->dir, 0700) == -1)
		sup_die(125, errno == EEXIST ? "the run exists already" :
		    "cannot create the run's folder");
	snprintf(path, sizeof(path), "%s/lock", r->dir);
	if ((r->lock = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1 ||
	    flock(r->lock, LOCK_EX) == -1)
		sup_die(125, "cannot lock the run");
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
		sup_die(125, "cannot write the command's file");
	for (i = 0; i < nchunks; i++)
		if (sup_write_all(fd, chunks[i], strlen(chunks[i])) == -1)
			sup_die(125, "cannot write the command's file");
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
		sup_die(125, "cannot make pipes");
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
		sup_die(125, "cannot fork");
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
	char	buf[SUP_READ_CHUNK];
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
		if (r->exited && now >= r->drain_end) {
			/*
			 * What the pipes hold already is the command's, however
			 * late this thread got here (a loaded host): take it,
			 * a bounded number of reads (a detached child may go
			 * on writing; run_detach drains the rest).
			 */
			for (i = 0; i < 256; i++) {
				pfd[0].fd = r->fds[0];
				pfd[1].fd = r->fds[1];
				pfd[0].events = pfd[1].events = POLLIN;
				pfd[0].revents = pfd[1].revents = 0;
				if (poll(pfd, 2, 0) <= 0)
					break;
				run_read(r, pfd);
			}
			break;
		}
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
			sup_die(125, "poll failed");
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

int
run_main(const char *id, long timeout, long max, int nchunks, char **chunks)
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

int
run_kill(const char *id)
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
		if ((pgid = sup_number(line, 2, 1L << 22)) > 0)
			kill(-(pid_t)pgid, SIGKILL);
	}
	fclose(f);
	return 0;
}

/*
 * How run id stands: 0 with *fd its record open, 3 running, 4 ended
 * without a record, 5 no such run.
 */
int
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

int
run_collect(const char *id)
{
	char	buf[SUP_READ_CHUNK];
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
