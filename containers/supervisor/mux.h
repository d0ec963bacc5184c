/*
 * mux.h: "supervisor mux" (mux.c).
 */
#ifndef CS_SUPERVISOR_MUX_H
#define CS_SUPERVISOR_MUX_H

/*
 * Serve the mux (frames.h, "The mux") on stdin and stdout until stdin
 * ends or stdout fails. The exit status.
 */
int	mux_main(void);

#endif
