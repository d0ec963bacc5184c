/*
 * init.c: what the server says of itself: the result of initialize, the
 * instructions text (initialize and server/discover), serverInfo.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/js.h"
#include "mcp/extern.h"
#include "oauth/owners.h"
#include "sandbox/owneraddr.h"
#include "sandbox/secrets.h"

static const char instructions_head[] =
    "This server gives you a persistent Linux sandbox: one long-lived Docker "
    "container (Debian, you are root, with internet access) shared by all "
    "your calls.\n"
    "- execute(command, timeout) runs `bash -c command` in /sandbox and "
    "returns stdout, stderr and the exit code. Each call is a fresh bash "
    "process: cd and exported variables do not carry over, so chain steps "
    "with && or write scripts. Long output is cut in the middle.\n"
    "- Files in /sandbox persist between calls; top-level entries unchanged "
    "for a while are removed by a periodic cleanup. Packages installed with "
    "apt-get, pip or npm persist in the container.\n"
    "- At the timeout the command and everything it started are killed. "
    "Detach long-running services with `setsid nohup cmd > log 2>&1 &`.\n";
static const char instructions_tail[] =
    "- To give the user a file (PDF, image, archive, ...) that is not text, "
    "use share_file(path): it returns a download link to hand to the user.";

/*
 * What is true for an era's callers. Whose key signed in is said here,
 * after sign-in, never on the sign-in page (which must not tell a guesser
 * whose key they hold).
 */
/*
 * The secrets owner's sandbox has, for the model: "- Requests to HOSTS
 * are authenticated for you (secret NAME) ..." per secret, or NULL (none,
 * or they cannot be read: then nothing is said).
 */
static char *
secrets_said(const struct config *cfg, struct db *db, const char *owner)
{
	struct secrets	 ss;
	struct error	 err;
	FILE		*f;
	char		*buf = NULL;
	size_t		 len = 0, i;

	if (db == NULL || !cfg->proxy ||
	    secrets_load(cfg, db, cfg->per_person ? owner : NULL, false, &ss,
	    &err) == -1)
		return NULL;
	if (ss.n == 0 || (f = open_memstream(&buf, &len)) == NULL) {
		secrets_free(&ss);
		return NULL;
	}
	for (i = 0; i < ss.n; i++) {
		/* An owner's own is added in person scope only (owneraddr.h). */
		if (ss.v[i].owner[0] != '\0' && !owneraddr_wanted(cfg))
			continue;
		fprintf(f, "- HTTPS requests to %s are authenticated for you "
		    "(secret %s, as %s): the egress proxy adds the credential "
		    "on the way out. Do not look for it in the sandbox: it is "
		    "not there, and output that would show it is masked as "
		    "[secret %s].\n", ss.v[i].hosts, ss.v[i].name,
		    ss.v[i].basic_user[0] != '\0' ? "HTTP Basic, e.g. git "
		    "clone over https" : ss.v[i].header, ss.v[i].name);
	}
	secrets_free(&ss);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *
mcp_instructions(const struct config *cfg, struct db *db,
    const struct mcp_era *era, const char *owner)
{
	char		 who[OWNER_MAX + 256] = "";
	char		*s, *sec;
	size_t		 n;

	if (owner != NULL)
		snprintf(who, sizeof(who), "- You are signed in as \"%s\"%s.%s\n",
		    owner, strcmp(owner, OWNER_OPERATOR) == 0 ?
		    " (the server's own key)" : " (a personal key)",
		    cfg->per_person ? " This sandbox is yours alone; it stops "
		    "when idle and starts again, with its files and packages, "
		    "on the next call." : "");
	sec = owner != NULL ? secrets_said(cfg, db, owner) : NULL;
	n = sizeof(instructions_head) + strlen(era->interrupted) +
	    sizeof(instructions_tail) + strlen(who) +
	    (sec != NULL ? strlen(sec) : 0) + 1;
	if ((s = malloc(n)) == NULL) {
		free(sec);
		return NULL;
	}
	snprintf(s, n, "%s%s\n%s%s%s", instructions_head, era->interrupted,
	    instructions_tail, who, sec != NULL ? sec : "");
	free(sec);
	return s;
}

struct json_object *
mcp_server_info(void)
{
	struct json_object *info = json_object_new_object();

	js_set_str(info, "name", MCP_SERVER_NAME);
	js_set_str(info, "title", "Code Sandbox");
	js_set_str(info, "version", MCP_SERVER_VERSION);
	return info;
}

struct json_object *
mcp_initialize_result(const struct config *cfg, struct db *db,
    const char *requested, const char *owner)
{
	struct json_object	*r = json_object_new_object(), *caps, *t;
	char			*text;

	js_set_str(r, "protocolVersion", mcp_negotiate(requested));
	caps = json_object_new_object();
	t = json_object_new_object();
	js_set_bool(t, "listChanged", false);
	js_set(caps, "tools", t);
	js_set(r, "capabilities", caps);
	js_set(r, "serverInfo", mcp_server_info());
	if ((text = mcp_instructions(cfg, db, &mcp_era_2025, owner)) != NULL)
		js_set_str(r, "instructions", text);
	free(text);
	return r;
}
