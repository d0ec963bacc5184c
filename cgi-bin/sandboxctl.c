/*
 * sandboxctl: the operator's command (not an endpoint; see sandboxctl.8).
 *
 *   sandboxctl [-e envfile] [--json] [--limit N] command [words]
 *
 * This file reads the options and the settings; the commands, listed by
 * ctl_usage and sandboxctl.8, are in lib/ctl (ctl/ctl.h). Exit status:
 * 0 done, 1 failed, 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/log.h"
#include "ctl/ctl.h"

int
main(int argc, char *argv[])
{
	struct ctl	 c;
	struct error	 err;
	const char	*cmd, *def, *env;
	int		 i, n, rc;

	memset(&c, 0, sizeof(c));
	c.limit = CTL_LIMIT_DEFAULT;
	log_init("sandboxctl");
	/* Options anywhere: -e FILE, --json, --limit N; the rest in order. */
	for (i = 1, n = 0; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0)
			c.json = true;
		else if ((strcmp(argv[i], "-e") == 0 ||
		    strcmp(argv[i], "--env-file") == 0) && i + 1 < argc) {
			if (setenv("SANDBOX_ENV_FILE", argv[++i], 1) == -1)
				return 1;
		} else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			if (ctl_parse_long(argv[++i], 1, CTL_LIMIT_MAX,
			    &c.limit) == -1) {
				fprintf(stderr, "sandboxctl: --limit: 1 to %d\n",
				    CTL_LIMIT_MAX);
				return 2;
			}
		} else if (strcmp(argv[i], "-h") == 0 ||
		    strcmp(argv[i], "--help") == 0) {
			ctl_usage(stdout);
			return 0;
		} else
			argv[++n] = argv[i];
	}
	if (n < 1) {
		ctl_usage(stderr);
		return 2;
	}
	cmd = argv[1];
	c.argc = n - 1;
	c.argv = argv + 2;
	if (((env = getenv("SANDBOX_ENV_FILE")) == NULL || *env == '\0') &&
	    (def = ctl_env_default()) != NULL &&
	    setenv("SANDBOX_ENV_FILE", def, 1) == -1)
		return 1;
	if (config_load(&c.cfg, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	rc = ctl_run(&c, cmd);
	config_free(c.cfg);
	return rc;
}
