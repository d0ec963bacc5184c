/* test_config.c: settings from an env file and the environment. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "check.h"

static char envpath[] = "/tmp/cs-test-env-XXXXXX";

static void
write_env(const char *text)
{
	FILE *f = fopen(envpath, "w");

	fputs(text, f);
	fclose(f);
}

static int
load(struct config **c, struct error *e)
{
	return config_load(c, e);
}

int
main(void)
{
	struct config	*c = NULL;
	struct error	 e;
	int		 fd;

	if ((fd = mkstemp(envpath)) == -1)
		return 1;
	close(fd);
	setenv("SANDBOX_ENV_FILE", envpath, 1);

	write_env("# comment\nexport SANDBOX_API_KEY=\"0123456789abcdefXYZ\"\n"
	    "SANDBOX_MEMORY=512m\nSANDBOX_CPUS=1.5\nSANDBOX_PUBLIC_URL=https://sb.example.com/\n"
	    "SANDBOX_DB=state.db\n");
	CHECK(load(&c, &e) == 0, "valid env file loads");
	if (c != NULL) {
		CHECK(strcmp(c->api_key, "0123456789abcdefXYZ") == 0, "quoted value unquoted");
		CHECK(c->memory_bytes == 512LL << 20, "size suffix m");
		CHECK(c->nano_cpus == 1500000000LL, "fractional CPUs");
		CHECK(strcmp(c->public_url, "https://sb.example.com") == 0, "trailing slash stripped");
		CHECK(strcmp(c->public_origin, "https://sb.example.com") == 0, "origin derived");
		CHECK(strcmp(c->mcp_url, "https://sb.example.com/mcp") == 0, "mcp url derived");
		CHECK(c->max_output_bytes == 50000, "MAX_OUTPUT_BYTES default");
		CHECK(c->file_ttl == 604800 && c->link_ttl == 86400, "TTL defaults");
		CHECK(strncmp(c->db_path, "/tmp/", 5) == 0, "db path relative to env file");
		CHECK(strcmp(c->docker_host, "unix:///var/run/docker.sock") == 0, "DOCKER_HOST default");
		/* Security review item 10: one owner cannot take every place. */
		CHECK(c->max_running_per_owner * 2 <= c->max_running,
		    "SANDBOX_MAX_RUNNING_PER_OWNER default at most half of SANDBOX_MAX_RUNNING");
		config_free(c);
	}

	/*
	 * Names whole in every name made from them (a person's, a snapshot
	 * helper's "%.100s-snap-..."), so the leftovers' sweep matches.
	 */
	setenv("SANDBOX_CONTAINER", "c23456789012345678901234567890123456789"
	    "012345678901234567890123456789012345678901", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_CONTAINER") != NULL,
	    "SANDBOX_CONTAINER of 81 characters refused");
	unsetenv("SANDBOX_CONTAINER");

	/* SANDBOX_PREVIEW_SOCKETS: beside the database, off, or clean. */
	CHECK(load(&c, &e) == 0 && strlen(c->preview_sockets) > 9 &&
	    strcmp(c->preview_sockets + strlen(c->preview_sockets) - 9,
	    "/previews") == 0, "SANDBOX_PREVIEW_SOCKETS: previews/ beside SANDBOX_DB");
	config_free(c);
	setenv("SANDBOX_PREVIEW_SOCKETS", "off", 1);
	CHECK(load(&c, &e) == 0 && c->preview_sockets[0] == '\0',
	    "SANDBOX_PREVIEW_SOCKETS=off: none");
	config_free(c);
	setenv("SANDBOX_PREVIEW_SOCKETS", "/srv/cs/previews", 1);
	setenv("DOCKER_HOST", "tcp://127.0.0.1:2376", 1);
	CHECK(load(&c, &e) == 0 && c->preview_sockets[0] == '\0',
	    "SANDBOX_PREVIEW_SOCKETS: none with a remote engine");
	config_free(c);
	unsetenv("DOCKER_HOST");
	{
		static const char *const bad[] = { "rel/dir", "/a//b", "/a/./b",
		    "/a/", "/a/..", "/a/../b", "/a b" };
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			setenv("SANDBOX_PREVIEW_SOCKETS", bad[i], 1);
			CHECK(load(&c, &e) == -1 && strstr(e.msg,
			    "SANDBOX_PREVIEW_SOCKETS") != NULL,
			    "SANDBOX_PREVIEW_SOCKETS: a path not clean refused");
		}
	}
	unsetenv("SANDBOX_PREVIEW_SOCKETS");

	setenv("MAX_OUTPUT_BYTES", "1234", 1);
	CHECK(load(&c, &e) == 0 && c->max_output_bytes == 1234, "environment overrides file");
	config_free(c);
	setenv("MAX_OUTPUT_BYTES", "12x", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "MAX_OUTPUT_BYTES") != NULL,
	    "bad number names the setting");
	unsetenv("MAX_OUTPUT_BYTES");

	setenv("SANDBOX_PUBLIC_URL", "ftp://x", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_PUBLIC_URL") != NULL,
	    "non-http public URL refused");
	setenv("SANDBOX_PUBLIC_URL", "https://user@x.example", 1);
	CHECK(load(&c, &e) == -1, "user info in public URL refused");
	setenv("SANDBOX_PUBLIC_URL", "https://x.example/mcp", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "must be an origin") != NULL &&
	    strstr(e.msg, "SANDBOX_PUBLIC_URL=https://x.example ") != NULL,
	    "public URL with a path refused, naming the origin to set");
	setenv("SANDBOX_PUBLIC_URL", "https://x.example:8443/", 1);
	CHECK(load(&c, &e) == 0 && strcmp(c->public_url, "https://x.example:8443") == 0,
	    "public URL with only a trailing slash accepted");
	config_free(c);
	{
		/* One URL parser (url.h) for the public URL. */
		static const char *const bad[] = {
			"https://x.example?q", "https://x.example/#f",
			"https://x.example//", "https://x.example:0",
			"https://x.example:65536", "https://x.example:",
			"https://x example", "https://x.example/%zz",
			"https://", "https:///path", "http://[::1", "x.example",
		};
		size_t i;
		int refused = 0;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			setenv("SANDBOX_PUBLIC_URL", bad[i], 1);
			if (load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_PUBLIC_URL") != NULL)
				refused++;
			else
				config_free(c);
		}
		CHECK(refused == (int)i, "public URL: query, fragment, two slashes, "
		    "bad ports, spaces, bad escapes and missing hosts refused");
		setenv("SANDBOX_PUBLIC_URL", "https://x.example?q", 1);
		CHECK(load(&c, &e) == -1 && strstr(e.msg, "without query") != NULL,
		    "public URL with a query: the URL message, not the origin one");
	}
	setenv("SANDBOX_PUBLIC_URL", "http://[::1]:8891", 1);
	CHECK(load(&c, &e) == 0 && strcmp(c->public_url, "http://[::1]:8891") == 0 &&
	    strcmp(c->public_origin, "http://[::1]:8891") == 0,
	    "public URL: an IPv6 literal with a port");
	config_free(c);
	unsetenv("SANDBOX_PUBLIC_URL");

	/* The Origin check (config_origin_allowed). */
	setenv("SANDBOX_HOST", "127.0.0.1", 1);
	setenv("SANDBOX_PUBLIC_URL", "https://sb.example.com", 1);
	setenv("SANDBOX_ALLOWED_ORIGINS", "https://a.example  http://b.example:8080", 1);
	if (load(&c, &e) == 0) {
		CHECK(config_origin_allowed(c, "https://sb.example.com") &&
		    config_origin_allowed(c, "HTTPS://SB.example.com"),
		    "origin: the public origin, without case");
		CHECK(config_origin_allowed(c, "https://a.example") &&
		    config_origin_allowed(c, "http://b.example:8080") &&
		    !config_origin_allowed(c, "http://b.example") &&
		    !config_origin_allowed(c, "https://a.exampl") &&
		    !config_origin_allowed(c, "https://a.example.evil"),
		    "origin: SANDBOX_ALLOWED_ORIGINS entries, whole");
		CHECK(config_origin_allowed(c, "http://localhost:3000") &&
		    config_origin_allowed(c, "http://127.0.0.1") &&
		    config_origin_allowed(c, "https://[::1]:8443") &&
		    config_origin_allowed(c, "http://[::1]"),
		    "origin: loopback origins on a loopback server, IPv6 included");
		CHECK(!config_origin_allowed(c, "null") &&
		    !config_origin_allowed(c, "") &&
		    !config_origin_allowed(c, "http://127.0.0.1.evil.example") &&
		    !config_origin_allowed(c, "http://localhost/x") &&
		    !config_origin_allowed(c, "http://localhost:99999") &&
		    !config_origin_allowed(c, "http://user@localhost") &&
		    !config_origin_allowed(c, "ftp://localhost") &&
		    !config_origin_allowed(c, "https://evil.example"),
		    "origin: null, foreign hosts, paths, bad ports, user info refused");
		config_free(c);
	} else
		CHECK(0, "origin: settings load");
	setenv("SANDBOX_HOST", "0.0.0.0", 1);
	if (load(&c, &e) == 0) {
		CHECK(!config_origin_allowed(c, "http://localhost:3000") &&
		    config_origin_allowed(c, "https://sb.example.com"),
		    "origin: loopback origins refused when the server is not on loopback");
		config_free(c);
	} else
		CHECK(0, "origin: settings load on 0.0.0.0");
	unsetenv("SANDBOX_HOST");
	unsetenv("SANDBOX_ALLOWED_ORIGINS");
	unsetenv("SANDBOX_PUBLIC_URL");

	/* The file's SANDBOX_PUBLIC_URL hidden: a wildcard host needs one. */
	setenv("SANDBOX_PUBLIC_URL", "", 1);
	setenv("SANDBOX_HOST", "0.0.0.0", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_PUBLIC_URL: required") != NULL,
	    "wildcard host without a public URL refused");
	setenv("SANDBOX_HOST", "::", 1);
	CHECK(load(&c, &e) == -1, "IPv6 wildcard host without a public URL refused");
	unsetenv("SANDBOX_HOST");
	unsetenv("SANDBOX_PUBLIC_URL");

	setenv("SANDBOX_ENV_FILE", "/nonexistent-cs/env", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "/nonexistent-cs/env does not exist") != NULL,
	    "a named settings file that is missing is named");
	setenv("SANDBOX_ENV_FILE", envpath, 1);

	CHECK(load(&c, &e) == 0 && !c->per_person &&
	    strcmp(c->scope, "shared") == 0 && c->max_sandboxes == 0,
	    "SANDBOX_SCOPE defaults to shared, no running cap");
	config_free(c);
	setenv("SANDBOX_SCOPE", "person", 1);
	setenv("SANDBOX_MAX_SANDBOXES", "3", 1);
	CHECK(load(&c, &e) == 0 && c->per_person && c->max_sandboxes == 3 &&
	    c->idle_stop == 1800, "SANDBOX_SCOPE=person with a cap");
	config_free(c);
	setenv("SANDBOX_SCOPE", "team", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_SCOPE: expected "
	    "shared or person") != NULL, "an unknown scope is refused");
	unsetenv("SANDBOX_SCOPE");
	unsetenv("SANDBOX_MAX_SANDBOXES");

	setenv("SANDBOX_CONTAINER", "bad/name", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_CONTAINER") != NULL,
	    "bad container name refused");
	unsetenv("SANDBOX_CONTAINER");

	setenv("DOCKER_HOST", "ssh://x", 1);
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "DOCKER_HOST") != NULL,
	    "unsupported DOCKER_HOST refused");
	unsetenv("DOCKER_HOST");

	write_env("SANDBOX_PORT=8891\n");
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_API_KEY") != NULL,
	    "missing API key names it");
	write_env("SANDBOX_API_KEY=short\n");
	CHECK(load(&c, &e) == -1 && strstr(e.msg, "SANDBOX_API_KEY") != NULL,
	    "short API key refused");
	write_env("SANDBOX_API_KEY=0123456789abcdef0123\nSANDBOX_HOST=127.0.0.1\nSANDBOX_PORT=9000\n");
	CHECK(load(&c, &e) == 0 && strcmp(c->public_url, "http://127.0.0.1:9000") == 0,
	    "public URL defaults to host and port");
	CHECK(c != NULL && config_host_is_loopback(c), "loopback host detected");
	config_free(c);
	write_env("SANDBOX_API_KEY=0123456789abcdef0123\nnot a setting line\n");
	CHECK(load(&c, &e) == -1 && strstr(e.msg, ":2:") != NULL, "syntax error names the line");

	unlink(envpath);
	return check_status();
}
