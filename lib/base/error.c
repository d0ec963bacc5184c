/* error.c: see error.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

static void
error_vset(struct error *e, const char *fmt, va_list ap)
{
	int n;

	n = vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	if (n < 0)
		e->msg[0] = '\0';
}

int
error_set(struct error *e, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->kind = ERR_NONE;
	va_start(ap, fmt);
	error_vset(e, fmt, ap);
	va_end(ap);
	return -1;
}

int
error_kind(struct error *e, enum error_kind kind, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->kind = kind;
	va_start(ap, fmt);
	error_vset(e, fmt, ap);
	va_end(ap);
	return -1;
}

void
error_clear(struct error *e)
{
	if (e == NULL)
		return;
	e->kind = ERR_NONE;
	e->msg[0] = '\0';
}

int
error_http_status(enum error_kind kind)
{
	switch (kind) {
	case ERR_INVALID:
		return 400;
	case ERR_DENIED:
		return 403;
	case ERR_NOT_FOUND:
		return 404;
	case ERR_CONFLICT:
		return 409;
	case ERR_GONE:
		return 410;
	case ERR_TOO_LARGE:
		return 413;
	case ERR_UPSTREAM:
	case ERR_REFUSED:
		return 502;
	case ERR_UNAVAILABLE:
		return 503;
	case ERR_TIMEOUT:
		return 504;
	case ERR_NO_SPACE:
		return 507;
	case ERR_NONE:
	case ERR_INTERNAL:
		break;
	}
	return 500;
}

enum error_kind
error_kind_of_http(long status)
{
	switch (status) {
	case 400:
		return ERR_INVALID;
	case 401:
	case 403:
		return ERR_DENIED;
	case 404:
		return ERR_NOT_FOUND;
	case 409:
		return ERR_CONFLICT;
	case 410:
		return ERR_GONE;
	case 413:
		return ERR_TOO_LARGE;
	case 500:
		return ERR_INTERNAL;
	case 503:
		return ERR_UNAVAILABLE;
	case 504:
		return ERR_TIMEOUT;
	case 507:
		return ERR_NO_SPACE;
	default:
		return ERR_UPSTREAM;
	}
}
