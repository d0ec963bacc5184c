/* show.c: values shown to people (ctl/extern.h). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/js.h"
#include "base/log.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"

void
ctl_show_json(struct json_object *o)
{
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
	    JSON_C_TO_STRING_NOSLASHESCAPE));
}

const char *
ctl_show_esc(char *buf, size_t n, const char *s)
{
	if (s == NULL)
		return "-";
	return log_escape(buf, n, s, strlen(s));
}

const char *
ctl_show_when(char *buf, size_t n, long long t)
{
	struct tm	tm;
	time_t		tt = (time_t)t;

	if (t <= 0 || gmtime_r(&tt, &tm) == NULL)
		return "-";
	strftime(buf, n, "%Y-%m-%d %H:%M:%SZ", &tm);
	return buf;
}

void
ctl_show_bytes(char *buf, size_t n, long long b)
{
	if (b < 0)
		snprintf(buf, n, "-");
	else if (b >= 1LL << 30)
		snprintf(buf, n, "%.1f GiB", (double)b / (1LL << 30));
	else if (b >= 1LL << 20)
		snprintf(buf, n, "%.1f MiB", (double)b / (1LL << 20));
	else if (b >= 1LL << 10)
		snprintf(buf, n, "%.1f KiB", (double)b / (1LL << 10));
	else
		snprintf(buf, n, "%lld B", b);
}

long long
ctl_show_int(struct json_object *o, const char *key)
{
	long long v;

	return js_int(o, key, &v) == 0 ? v : -1;
}

const char *
ctl_show_str(struct json_object *o, const char *key)
{
	const char *s = js_str(o, key);

	return s != NULL ? s : "-";
}

int
ctl_show_revoked(long n, const char *missing, const char *noun,
    const char *id, const char *done)
{
	char b[160];

	if (n == -1)
		return 1;
	if (n == 0) {
		fprintf(stderr, "sandboxctl: no %s %s\n", missing,
		    ctl_show_esc(b, sizeof(b), id));
		return 1;
	}
	printf("%s %s %s\n", noun, ctl_show_esc(b, sizeof(b), id), done);
	return 0;
}
