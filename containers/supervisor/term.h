/*
 * term.h: the supervisor's terminals (term.c): the term-start, term-send
 * and term-close commands.
 */
#ifndef CS_SUPERVISOR_TERM_H
#define CS_SUPERVISOR_TERM_H

#include <stddef.h>

/* Why a request failed, as its 'X' frame says. */
#define TERM_NONE	"no such terminal (closed, or ended when idle)"
#define TERM_SILENT	"the terminal did not answer"
/* How long past its wait a request's answer may take. */
#define TERM_SLACK_S	10

/*
 * argv[1] is a term-* command, argv[2] (all but term-list) a valid id;
 * the exit status.
 */
int	term_main(int argc, char **argv);
/*
 * The bytes of a term-send, term-watch or term-close request (argv as
 * term_main's) for the terminal's socket, in a new buffer *req of *len
 * bytes (its u32 wait_ms at offset 8). 0; -1 with *why for bad
 * arguments; 1 when argv is another command (term-start, term-list),
 * which needs a process of its own.
 */
int	term_request(int argc, char **argv, unsigned char **req, size_t *len,
	    const char **why);
/* A socket connected to terminal id's daemon; -1 when there is none. */
int	term_connect(const char *id);

#endif
