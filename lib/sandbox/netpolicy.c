/*
 * netpolicy.c: the egress policy's settings, canary and rule check; see
 * netpolicy.h and containers/netpolicy.sh (which makes the rules).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/config.h"
#include "sandbox/netpolicy.h"

#define RULES_MAX	(4u << 20)	/* bytes of iptables -S read */
#define RULES_DEADLINE_MS 5000

extern char **environ;

enum egress
netpolicy_egress(const struct config *c)
{
	if (strcmp(c->egress, "none") == 0)
		return EGRESS_NONE;
	if (strcmp(c->egress, "open") == 0)
		return EGRESS_OPEN;
	return EGRESS_INTERNET;
}

const char *
netpolicy_name(enum egress e)
{
	switch (e) {
	case EGRESS_NONE:
		return "none";
	case EGRESS_OPEN:
		return "open";
	case EGRESS_INTERNET:
		break;
	}
	return "internet";
}

const char *
netpolicy_network_mode(const struct config *c)
{
	switch (netpolicy_egress(c)) {
	case EGRESS_NONE:
		return "none";
	case EGRESS_OPEN:
		return "bridge";
	case EGRESS_INTERNET:
		break;
	}
	return c->network;
}

bool
netpolicy_canary_parse(const char *out, char *detail, size_t n)
{
	size_t	 i, len;
	bool	 blocked;

	blocked = strncmp(out, "blocked ", 8) == 0;
	len = strcspn(out, "\n");
	if (n == 0)
		return blocked;
	for (i = 0; i < len && i + 1 < n; i++)
		detail[i] = (out[i] < 0x20 || out[i] == 0x7f) ? '?' : out[i];
	detail[i] = '\0';
	return blocked;
}

/* The line "-A chain rest" is in text. */
static bool
has_rule(const char *text, const char *chain, const char *rest)
{
	char	 line[256];
	const char *p = text;
	size_t	 n, len;

	n = (size_t)snprintf(line, sizeof(line), "-A %s %s", chain, rest);
	if (n >= sizeof(line))
		return false;
	while ((p = strstr(p, line)) != NULL) {
		len = n;
		if ((p == text || p[-1] == '\n') &&
		    (p[len] == '\n' || p[len] == '\0' || p[len] == ' '))
			return true;
		p += len;
	}
	return false;
}

enum netpolicy_rules
netpolicy_rules_in(const char *text, const char *bridge, char *detail,
    size_t n)
{
	char	 fwd[64], in[64], jump[128];

	snprintf(fwd, sizeof(fwd), "CSFWD-%s", bridge);
	snprintf(in, sizeof(in), "CSIN-%s", bridge);
	snprintf(jump, sizeof(jump), "-i %s -j %s", bridge, fwd);
	if (!has_rule(text, "DOCKER-USER", jump)) {
		snprintf(detail, n, "missing: DOCKER-USER %s", jump);
		return NETPOLICY_RULES_MISSING;
	}
	snprintf(jump, sizeof(jump), "-i %s -j %s", bridge, in);
	if (!has_rule(text, "INPUT", jump)) {
		snprintf(detail, n, "missing: INPUT %s", jump);
		return NETPOLICY_RULES_MISSING;
	}
	if (!has_rule(text, fwd, "-d 169.254.0.0/16 -j REJECT")) {
		snprintf(detail, n, "missing: chain %s or its link-local REJECT",
		    fwd);
		return NETPOLICY_RULES_MISSING;
	}
	if (!has_rule(text, in, "-j REJECT")) {
		snprintf(detail, n, "missing: chain %s or its final REJECT", in);
		return NETPOLICY_RULES_MISSING;
	}
	snprintf(detail, n, "present: DOCKER-USER -> %s, INPUT -> %s", fwd, in);
	return NETPOLICY_RULES_PRESENT;
}

enum netpolicy_rules
netpolicy_rules_present(const char *bridge, char *detail, size_t n)
{
	char *const	 argv[] = { "iptables", "-w", "5", "-S", NULL };
	posix_spawn_file_actions_t fa;
	struct pollfd	 pfd;
	char		*buf = NULL;
	size_t		 len = 0;
	ssize_t		 r;
	long long	 end = clock_ms() + RULES_DEADLINE_MS;
	pid_t		 pid = -1;
	enum netpolicy_rules rc = NETPOLICY_RULES_UNKNOWN;
	int		 fds[2] = { -1, -1 }, st, left;

	if (geteuid() != 0) {
		snprintf(detail, n, "cannot tell: reading the firewall needs "
		    "root (run sandboxctl status as root, or "
		    "containers/netpolicy.sh check)");
		return NETPOLICY_RULES_UNKNOWN;
	}
	if ((buf = malloc(RULES_MAX + 1)) == NULL || pipe2(fds, O_CLOEXEC) == -1) {
		snprintf(detail, n, "cannot tell: %s", strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if ((errno = posix_spawnp(&pid, "iptables", &fa, NULL, argv,
	    environ)) != 0) {
		pid = -1;
		snprintf(detail, n, "cannot tell: iptables: %s", strerror(errno));
		posix_spawn_file_actions_destroy(&fa);
		goto out;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	fds[1] = -1;
	pfd.fd = fds[0];
	pfd.events = POLLIN;
	for (;;) {
		if ((left = (int)(end - clock_ms())) <= 0) {
			snprintf(detail, n, "cannot tell: iptables did not answer "
			    "within %d ms", RULES_DEADLINE_MS);
			goto out;
		}
		if (poll(&pfd, 1, left) == -1 && errno != EINTR)
			goto out;
		if ((r = read(fds[0], buf + len, RULES_MAX - len)) == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
		if (len == RULES_MAX) {
			snprintf(detail, n, "cannot tell: iptables -S longer "
			    "than %u bytes", RULES_MAX);
			goto out;
		}
	}
	buf[len] = '\0';
	rc = netpolicy_rules_in(buf, bridge, detail, n);
out:
	if (fds[0] != -1)
		close(fds[0]);
	if (fds[1] != -1)
		close(fds[1]);
	if (pid > 0) {
		if (rc == NETPOLICY_RULES_UNKNOWN)
			kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) == -1 && errno == EINTR)
			;
		if (rc != NETPOLICY_RULES_UNKNOWN &&
		    !(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
			snprintf(detail, n, "cannot tell: iptables -S failed");
			rc = NETPOLICY_RULES_UNKNOWN;
		}
	}
	free(buf);
	return rc;
}
