/*
 * io.c: whole reads and writes for the supervisor's files, and its last
 * word; see io.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "supervisor/frames.h"
#include "supervisor/io.h"

int
sup_write_all(int fd, const void *buf, size_t len)
{
	const char	*p = buf;
	ssize_t		 n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int
sup_read_full(int fd, void *buf, size_t len)
{
	char	*p = buf;
	ssize_t	 n;

	while (len > 0) {
		n = read(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

void
sup_null_stdio(void)
{
	int null;

	if ((null = open("/dev/null", O_RDWR)) >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
}

long
sup_number(const char *s, long min, long max)
{
	char	*end;
	long	 v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	return v;
}

void
sup_die(int code, const char *msg)
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
