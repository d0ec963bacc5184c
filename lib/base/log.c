/* log.c: see log.h. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"

static const char *prog = "code-sandbox";
static volatile int silent;

void
log_init(const char *progname)
{
	const char *slash;

	if (progname == NULL)
		return;
	slash = strrchr(progname, '/');
	prog = slash != NULL ? slash + 1 : progname;
}

void
log_silence(void)
{
	silent = 1;
}

static void
log_v(const char *level, const char *fmt, va_list ap)
{
	char		 line[2048], stamp[32], *p;
	struct tm	 tm;
	time_t		 now = time(NULL);
	int		 n;

	if (silent)
		return;
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	n = snprintf(line, sizeof(line), "%s %s[%d] %s: ", stamp, prog,
	    (int)getpid(), level);
	if (n < 0 || (size_t)n >= sizeof(line))
		return;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	/*
	 * One event, one line, whatever a caller passed unescaped: a control
	 * byte (a newline that would forge a line, a terminal escape) is '?'.
	 */
	for (p = line + n; *p != '\0'; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	/* One write per line, so lines from threads do not interleave. */
	n = (int)strlen(line);
	if ((size_t)n < sizeof(line) - 1)
		line[n++] = '\n';
	else
		line[sizeof(line) - 2] = '\n', n = (int)sizeof(line) - 1;
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v("info", fmt, ap);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_v("warn", fmt, ap);
	va_end(ap);
}

char *
log_escape(char *dst, size_t n, const char *src, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, o = 0;

	if (n < 8) {
		if (n > 0)
			dst[0] = '\0';
		return dst;
	}
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)src[i];

		if (o + 4 + 4 >= n) {
			memcpy(dst + o, "...", 3);
			o += 3;
			break;
		}
		if (c >= 0x20 && c < 0x7f && c != '\\') {
			dst[o++] = (char)c;
		} else {
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = hex[c >> 4];
			dst[o++] = hex[c & 15];
		}
	}
	dst[o] = '\0';
	return dst;
}

void
log_refusal(enum log_refusal kind, const char *expected, const char *arrived)
{
	static atomic_flag	 done[LOG_REFUSE__MAX] = { ATOMIC_FLAG_INIT,
	    ATOMIC_FLAG_INIT, ATOMIC_FLAG_INIT, ATOMIC_FLAG_INIT };
	static const char	*what[LOG_REFUSE__MAX] = { "origin", "resource",
	    "audience", "issuer" };
	char			 e[160], a[160];

	if ((unsigned)kind >= LOG_REFUSE__MAX ||
	    atomic_flag_test_and_set(&done[kind]))
		return;
	log_warn("refused: %s mismatch: expected %s, got %s (check "
	    "SANDBOX_PUBLIC_URL; logged once per process)", what[kind],
	    log_escape(e, sizeof(e), expected, strlen(expected)),
	    arrived == NULL ? "nothing" :
	    log_escape(a, sizeof(a), arrived, strlen(arrived)));
}
