/*
 * secrets.c: secrets add NAME --host HOST[,HOST...] [--owner OWNER]
 * [--header 'Name: template {}' | --basic USER] | secrets list |
 * secrets remove NAME (sandbox/secrets.h). The value comes from standard
 * input only, never from the command line; it is never printed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/secret.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "oauth/owners.h"
#include "sandbox/proxy.h"
#include "sandbox/secrets.h"

/* The presentation, for people: "Authorization: Bearer {}", "Basic as U". */
static void
presentation(const struct secret *s, char *buf, size_t n)
{
	if (s->basic_user[0] != '\0')
		snprintf(buf, n, "Authorization: Basic (user %s)", s->basic_user);
	else
		snprintf(buf, n, "%s: %s", s->header, s->tmpl);
}

static int
secrets_list(struct ctl *c)
{
	struct secrets		 ss;
	struct error		 err;
	struct json_object	*arr, *o;
	char			 pres[512], b1[80], b2[1100], b3[160], b4[600];
	size_t			 i;

	if (secrets_load(c->cfg, c->db, NULL, false, &ss, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (c->json) {
		arr = json_object_new_array();
		for (i = 0; i < ss.n; i++) {
			o = json_object_new_object();
			presentation(&ss.v[i], pres, sizeof(pres));
			js_set_str(o, "name", ss.v[i].name);
			js_set_str(o, "hosts", ss.v[i].hosts);
			if (ss.v[i].owner[0] != '\0')
				js_set_str(o, "owner", ss.v[i].owner);
			js_set_str(o, "presentation", pres);
			js_set_int(o, "created", ss.v[i].created);
			json_object_array_add(arr, o);
		}
		ctl_show_json(arr);
		json_object_put(arr);
		secrets_free(&ss);
		return 0;
	}
	printf("%-24s %-12s %-32s %s\n", "NAME", "OWNER", "HOSTS",
	    "PRESENTATION");
	for (i = 0; i < ss.n; i++) {
		presentation(&ss.v[i], pres, sizeof(pres));
		printf("%-24s %-12s %-32s %s\n",
		    ctl_show_esc(b1, sizeof(b1), ss.v[i].name),
		    ss.v[i].owner[0] != '\0' ?
		    ctl_show_esc(b3, sizeof(b3), ss.v[i].owner) : "(all)",
		    ctl_show_esc(b2, sizeof(b2), ss.v[i].hosts),
		    ctl_show_esc(b4, sizeof(b4), pres));
	}
	if (ss.n == 0)
		printf("(no secrets: sandboxctl secrets add NAME --host HOST "
		    "< file)\n");
	secrets_free(&ss);
	return 0;
}

/*
 * The value from standard input: at most SECRET_VALUE_MAX bytes, one
 * newline at the end taken off (echo VALUE | ...). -1 with the reason.
 */
static long
read_value(char *buf, size_t n, struct error *err)
{
	size_t	 got = 0;
	ssize_t	 r;

	if (isatty(STDIN_FILENO))
		fprintf(stderr, "sandboxctl: reading the value from standard "
		    "input (end with Ctrl-D)\n");
	while (got < n) {
		if ((r = read(STDIN_FILENO, buf + got, n - got)) == -1) {
			if (errno == EINTR)
				continue;
			return error_set(err, "reading the value: %s",
			    strerror(errno));
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	if (got == n)
		return error_kind(err, ERR_INVALID, "the value is longer than %d "
		    "bytes", SECRET_VALUE_MAX);
	if (got > 0 && buf[got - 1] == '\n')
		got--;
	if (got > 0 && buf[got - 1] == '\r')
		got--;
	if (got == 0)
		return error_kind(err, ERR_INVALID, "no value on standard input "
		    "(the value is read from standard input only)");
	return (long)got;
}

static int
secrets_add_cmd(struct ctl *c)
{
	struct secret	 s;
	struct error	 err;
	char		 value[SECRET_VALUE_MAX + 3];
	const char	*host = NULL, *owner = NULL, *header = NULL,
			*basic = NULL;
	int		 i;
	long		 n;

	memset(&s, 0, sizeof(s));
	if (c->argc < 2)
		return ctl_misuse();
	for (i = 2; i < c->argc; i++) {
		const char *o = c->argv[i];

		if (i + 1 >= c->argc) {
			fprintf(stderr, "sandboxctl: secrets add: %s needs a "
			    "value\n", o);
			return 2;
		}
		if (strcmp(o, "--host") == 0)
			host = c->argv[++i];
		else if (strcmp(o, "--owner") == 0)
			owner = c->argv[++i];
		else if (strcmp(o, "--header") == 0)
			header = c->argv[++i];
		else if (strcmp(o, "--basic") == 0)
			basic = c->argv[++i];
		else {
			fprintf(stderr, "sandboxctl: secrets add: unknown option "
			    "(the value is read from standard input, never "
			    "given as a word)\n");
			return 2;
		}
	}
	if (secret_name_check(c->argv[1], &err) == -1)
		goto bad;
	snprintf(s.name, sizeof(s.name), "%s", c->argv[1]);
	if (host == NULL) {
		fprintf(stderr, "sandboxctl: secrets add: --host HOST[,HOST...] "
		    "is required\n");
		return 2;
	}
	if (secret_hosts_check(host, s.hosts, sizeof(s.hosts), &err) == -1)
		goto bad;
	if (header != NULL && basic != NULL) {
		fprintf(stderr, "sandboxctl: secrets add: --header or --basic, "
		    "not both\n");
		return 2;
	}
	if (owner != NULL) {
		if (!owners_name_valid(owner) || strlen(owner) >= sizeof(s.owner)) {
			fprintf(stderr, "sandboxctl: secrets add: --owner: not "
			    "an owner's name\n");
			return 2;
		}
		fprintf(stderr, "sandboxctl: note: a secret of one owner is "
		    "kept, masked in output, but not yet added to requests: "
		    "the proxy tells sandboxes apart only by network address, "
		    "which changes with each start (docs/secrets.md)\n");
		snprintf(s.owner, sizeof(s.owner), "%s", owner);
	}
	if (basic != NULL) {
		if (secret_user_check(basic, &err) == -1)
			goto bad;
		snprintf(s.basic_user, sizeof(s.basic_user), "%s", basic);
		snprintf(s.header, sizeof(s.header), "Authorization");
		snprintf(s.tmpl, sizeof(s.tmpl), "Basic {}");
	} else if (secret_header_check(header != NULL ? header :
	    "Authorization: Bearer {}", s.header, s.tmpl, &err) == -1)
		goto bad;
	if ((n = read_value(value, SECRET_VALUE_MAX + 2, &err)) == -1)
		goto bad;
	if (secret_value_check(value, (size_t)n, &err) == -1 ||
	    secrets_add(c->cfg, c->db, &s, value, (size_t)n, &err) == -1) {
		crypto_wipe(value, sizeof(value));
		goto bad;
	}
	crypto_wipe(value, sizeof(value));
	printf("secret %s added for %s%s%s\n", s.name, s.hosts,
	    s.owner[0] != '\0' ? ", owner " : "", s.owner);
	return proxy_apply_ctl(c->cfg, c->db) == -1 ? 1 : 0;
bad:
	fprintf(stderr, "sandboxctl: secrets add: %s; nothing stored\n",
	    err.msg);
	return 1;
}

int
ctl_secrets(struct ctl *c)
{
	struct error		 err;
	enum lookup_result	 rc;
	char			 b[80];
	const char		*verb = c->argc > 0 ? c->argv[0] : "";

	if (c->argc == 1 && strcmp(verb, "list") == 0)
		return secrets_list(c);
	if (strcmp(verb, "add") == 0)
		return secrets_add_cmd(c);
	if (c->argc != 2 || strcmp(verb, "remove") != 0)
		return ctl_misuse();
	if ((rc = secrets_remove(c->db, c->argv[1], &err)) == LOOKUP_ERROR) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	if (rc == LOOKUP_NONE) {
		fprintf(stderr, "sandboxctl: no secret named %s\n",
		    ctl_show_esc(b, sizeof(b), c->argv[1]));
		return 1;
	}
	printf("secret %s removed\n", c->argv[1]);
	return proxy_apply_ctl(c->cfg, c->db) == -1 ? 1 : 0;
}
