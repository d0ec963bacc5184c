/*
 * io.c: whole reads and writes for the supervisor's files.
 */
#include <errno.h>
#include <unistd.h>

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
