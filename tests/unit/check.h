/*
 * check.h: the unit tests' macros. Each check prints "ok - name" or
 * "not ok - name"; a check that cannot run here prints
 * "ok - name # SKIP reason" (tests/run.sh counts it as skipped, not
 * passed); a test's main returns check_status().
 */
#ifndef CHECK_H
#define CHECK_H

#include <stdio.h>

static int check_failed;

#define CHECK(cond, name) do {						\
	if (cond)							\
		printf("ok - %s\n", (name));				\
	else {								\
		printf("not ok - %s (%s:%d: %s)\n", (name), __FILE__,	\
		    __LINE__, #cond);					\
		check_failed = 1;					\
	}								\
} while (0)

#define SKIP(name, reason)						\
	printf("ok - %s # SKIP %s\n", (name), (reason))

static inline int
check_status(void)
{
	return check_failed;
}

#endif
