/*
 * thread.h: starting a thread that has its name from its first instant
 * (what ps, top and /proc/PID/task show), not its creator's until it gets
 * round to naming itself.
 */
#ifndef THREAD_H
#define THREAD_H

#include <pthread.h>

/*
 * pthread_create, the new thread born named name (at most 15 bytes): the
 * calling thread carries the name while it creates it, then its own again.
 * pthread_create's result.
 */
int	thread_start(pthread_t *t, const pthread_attr_t *attr,
	    void *(*fn)(void *), void *arg, const char *name);

#endif
