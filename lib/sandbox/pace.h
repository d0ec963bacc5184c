/*
 * pace.h: how often the observer of a command running on a sandbox handle
 * is asked (exec_observer.tick, sandbox.h), for a caller that must act
 * sooner than about once a second, such as noticing a client that went
 * away.
 */
#ifndef CS_PACE_H
#define CS_PACE_H

struct sandbox;

/*
 * Ask the observers of the handle's commands every ms milliseconds from
 * now on (0: about once a second, the default), until set again.
 */
void	pace_set(struct sandbox *, long ms);

#endif
