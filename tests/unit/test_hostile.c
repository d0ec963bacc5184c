/*
 * test_hostile.c: the egress policy's parsers (addresses, the canary's
 * answer, iptables -S) and the comparison of a container with its wanted
 * shape (sandbox/cspec.c), over engine answers written here.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "check.h"
#include "sandbox/cspec.h"
#include "sandbox/netpolicy.h"

static char envpath[] = "/tmp/cs-test-hostile-XXXXXX";

static void
write_env(const char *text)
{
	FILE *f = fopen(envpath, "w");

	fputs(text, f);
	fclose(f);
}

/* A container as this version makes it, as the engine describes it. */
static const char GOOD[] =
    "{\"Id\":\"abc123\",\"State\":{\"Running\":true},"
    "\"Config\":{\"Image\":\"code-sandbox:latest\",\"Labels\":{\"code-sandbox\":\"sandbox\","
    "\"code-sandbox.version\":\"3\"}},"
    "\"HostConfig\":{\"Privileged\":false,\"CapDrop\":[\"ALL\"],"
    "\"CapAdd\":[\"CHOWN\",\"DAC_OVERRIDE\",\"FOWNER\",\"FSETID\",\"KILL\",\"SETGID\",\"SETUID\"],"
    "\"SecurityOpt\":[\"no-new-privileges\"],\"NetworkMode\":\"code-sandbox\","
    "\"Memory\":536870912,\"MemorySwap\":536870912,\"NanoCpus\":1000000000,\"PidsLimit\":1024,"
    "\"PidMode\":\"\",\"IpcMode\":\"private\",\"Runtime\":\"runc\"},"
    "\"Mounts\":[{\"Type\":\"volume\",\"Name\":\"vol\",\"Source\":\"/var/lib/docker/volumes/vol/_data\","
    "\"Destination\":\"/sandbox\"}]}";

static enum cspec_verdict
compare(struct cspec *cs, const char *from, const char *to, char *diff,
    size_t n)
{
	char			*text = strdup(GOOD), *p;
	struct json_object	*o;
	enum cspec_verdict	 v;

	if (from != NULL && (p = strstr(text, from)) != NULL) {
		size_t	 head = (size_t)(p - text), tl = strlen(to);
		size_t	 rest = strlen(p + strlen(from));
		char	*t = malloc(head + tl + rest + 1);

		memcpy(t, text, head);
		memcpy(t + head, to, tl);
		memcpy(t + head + tl, p + strlen(from), rest + 1);
		free(text);
		text = t;
	}
	o = js_parse(text, strlen(text), 32, NULL);
	v = o == NULL ? (enum cspec_verdict)-1 : cspec_compare(cs, o, diff, n);
	json_object_put(o);
	free(text);
	return v;
}

int
main(void)
{
	struct config	*c = NULL;
	struct cspec	*cs = NULL;
	struct error	 e;
	char		 d[400];
	int		 fd;

	CHECK(config_valid_ipv4("10.0.0.1", false), "ipv4 plain");
	CHECK(config_valid_ipv4("203.0.113.0/24", true), "ipv4 cidr");
	CHECK(!config_valid_ipv4("203.0.113.0/24", false), "cidr refused where an address is wanted");
	CHECK(!config_valid_ipv4("010.0.0.1", false), "leading zero refused");
	CHECK(!config_valid_ipv4("1.2.3.256", false), "octet > 255 refused");
	CHECK(!config_valid_ipv4("1.2.3", false), "three parts refused");
	CHECK(!config_valid_ipv4("1.2.3.4/33", true), "prefix > 32 refused");
	CHECK(!config_valid_ipv4("1.2.3.4/", true), "empty prefix refused");
	CHECK(!config_valid_ipv4("1.2.3.4 ", false), "trailing space refused");
	CHECK(!config_valid_ipv4("", false), "empty refused");

	CHECK(netpolicy_canary_parse("blocked 172.18.0.1 UDP port 9 rejected\n", d, sizeof(d)) &&
	    strcmp(d, "blocked 172.18.0.1 UDP port 9 rejected") == 0, "canary blocked");
	CHECK(!netpolicy_canary_parse("open 172.18.0.1 answered\n", d, sizeof(d)), "canary open");
	CHECK(!netpolicy_canary_parse("", d, sizeof(d)) && d[0] == '\0', "canary silent");
	CHECK(!netpolicy_canary_parse("blocked\x1b[2J", d, 4) && strcmp(d, "blo") == 0,
	    "canary: no space after blocked, cut to size");
	CHECK(netpolicy_canary_parse("blocked \x1b!\n", d, sizeof(d)) && strcmp(d, "blocked ?!") == 0,
	    "canary: control characters replaced");

	{
		const char *ok =
		    "-P INPUT ACCEPT\n-N CSFWD-cs-1\n-N CSIN-cs-1\n"
		    "-A INPUT -i cs-1 -j CSIN-cs-1\n"
		    "-A DOCKER-USER -i cs-1 -j CSFWD-cs-1\n"
		    "-A CSFWD-cs-1 -d 169.254.0.0/16 -p tcp -j REJECT --reject-with tcp-reset\n"
		    "-A CSFWD-cs-1 -d 169.254.0.0/16 -j REJECT --reject-with icmp-admin-prohibited\n"
		    "-A CSIN-cs-1 -j REJECT --reject-with icmp-admin-prohibited\n";

		CHECK(netpolicy_rules_in(ok, "cs-1", d, sizeof(d)) == NETPOLICY_RULES_PRESENT, "rules present");
		CHECK(netpolicy_rules_in(ok, "cs-12", d, sizeof(d)) == NETPOLICY_RULES_MISSING &&
		    strstr(d, "DOCKER-USER") != NULL, "rules of another bridge are not these");
		CHECK(netpolicy_rules_in("-A DOCKER-USER -i cs-1 -j CSFWD-cs-1\n", "cs-1", d,
		    sizeof(d)) == NETPOLICY_RULES_MISSING && strstr(d, "INPUT") != NULL, "missing INPUT jump named");
		CHECK(netpolicy_rules_in("", "cs-1", d, sizeof(d)) == NETPOLICY_RULES_MISSING, "no rules");
	}

	if ((fd = mkstemp(envpath)) == -1)
		return 1;
	close(fd);
	setenv("SANDBOX_ENV_FILE", envpath, 1);
	write_env("SANDBOX_API_KEY=0123456789abcdefXYZ\nSANDBOX_EGRESS=everything\n");
	CHECK(config_load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_EGRESS") != NULL,
	    "bad SANDBOX_EGRESS named");
	write_env("SANDBOX_API_KEY=0123456789abcdefXYZ\nSANDBOX_EGRESS_ALLOW=10.1.0.0/16 fd00::/8\n");
	CHECK(config_load(&c, &e) == -1 && strstr(e.msg, "fd00::/8") != NULL,
	    "IPv6 in the allow-list refused, naming it");
	write_env("SANDBOX_API_KEY=0123456789abcdefXYZ\nSANDBOX_RUNTIME=run sc\n");
	CHECK(config_load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_RUNTIME") != NULL,
	    "bad runtime name refused");
	write_env("SANDBOX_API_KEY=0123456789abcdefXYZ\nSANDBOX_MEMORY=512m\nSANDBOX_CPUS=1\n"
	    "SANDBOX_VOLUME=vol\nSANDBOX_EGRESS_ALLOW=10.1.0.0/16 192.0.2.7\n");
	CHECK(config_load(&c, &e) == 0, "good policy settings load");
	if (c == NULL || cspec_new(c, c->container, c->volume, &cs, &e) == -1) {
		config_free(c);
		return 1;
	}

	CHECK(compare(cs, NULL, NULL, d, sizeof(d)) == CSPEC_OK && d[0] == '\0', "as made: ok");
	CHECK(compare(cs, "\"Memory\":536870912", "\"Memory\":314572800", d, sizeof(d)) ==
	    CSPEC_UPDATE && strstr(d, "Memory 314572800, configured 536870912") != NULL,
	    "another memory limit: update");
	CHECK(compare(cs, "\"code-sandbox.version\":\"3\"", "\"x\":\"y\"", d, sizeof(d)) ==
	    CSPEC_RECREATE && strstr(d, "older") != NULL, "no version label: recreate");
	CHECK(compare(cs, "\"code-sandbox.version\":\"3\"", "\"code-sandbox.version\":\"9\"", d,
	    sizeof(d)) == CSPEC_REFUSE, "a newer version: refused");
	CHECK(compare(cs, "\"code-sandbox.version\":\"3\"", "\"code-sandbox.version\":\"3x\"", d,
	    sizeof(d)) == CSPEC_REFUSE, "a bad version: refused");
	CHECK(compare(cs, "\"Privileged\":false", "\"Privileged\":true", d, sizeof(d)) ==
	    CSPEC_REFUSE && strstr(d, "privileged") != NULL, "privileged: refused");
	CHECK(compare(cs, "\"SETUID\"]", "\"SETUID\",\"cap_net_raw\"]", d, sizeof(d)) ==
	    CSPEC_REFUSE && strstr(d, "extra capability NET_RAW") != NULL,
	    "extra capability named, any spelling");
	CHECK(compare(cs, "\"CapDrop\":[\"ALL\"]", "\"CapDrop\":null", d, sizeof(d)) ==
	    CSPEC_REFUSE && strstr(d, "not dropped") != NULL, "default capabilities: refused");
	CHECK(compare(cs, "\"no-new-privileges\"", "\"seccomp=unconfined\"", d, sizeof(d)) ==
	    CSPEC_REFUSE && strstr(d, "no-new-privileges") != NULL, "no-new-privileges off: refused");
	CHECK(compare(cs, "\"NetworkMode\":\"code-sandbox\"", "\"NetworkMode\":\"host\"", d,
	    sizeof(d)) == CSPEC_REFUSE && strstr(d, "network host") != NULL,
	    "another network: refused");
	CHECK(compare(cs, "\"Destination\":\"/sandbox\"}]", "\"Destination\":\"/sandbox\"},"
	    "{\"Type\":\"bind\",\"Source\":\"/var/run/docker.sock\",\"Destination\":\"/s\"}]",
	    d, sizeof(d)) == CSPEC_REFUSE && strstr(d, "Docker socket") != NULL,
	    "docker socket: refused");
	CHECK(compare(cs, "\"Destination\":\"/sandbox\"}]", "\"Destination\":\"/sandbox\"},"
	    "{\"Type\":\"bind\",\"Source\":\"/etc\",\"Destination\":\"/h\"}]",
	    d, sizeof(d)) == CSPEC_REFUSE && strstr(d, "extra mount bind /etc at /h") != NULL,
	    "host folder: refused");
	CHECK(compare(cs, "\"PidMode\":\"\"", "\"PidMode\":\"host\"", d, sizeof(d)) ==
	    CSPEC_REFUSE, "host pid namespace: refused");
	/* Security review item 12: confinement switched off by a security option. */
	{
		static const char *const opts[] = { "seccomp=unconfined",
		    "seccomp:unconfined", "apparmor=unconfined",
		    "systempaths=unconfined" };
		char to[96], name[128];

		for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++) {
			snprintf(to, sizeof(to), "\"no-new-privileges\",\"%s\"",
			    opts[i]);
			snprintf(name, sizeof(name), "the reuse check refuses "
			    "%s (security review item 12)", opts[i]);
			CHECK(compare(cs, "\"no-new-privileges\"", to, d,
			    sizeof(d)) == CSPEC_REFUSE && strstr(d,
			    "unconfined") != NULL, name);
		}
		CHECK(compare(cs, "\"PidMode\":\"\"", "\"PidMode\":\"\","
		    "\"MaskedPaths\":[]", d, sizeof(d)) == CSPEC_REFUSE &&
		    strstr(d, "systempaths unconfined") != NULL, "the reuse "
		    "check refuses no masked paths (systempaths=unconfined as "
		    "the engine stores it; security review item 12)");
		CHECK(compare(cs, "\"PidMode\":\"\"", "\"PidMode\":\"\","
		    "\"MaskedPaths\":[\"/proc/kcore\"]", d, sizeof(d)) ==
		    CSPEC_OK, "masked paths: fine");
		CHECK(compare(cs, "\"PidMode\":\"\"", "\"PidMode\":\"\","
		    "\"CgroupnsMode\":\"host\"", d, sizeof(d)) == CSPEC_REFUSE &&
		    strstr(d, "cgroup namespace") != NULL, "the reuse check "
		    "refuses a host cgroup namespace (security review item 12)");
		CHECK(compare(cs, "\"code-sandbox.version\":\"3\"",
		    "\"code-sandbox.version\":\"2\"", d, sizeof(d)) ==
		    CSPEC_RECREATE, "a version 2 container (the host's cgroup "
		    "namespace on cgroup v1): recreated");
	}
	CHECK(compare(cs, "\"code-sandbox\":\"sandbox\"", "\"code-sandbox\":\"data\"", d,
	    sizeof(d)) == CSPEC_REFUSE && strstr(d, "not made by") != NULL,
	    "not ours: refused");
	CHECK(compare(cs, "\"HostConfig\"", "\"HostConfigX\"", d, sizeof(d)) == CSPEC_REFUSE,
	    "no HostConfig: refused");
	CHECK(compare(cs, "\"Privileged\":false", "\"Privileged\":true", d, 8) == CSPEC_REFUSE &&
	    strlen(d) < 8, "differences cut to the buffer");

	cspec_free(cs);
	config_free(c);
	unlink(envpath);
	return check_status();
}
