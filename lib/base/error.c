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
	e->status = 0;
	va_start(ap, fmt);
	error_vset(e, fmt, ap);
	va_end(ap);
	return -1;
}

int
error_status(struct error *e, int status, const char *fmt, ...)
{
	va_list ap;

	if (e == NULL)
		return -1;
	e->status = status;
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
	e->status = 0;
	e->msg[0] = '\0';
}
