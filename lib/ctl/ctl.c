/*
 * ctl.c: sandboxctl's usage and its table of commands (ctl/ctl.h); each
 * command group is a file of its own (ctl/extern.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "engine/docker.h"

/* The installed settings file (the units' EnvironmentFile): the Makefile's. */
#ifndef SYSCONF_ENV_FILE
#define SYSCONF_ENV_FILE	"/etc/code-sandbox/env"
#endif

/*
 * The commands. Those with list and revoke take "list" or "revoke ..."
 * ("close ..." for terminals)
 * after their name; the others take no words unless options says so.
 */
static const struct command {
	const char	*name;
	const char	*table;		/* needed in the database, or NULL */
	const char	*what;		/* what that table holds, for people */
	bool		 options;	/* run reads words of its own */
	bool		 alone;		/* needs neither the engine nor the database */
	int		(*run)(struct ctl *);
	int		(*list)(struct ctl *);
	int		(*revoke)(struct ctl *);
} commands[] = {
	{ "status", NULL, NULL, false, false, ctl_status, NULL, NULL },
	{ "check", NULL, NULL, false, true, ctl_check, NULL, NULL },
	{ "audit", "run", "audit log (run table)", false, false, ctl_audit,
	    NULL, NULL },
	{ "cleanup", NULL, NULL, false, false, ctl_cleanup, NULL, NULL },
	{ "clients", "oauth_client", "OAuth clients", false, false, NULL,
	    ctl_clients_list, ctl_clients_revoke },
	{ "tokens", "oauth_grant", "OAuth tokens", false, false, NULL,
	    ctl_tokens_list, ctl_tokens_revoke },
	{ "links", "link", "download links", false, false, NULL,
	    ctl_links_list, ctl_links_revoke },
	{ "rotate-key", NULL, NULL, true, false, ctl_rotate_key, NULL, NULL },
	{ "keys", "owner_key", "personal keys", true, false, ctl_keys, NULL,
	    NULL },
	{ "sandboxes", "sandbox", "sandboxes per person", true, false,
	    ctl_sandboxes, NULL, NULL },
	{ "recreate", NULL, NULL, true, false, ctl_sandboxes_recreate, NULL,
	    NULL },
	{ "signins", "signin_attempt", "sign-in audit", false, false,
	    ctl_signins_list, NULL, NULL },
	{ "unblock", "oauth_throttle", "sign-in throttle", true, false,
	    ctl_signins_unblock, NULL, NULL },
	{ "terminals", "terminal", "terminals", false, false, NULL,
	    ctl_terminals_list, ctl_terminals_close },
	{ "secrets", "secret", "secrets", true, false, ctl_secrets, NULL,
	    NULL },
	{ "proxy-config", "secret", "secrets", false, false, ctl_proxy_config,
	    NULL, NULL },
	{ "snapshots", "snapshot", "snapshots", true, false, ctl_snapshots,
	    NULL, NULL },
	{ NULL, NULL, NULL, false, false, NULL, NULL, NULL }
};

void
ctl_usage(FILE *f)
{
	fprintf(f,
	    "usage: sandboxctl [-e envfile] [--json] command\n"
	    "  status                       engine, image, container, volume, database\n"
	    "  check                        the settings only (before serving)\n"
	    "  audit [--limit N]            recent commands, newest first\n"
	    "  cleanup                      run the FILE_TTL clean-up now\n"
	    "  clients list | clients revoke CLIENT_ID\n"
	    "  tokens list | tokens revoke GRANT_ID | --client CLIENT_ID | --all\n"
	    "  links list [--limit N] | links revoke LINK_ID\n"
	    "  rotate-key [--revoke-tokens] [--show-key]\n"
	    "  keys list | keys add NAME | keys rotate NAME | keys revoke NAME\n"
	    "  sandboxes list | sandboxes stop OWNER | sandboxes stop-idle |\n"
	    "      sandboxes remove OWNER (deletes the volume)\n"
	    "  recreate [OWNER]             make the container again (keeps /sandbox)\n"
	    "  snapshots list [OWNER] | snapshots create [OWNER] |\n"
	    "      snapshots restore ID [OWNER] [--force] | snapshots delete ID [OWNER]\n"
	    "  signins [--limit N]          sign-in attempts, newest first\n"
	    "  unblock [ADDRESS]            lift the wrong-key wait (all, or one address)\n"
	    "  terminals list [--limit N] | terminals close TERMINAL_ID\n"
	    "  secrets list | secrets remove NAME |\n"
	    "      secrets add NAME --host HOST[,HOST...] [--owner OWNER]\n"
	    "      [--header 'X-Api-Key: {}' | --basic USER]  (value on stdin)\n"
	    "  proxy-config                 write the egress proxy's configuration\n"
	    "settings: -e FILE, else $SANDBOX_ENV_FILE, else " SYSCONF_ENV_FILE "\n"
	    "when installed (run from an sbin folder), else ./.env\n"
	    "status exits 1 when the engine, the image or the database is not "
	    "usable, or the sandbox's checks refuse commands\n");
}

int
ctl_misuse(void)
{
	ctl_usage(stderr);
	return 2;
}

const char *
ctl_env_default(void)
{
	static char	 exe[PATH_MAX];
	ssize_t		 n;
	char		*slash;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return NULL;
	exe[n] = '\0';
	if ((slash = strrchr(exe, '/')) == NULL)
		return NULL;
	*slash = '\0';
	slash = strrchr(exe, '/');
	if (slash == NULL || strcmp(slash, "/sbin") != 0)
		return NULL;
	return SYSCONF_ENV_FILE;
}

int
ctl_parse_long(const char *s, long min, long max, long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || v < min || v > max)
		return -1;
	*out = (long)v;
	return 0;
}

/* Run cmd (NULL: no such command) with c's words. Exit status. */
static int
dispatch(struct ctl *c, const struct command *cmd)
{
	if (cmd == NULL ||
	    (cmd->list == NULL && !cmd->options && c->argc != 0))
		return ctl_misuse();
	if (cmd->table != NULL && ctl_rows_need(c, cmd->table, cmd->what) == -1)
		return 1;
	if (cmd->list == NULL)
		return cmd->run(c);
	/* Terminals are closed, the rest revoked. */
	if (c->argc >= 2 && strcmp(c->argv[0],
	    cmd->revoke == ctl_terminals_close ? "close" : "revoke") == 0)
		return cmd->revoke(c);
	if (c->argc == 1 && strcmp(c->argv[0], "list") == 0)
		return cmd->list(c);
	return ctl_misuse();
}

int
ctl_run(struct ctl *c, const char *name)
{
	const struct command	*cmd;
	struct error		 err;
	int			 rc = 1;

	for (cmd = commands; cmd->name != NULL; cmd++)
		if (strcmp(cmd->name, name) == 0)
			break;
	if (cmd->name == NULL)
		cmd = NULL;
	/*
	 * Every command but check opens the engine client and the database
	 * first, and so does a name that is no command: its usage comes after.
	 */
	if (cmd != NULL && cmd->alone)
		return dispatch(c, cmd);
	if (docker_global_init() == -1) {
		fprintf(stderr, "sandboxctl: cannot initialise the engine client\n");
		return 1;
	}
	if (db_open(c->cfg->db_path, &c->db, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		goto out;
	}
	rc = dispatch(c, cmd);
out:
	db_close(c->db);
	c->db = NULL;
	docker_global_cleanup();
	return rc;
}
