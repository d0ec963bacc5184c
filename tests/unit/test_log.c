/*
 * test_log: one event is one line, whatever a caller passed: a newline or
 * a terminal escape in a logged value never reaches the log as such.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "check.h"

int
main(void)
{
	char	path[] = "/tmp/test_log.XXXXXX", buf[4096], esc[64];
	int	fd, saved;
	ssize_t	n;

	if ((fd = mkstemp(path)) == -1 || (saved = dup(STDERR_FILENO)) == -1) {
		CHECK(0, "temporary file");
		return check_status();
	}
	unlink(path);
	dup2(fd, STDERR_FILENO);
	log_init("test");
	log_warn("from the container: %s",
	    "x\n2030-01-01T00:00:00Z mcp[1] info: forged\x1b[2J\r\x7f");
	log_info("escaped: %s", log_escape(esc, sizeof(esc), "a\nb\x1b", 4));
	dup2(saved, STDERR_FILENO);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n <= 0) {
		CHECK(0, "the log was written");
		return check_status();
	}
	buf[n] = '\0';
	CHECK(strchr(buf, '\x1b') == NULL && strchr(buf, '\r') == NULL &&
	    strchr(buf, '\x7f') == NULL, "no control byte in the log");
	CHECK(strstr(buf, "container: x?2030-01-01T00:00:00Z mcp[1] info: "
	    "forged?[2J??\n") != NULL, "an unescaped newline stays in its line");
	CHECK(strstr(buf, "escaped: a\\x0ab\\x1b\n") != NULL,
	    "log_escape output passes as it is");
	n = 0;
	for (char *p = buf; *p != '\0'; p++)
		n += *p == '\n';
	CHECK(n == 2, "two events, two lines");
	return check_status();
}
