/*
 * channel.h: "supervisor channel" (channel.c): many runs and terminal
 * requests over one exec (frames.h, "The channel").
 */
#ifndef CS_SUPERVISOR_CHANNEL_H
#define CS_SUPERVISOR_CHANNEL_H

/*
 * Serve 'r', 'p', 'k' and 'q' frames from stdin until it ends or stdout
 * fails; the runs in flight go on and keep their records. The exit status.
 */
int	channel_main(void);

#endif
