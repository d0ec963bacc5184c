/*
 * log.h: one line per event on stderr (the web server's error log).
 *
 * Untrusted bytes must go through log_escape before they are logged: it
 * escapes control and non-ASCII bytes and cuts the value short. Secrets are
 * never passed here.
 */
#ifndef CS_LOG_H
#define CS_LOG_H

#include <stddef.h>

void	log_init(const char *progname);
/* Drop every later line (the fuzz targets: parsers log what they see). */
void	log_silence(void);
void	log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Write an escaped, length-limited copy of src[0..len) into dst (size n,
 * at least 8), NUL-terminated; returns dst. Bytes outside 0x20-0x7e become
 * \xHH; a value longer than fits ends with "...".
 */
char	*log_escape(char *dst, size_t n, const char *src, size_t len);

/* What a configuration refusal is about: one line per kind per process. */
enum log_refusal {
	LOG_REFUSE_ORIGIN,	/* Origin header on /mcp or the sign-in form */
	LOG_REFUSE_RESOURCE,	/* RFC 8707 resource at /authorize or /token */
	LOG_REFUSE_AUDIENCE,	/* a token issued for another resource */
	LOG_REFUSE_ISSUER,	/* metadata asked for at another origin */
	LOG_REFUSE__MAX
};

/*
 * Log a refusal that a wrong setting (most often SANDBOX_PUBLIC_URL) would
 * cause, the first time a process makes one of its kind: one warn line
 * with what was expected and what arrived (escaped and cut short), so the
 * operator sees the mismatch without the log filling up from a client that
 * keeps retrying. arrived may be NULL (shown as "nothing").
 */
void	log_refusal(enum log_refusal, const char *expected, const char *arrived);

#endif
