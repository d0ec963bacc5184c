/*
 * mux.h: "supervisor mux" (mux.c).
 */
#ifndef CS_SUPERVISOR_MUX_H
#define CS_SUPERVISOR_MUX_H

/*
 * Serve the mux (frames.h, "The mux") on stdin and stdout until stdin
 * ends or stdout fails; streams opened with a key are handed over on the
 * lane socket at lane (lib/sandbox/portlane.h) when it is not NULL. The
 * exit status.
 */
int	mux_main(const char *lane);

#endif
