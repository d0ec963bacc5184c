/*
 * fuzz_preview_lane.c: libFuzzer target for what a hostile container sends
 * on its previews' lane (lib/sandbox/portlane.c, portlane_take): the
 * input's first byte chooses the descriptors that go with the message (none,
 * a connected TCP socket, a pipe, a unix socket, a listening socket, two
 * at once), the rest is the message. Whatever comes, a descriptor is taken
 * only with a key of the right length and only if it is the TCP socket, and
 * nothing else stays open here.
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fuzz.h"
#include "sandbox/portlane.h"
#include "../unit/send_fds.h"

static int	tcp = -1, lis = -1, pip[2] = { -1, -1 }, uni[2] = { -1, -1 };

static void
setup(void)
{
	struct sockaddr_in	a;
	socklen_t		len = sizeof(a);

	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((lis = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(lis, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    listen(lis, 8) == -1 ||
	    getsockname(lis, (struct sockaddr *)&a, &len) == -1 ||
	    (tcp = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    connect(tcp, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    pipe(pip) == -1 || socketpair(AF_UNIX, SOCK_STREAM, 0, uni) == -1)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	unsigned char	 key[PORTLANE_KEY];
	int		 sv[2], fds[2], n = 0, fd, rc, probe, after;

	if (tcp == -1)
		setup();
	if (size < 1 || size > 4096)
		return 0;
	switch (data[0] % 6) {
	case 1: fds[n++] = tcp; break;
	case 2: fds[n++] = pip[0]; break;
	case 3: fds[n++] = uni[0]; break;
	case 4: fds[n++] = lis; break;
	case 5: fds[n++] = tcp; fds[n++] = pip[1]; break;
	default: break;
	}
	probe = fcntl(0, F_DUPFD, 0);
	close(probe);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == -1)
		abort();
	if (send_fds(sv[1], data + 1, size - 1, fds, n) == -1 && size > 1)
		abort();
	close(sv[1]);
	rc = portlane_take(sv[0], key, &fd, 0);
	close(sv[0]);
	if (rc == 0 && (size - 1 != PORTLANE_KEY || data[0] % 6 != 1 ||
	    fd < 0 || memcmp(key, data + 1, PORTLANE_KEY) != 0))
		abort();
	if (rc == 0)
		close(fd);
	else if (fd != -1)
		abort();
	/* Nothing that came stays open. */
	after = fcntl(0, F_DUPFD, 0);
	close(after);
	if (after != probe)
		abort();
	return 0;
}
