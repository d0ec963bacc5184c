/*
 * base/thread.c: threads named at birth (thread.h). A new thread's name is
 * its creator's (Linux copies it at clone), so the creator takes the name
 * for the call.
 */
#include <pthread.h>
#include <stdbool.h>

#include "base/thread.h"

int
thread_start(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
    void *arg, const char *name)
{
	char	mine[16];
	bool	named;
	int	rc;

	named = pthread_getname_np(pthread_self(), mine, sizeof(mine)) == 0 &&
	    pthread_setname_np(pthread_self(), name) == 0;
	rc = pthread_create(t, attr, fn, arg);
	if (named)
		pthread_setname_np(pthread_self(), mine);
	return rc;
}
