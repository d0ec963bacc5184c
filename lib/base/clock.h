/*
 * clock.h: the monotonic clock in milliseconds, for deadlines, ticks and
 * durations (never for wall-clock times stored or shown: those are
 * time(NULL)). Header-only so the supervisor, a separate static program,
 * shares it too.
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

#endif
