/*
 * ctl/ctl.h: sandboxctl's commands (cgi-bin/sandboxctl.c is their main).
 *
 * The operator's command reads the same settings as the programs
 * (config_load) and works on the same SQLite file and Docker engine. Every
 * command builds one JSON object; --json prints it, otherwise it is shown as
 * text for people, with every value that came from clients (names,
 * commands, paths) escaped so that it cannot drive the terminal. This is
 * the top of lib/: nothing else includes it.
 */
#ifndef CS_CTL_H
#define CS_CTL_H

#include <stdbool.h>
#include <stdio.h>

#define CTL_LIMIT_DEFAULT	20	/* --limit: rows of a list */
#define CTL_LIMIT_MAX		10000

struct config;
struct db;

/* One run of sandboxctl: the settings, the options and the command's words. */
struct ctl {
	struct config	*cfg;		/* loaded by the caller */
	struct db	*db;		/* opened by ctl_run */
	bool		 json;		/* --json */
	long		 limit;		/* --limit N */
	int		 argc;		/* the words after the command's name */
	char		**argv;
};

/* The usage, to f (stdout for --help, else stderr). */
void	ctl_usage(FILE *f);

/*
 * The settings file when neither -e nor SANDBOX_ENV_FILE names one: the
 * installed one when this program runs from an sbin folder (make install),
 * else NULL (config_load's default, .env in the working folder). Static.
 */
const char *ctl_env_default(void);

/* s as a decimal integer from min to max into *out. 0, or -1 (not one). */
int	ctl_parse_long(const char *s, long min, long max, long *out);

/*
 * Run the command called name with c's words, c->cfg loaded: the engine
 * client and the database are opened for it (and closed after) unless it
 * is check, which needs neither. Returns the exit status: 0 done, 1
 * failed, 2 usage (the usage then on stderr).
 */
int	ctl_run(struct ctl *c, const char *name);

#endif
