/*
 * sandbox/portlane.c: see sandbox/portlane.h.
 */
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "base/config.h"
#include "base/crypto.h"
#include "sandbox/portlane.h"

void
portlane_name(const char *container, char out[PORTLANE_NAME])
{
	char hex[CRYPTO_SHA256_HEX];

	crypto_sha256_hex(container, strlen(container), hex);
	snprintf(out, PORTLANE_NAME, "%.32s", hex);
}

int
portlane_folder(const struct config *cfg, const char *container, char *out,
    size_t n)
{
	char	name[PORTLANE_NAME];
	int	len;

	if (cfg->preview_sockets == NULL || cfg->preview_sockets[0] == '\0')
		return -1;
	portlane_name(container, name);
	len = snprintf(out, n, "%s/%s", cfg->preview_sockets, name);
	return len < 0 || (size_t)len >= n ? -1 : 0;
}

/* dir as a directory of ours (made 0711 if missing), never a link. */
static int
own_dir(const char *dir, struct error *err)
{
	struct stat st;

	if (mkdir(dir, 0711) == -1 && errno != EEXIST)
		return error_set(err, "cannot make %s: %s", dir,
		    strerror(errno));
	if (lstat(dir, &st) == -1)
		return error_set(err, "%s: %s", dir, strerror(errno));
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return error_set(err, "%s is not a folder of this server's "
		    "user", dir);
	/* Nobody else may swap what is in it. */
	if ((st.st_mode & 022) != 0 && chmod(dir, 0711) == -1)
		return error_set(err, "%s: %s", dir, strerror(errno));
	return 0;
}

int
portlane_prepare(const char *folder, struct error *err)
{
	char	parent[PATH_MAX];
	char	*slash;

	snprintf(parent, sizeof(parent), "%s", folder);
	if ((slash = strrchr(parent, '/')) == NULL || slash == parent)
		return error_set(err, "%s: not a lane folder", folder);
	*slash = '\0';
	if (own_dir(parent, err) == -1 || own_dir(folder, err) == -1)
		return -1;
	return 0;
}

void
portlane_remove(const char *folder)
{
	struct dirent	*e;
	DIR		*d;
	char		 path[PATH_MAX];

	if ((d = opendir(folder)) == NULL)
		return;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] == 'p' && strstr(e->d_name, ".sock") != NULL &&
		    snprintf(path, sizeof(path), "%s/%s", folder, e->d_name) <
		    (int)sizeof(path))
			unlink(path);
	closedir(d);
	rmdir(folder);
}

/* name in the folder open at dir, as a socket address (short). */
static int
addr_in(int dir, const char *name, struct sockaddr_un *sa)
{
	int n;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	n = snprintf(sa->sun_path, sizeof(sa->sun_path), "/proc/self/fd/%d/%s",
	    dir, name);
	return n < 0 || (size_t)n >= sizeof(sa->sun_path) ? -1 : 0;
}

/* Sockets of processes gone (nothing accepts on them) are removed. */
static void
sweep(int dir)
{
	struct sockaddr_un	 sa;
	struct dirent		*e;
	DIR			*d;
	int			 fd, dfd;

	if ((dfd = dup(dir)) == -1)
		return;
	if ((d = fdopendir(dfd)) == NULL) {
		close(dfd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] != 'p' || strstr(e->d_name, ".sock") == NULL ||
		    addr_in(dir, e->d_name, &sa) == -1)
			continue;
		fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);
		if (fd == -1)
			break;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 &&
		    errno == ECONNREFUSED)
			unlinkat(dir, e->d_name, 0);
		close(fd);
	}
	closedir(d);
}

int
portlane_listen(const char *folder, char *inner, size_t n)
{
	struct sockaddr_un	sa;
	unsigned char		r[4];
	char			name[48];
	int			fd = -1, dir, len;

	if (crypto_random(r, sizeof(r)) == -1)
		return -1;
	snprintf(name, sizeof(name), "p%ld-%02x%02x%02x%02x.sock",
	    (long)getpid(), r[0], r[1], r[2], r[3]);
	len = snprintf(inner, n, "%s/%s", PORTLANE_TARGET, name);
	if (len < 0 || (size_t)len >= n)
		return -1;
	if ((dir = open(folder, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1)
		return -1;
	sweep(dir);
	if (addr_in(dir, name, &sa) == -1 ||
	    (fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0)) == -1)
		goto fail;
	/* Root in the container connects; the folder (0711) hides it. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1)
		goto fail;
	if (fchmodat(dir, name, 0666, 0) == -1 || listen(fd, 64) == -1) {
		unlinkat(dir, name, 0);
		goto fail;
	}
	close(dir);
	return fd;
fail:
	if (fd != -1)
		close(fd);
	close(dir);
	return -1;
}

void
portlane_unlisten(int fd, const char *folder, const char *inner)
{
	const char	*name = strrchr(inner, '/');
	int		 dir;

	if (fd < 0)
		return;
	close(fd);
	if (name != NULL && (dir = open(folder, O_PATH | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) != -1) {
		unlinkat(dir, name + 1, 0);
		close(dir);
	}
}

void
portlane_close(int fd)
{
	struct linger l = { 1, 0 };

	setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
	close(fd);
}

/* A connected TCP stream socket, and nothing else. */
static bool
tcp_socket(int fd)
{
	struct sockaddr_storage	peer;
	struct stat		st;
	socklen_t		len;
	int			v;

	if (fstat(fd, &st) == -1 || !S_ISSOCK(st.st_mode))
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    (v != AF_INET && v != AF_INET6))
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == -1 ||
	    v != SOCK_STREAM)
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_PROTOCOL, &v, &len) == -1 ||
	    v != IPPROTO_TCP)
		return false;
	len = sizeof(v);
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 0)
		return false;
	len = sizeof(peer);
	return getpeername(fd, (struct sockaddr *)&peer, &len) == 0;
}

int
portlane_take(int conn, unsigned char key[PORTLANE_KEY], int *fd,
    int wait_ms)
{
	union {
		struct cmsghdr	h;
		char		b[CMSG_SPACE(4 * sizeof(int))];
	}		 ctl;
	unsigned char	 buf[PORTLANE_KEY + 1];
	struct pollfd	 pfd;
	struct msghdr	 msg;
	struct iovec	 iov;
	struct cmsghdr	*cm;
	int		 got[64], ngot = 0, i, k, nfd;
	ssize_t		 n;

	*fd = -1;
	pfd.fd = conn;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, wait_ms) <= 0)
		return -1;
	memset(&msg, 0, sizeof(msg));
	memset(&ctl, 0, sizeof(ctl));
	iov.iov_base = buf;
	iov.iov_len = sizeof(buf);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = ctl.b;
	msg.msg_controllen = sizeof(ctl.b);
	n = recvmsg(conn, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	/* Every descriptor that came, so none is left open. */
	for (cm = CMSG_FIRSTHDR(&msg); cm != NULL; cm = CMSG_NXTHDR(&msg, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
		    cm->cmsg_len < CMSG_LEN(0))
			continue;
		nfd = (int)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
		for (k = 0; k < nfd && ngot < (int)(sizeof(got) /
		    sizeof(got[0])); k++)
			memcpy(&got[ngot++], CMSG_DATA(cm) + k * sizeof(int),
			    sizeof(int));
	}
	if (n != PORTLANE_KEY || ngot != 1 ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0 ||
	    !tcp_socket(got[0]) || fcntl(got[0], F_SETFL,
	    fcntl(got[0], F_GETFL) | O_NONBLOCK) == -1) {
		for (i = 0; i < ngot; i++)
			portlane_close(got[i]);
		return -1;
	}
	memcpy(key, buf, PORTLANE_KEY);
	*fd = got[0];
	return 0;
}
