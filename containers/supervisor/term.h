/*
 * term.h: the supervisor's terminals (term.c): the term-start, term-send
 * and term-close commands.
 */
#ifndef CS_SUPERVISOR_TERM_H
#define CS_SUPERVISOR_TERM_H

/*
 * argv[1] is a term-* command, argv[2] (all but term-list) a valid id;
 * the exit status.
 */
int	term_main(int argc, char **argv);

#endif
