/*
 * sandbox/terms.h: the terminal table (sql/021-terminals.sql) brought in
 * line with the terminals alive in the sandboxes. A terminal closes
 * itself after TERMINAL_IDLE seconds without input or output, and dies
 * with its container, without any call of the server's; its row would
 * read open until the next call on it. The periodic clean-up, sandboxctl
 * terminals list and status, and terminal_start at the cap reconcile.
 */
#ifndef CS_SANDBOX_TERMS_H
#define CS_SANDBOX_TERMS_H

#include "base/error.h"

struct config;
struct db;

/*
 * Close the rows of terminals no longer alive in their owner's sandbox,
 * for owner alone (NULL: every owner with an open terminal). A row
 * younger than 30 s is left alone (its terminal may still
 * be starting), and so are the rows of a sandbox that cannot be asked
 * (*unchecked counts them; may be NULL). The rows closed, or -1 when the
 * database cannot be read.
 */
long	terms_reconcile(const struct config *, struct db *, const char *owner,
	    long *unchecked);

#endif
