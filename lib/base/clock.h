/*
 * clock.h: the monotonic clock in milliseconds, for deadlines, ticks and
 * durations (never for wall-clock times stored or shown: those are
 * time(NULL), or clock_wall_ms where a stored time needs less than a
 * second), and how a wall-clock time is shown. Header-only so the
 * supervisor, a separate static program, shares it too.
 */
#ifndef CLOCK_H
#define CLOCK_H

#include <time.h>

static inline long long
clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The wall clock in milliseconds since the epoch. */
static inline long long
clock_wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * A wall-clock time (seconds since the epoch) as ISO 8601 in UTC
 * ("2026-07-28T10:30:00Z") into out, n bytes (21 or more).
 */
static inline void
clock_iso8601(long long t, char *out, size_t n)
{
	time_t		tt = (time_t)t;
	struct tm	tm;

	gmtime_r(&tt, &tm);
	strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

#endif
