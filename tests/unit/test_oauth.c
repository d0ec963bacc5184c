/*
 * test_oauth.c: the pure parts of the OAuth server: redirect URI validation
 * and matching, PKCE S256, Basic client authentication, Client ID Metadata
 * Document URLs, addresses and documents; and the sign-in throttle, on a
 * real SQLite file.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/crypto.h"
#include "base/js.h"
#include "check.h"
#include "oauth/cimd.h"
#include "oauth/extern.h"
#include "oauth/oauth.h"
#include "store/db.h"
#include "store/db_oauth.h"

static bool
valid(const char *uri)
{
	char why[256];

	return oauth_redirect_valid(uri, why, sizeof(why));
}

static bool
public4(const char *s)
{
	struct in_addr a;

	return inet_pton(AF_INET, s, &a) == 1 && cimd_addr_public(AF_INET, &a);
}

static bool
public6(const char *s)
{
	struct in6_addr a;

	return inet_pton(AF_INET6, s, &a) == 1 && cimd_addr_public(AF_INET6, &a);
}

static void
redirects(void)
{
	char long_uri[1100], origin[256], host[256];

	CHECK(valid("https://claude.ai/api/mcp/auth_callback"), "claude.ai callback valid");
	CHECK(valid("https://claude.com/api/mcp/auth_callback"), "claude.com callback valid");
	CHECK(valid("http://localhost:33418/callback"), "http localhost valid");
	CHECK(valid("http://127.0.0.1:8080/cb?x=1"), "http 127.0.0.1 with query valid");
	CHECK(valid("http://[::1]:9/cb"), "http [::1] valid");
	CHECK(valid("https://example.com:8443/a%20b"), "https with port and escape valid");
	CHECK(!valid("http://example.com/cb"), "http on a public host refused");
	CHECK(!valid("http://localhost.evil.com/cb"), "http localhost-lookalike refused");
	CHECK(!valid("http://127.0.0.1.evil.com/cb"), "http 127-lookalike refused");
	CHECK(!valid("https://claude.ai/cb#frag"), "fragment refused");
	CHECK(!valid("javascript:alert(1)"), "javascript: refused");
	CHECK(!valid("data:text/html,hi"), "data: refused");
	CHECK(!valid("ftp://example.com/"), "ftp: refused");
	CHECK(!valid("com.example.app:/callback"), "private-use scheme refused");
	CHECK(!valid("https://user:pw@example.com/cb"), "user info refused");
	CHECK(!valid("https:///cb"), "empty host refused");
	CHECK(!valid("https://exa mple.com/"), "space refused");
	CHECK(!valid("https://example.com/<script>"), "angle brackets refused");
	CHECK(!valid("https://example.com:99999/"), "port out of range refused");
	CHECK(!valid("https://example.com:/"), "empty port refused");
	CHECK(!valid("https://example.com/%zz"), "bad escape refused");
	CHECK(!valid("HTTPS://example.com/"), "upper-case scheme refused");
	CHECK(!valid(""), "empty refused");
	memset(long_uri, 'a', sizeof(long_uri) - 1);
	memcpy(long_uri, "https://x.com/", 14);
	long_uri[sizeof(long_uri) - 1] = '\0';
	CHECK(!valid(long_uri), "over-long refused");

	CHECK(oauth_redirect_match("https://claude.ai/api/mcp/auth_callback",
	    "https://claude.ai/api/mcp/auth_callback"), "exact match");
	CHECK(!oauth_redirect_match("https://claude.ai/api/mcp/auth_callback",
	    "https://claude.ai/api/mcp/auth_callback/"), "trailing slash differs");
	CHECK(!oauth_redirect_match("https://claude.ai/cb", "https://claude.ai:443/cb"),
	    "https port is not ignored");
	CHECK(!oauth_redirect_match("https://claude.ai/cb", "https://CLAUDE.ai/cb"),
	    "https host compared exactly");
	CHECK(oauth_redirect_match("http://localhost:1234/callback",
	    "http://localhost:5678/callback"), "loopback port ignored (RFC 8252)");
	CHECK(oauth_redirect_match("http://127.0.0.1/callback",
	    "http://127.0.0.1:5678/callback"), "loopback port added");
	CHECK(oauth_redirect_match("http://[::1]:1/cb", "http://[::1]:2/cb"),
	    "IPv6 loopback port ignored");
	CHECK(!oauth_redirect_match("http://localhost:1234/callback",
	    "http://localhost:1234/other"), "loopback path compared");
	CHECK(!oauth_redirect_match("http://localhost:1234/callback",
	    "http://127.0.0.1:1234/callback"), "loopback host compared");
	CHECK(!oauth_redirect_match("http://localhost:1/cb?a=1",
	    "http://localhost:1/cb?a=2"), "loopback query compared");
	CHECK(!oauth_redirect_match("http://localhost:1/cb",
	    "https://localhost:1/cb"), "scheme compared");

	CHECK(oauth_redirect_origin("https://claude.ai/api/x?y=1", origin,
	    sizeof(origin), host, sizeof(host)) == 0 &&
	    strcmp(origin, "https://claude.ai") == 0 && strcmp(host, "claude.ai") == 0,
	    "origin and host of an https URI");
	CHECK(oauth_redirect_origin("http://[::1]:8080/cb", origin, sizeof(origin),
	    host, sizeof(host)) == 0 && strcmp(origin, "http://[::1]:8080") == 0 &&
	    strcmp(host, "[::1]:8080") == 0, "origin and host of an IPv6 URI");
}

static void
pkce(void)
{
	/* RFC 7636 Appendix B. */
	const char *v = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";	/* 43 */
	const char *c = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
	char longv[130];

	CHECK(oauth_pkce_s256(v, c), "RFC 7636 Appendix B vector verifies");
	CHECK(!oauth_pkce_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXl", c),
	    "another verifier fails");
	CHECK(!oauth_pkce_s256(c, c), "plain (verifier = challenge) fails");
	CHECK(!oauth_pkce_s256("short", c), "short verifier refused");
	CHECK(!oauth_pkce_s256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEj k", c),
	    "verifier with a space refused");
	memset(longv, 'a', 129);
	longv[129] = '\0';
	CHECK(!oauth_pkce_s256(longv, c), "129-character verifier refused");
	CHECK(oauth_pkce_challenge_valid(c), "challenge valid");
	CHECK(!oauth_pkce_challenge_valid("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-c"),
	    "42-character challenge refused");
	CHECK(!oauth_pkce_challenge_valid("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw+cM"),
	    "challenge with '+' refused");
}

static void
basic(void)
{
	char id[64], secret[64];

	/* "client:secret" */
	CHECK(oauth_basic_parse("Basic Y2xpZW50OnNlY3JldA==", id, sizeof(id),
	    secret, sizeof(secret)) == 0 && strcmp(id, "client") == 0 &&
	    strcmp(secret, "secret") == 0, "Basic parsed");
	CHECK(oauth_basic_parse("basic Y2xpZW50OnNlY3JldA==", id, sizeof(id),
	    secret, sizeof(secret)) == 0, "scheme is case-insensitive");
	/* "a%3Ab:s%2Bc+d" -> id "a:b", secret "s+c d" (RFC 6749 §2.3.1) */
	CHECK(oauth_basic_parse("Basic YSUzQWI6cyUyQmMrZA==", id, sizeof(id),
	    secret, sizeof(secret)) == 0 && strcmp(id, "a:b") == 0 &&
	    strcmp(secret, "s+c d") == 0, "parts are form-urldecoded");
	/* "client:" -> empty secret allowed by parsing, refused by comparison */
	CHECK(oauth_basic_parse("Basic Y2xpZW50Og==", id, sizeof(id), secret,
	    sizeof(secret)) == 0 && secret[0] == '\0', "empty secret parsed");
	/* ":secret" */
	CHECK(oauth_basic_parse("Basic OnNlY3JldA==", id, sizeof(id), secret,
	    sizeof(secret)) == -1, "empty client id refused");
	/* "nocolon" */
	CHECK(oauth_basic_parse("Basic bm9jb2xvbg==", id, sizeof(id), secret,
	    sizeof(secret)) == -1, "no colon refused");
	CHECK(oauth_basic_parse("Basic !!!", id, sizeof(id), secret,
	    sizeof(secret)) == -1, "bad base64 refused");
	CHECK(oauth_basic_parse("Bearer abc", id, sizeof(id), secret,
	    sizeof(secret)) == -1, "other scheme refused");
	/* "a%00b:c" */
	CHECK(oauth_basic_parse("Basic YSUwMGI6Yw==", id, sizeof(id), secret,
	    sizeof(secret)) == -1, "encoded NUL refused");
	CHECK(oauth_basic_parse("Basic Y2xpZW50OnNlY3JldA==", id, 4, secret,
	    sizeof(secret)) == -1, "too long for the buffer refused");
}

static void
cimd(void)
{
	struct json_object	*uris, *meta;
	struct error		 err;
	char			*name;
	bool			 refresh;
	const char		*url = "https://app.example.com/oauth/client.json";
	const char		*good = "{\"client_id\":\"https://app.example.com/oauth/client.json\","
	    "\"client_name\":\"App\",\"redirect_uris\":[\"http://127.0.0.1/cb\"],"
	    "\"grant_types\":[\"authorization_code\",\"refresh_token\"],"
	    "\"token_endpoint_auth_method\":\"none\"}";
	const char		*other_id = "{\"client_id\":\"https://evil.example/c.json\","
	    "\"redirect_uris\":[\"https://evil.example/cb\"]}";
	const char		*secret = "{\"client_id\":\"https://app.example.com/oauth/client.json\","
	    "\"redirect_uris\":[\"https://app.example.com/cb\"],"
	    "\"token_endpoint_auth_method\":\"client_secret_post\"}";
	const char		*bad_uri = "{\"client_id\":\"https://app.example.com/oauth/client.json\","
	    "\"redirect_uris\":[\"javascript:alert(1)\"]}";

	CHECK(cimd_is_url(url), "CIMD URL recognised");
	CHECK(!cimd_is_url("csc_abcdef"), "registered id is not a CIMD URL");
	CHECK(!cimd_is_url("http://app.example.com/c.json"), "http CIMD URL refused");
	CHECK(!cimd_is_url("https://app.example.com"), "CIMD URL without path refused");
	CHECK(!cimd_is_url("https://app.example.com/"), "CIMD URL with bare / refused");
	CHECK(!cimd_is_url("https://app.example.com/a/../c.json"), "dot segments refused");
	CHECK(!cimd_is_url("https://app.example.com/c.json#x"), "CIMD fragment refused");
	CHECK(!cimd_is_url("https://u@app.example.com/c.json"), "CIMD user info refused");

	CHECK(cimd_validate(url, good, strlen(good), &name, &uris, &meta,
	    &refresh, &err) == 0 && name != NULL && strcmp(name, "App") == 0 &&
	    refresh, "valid document accepted");
	free(name);
	json_object_put(uris);
	json_object_put(meta);
	CHECK(cimd_validate(url, other_id, strlen(other_id), &name, &uris, &meta,
	    &refresh, &err) == -1, "client_id not the URL refused");
	CHECK(cimd_validate(url, secret, strlen(secret), &name, &uris, &meta,
	    &refresh, &err) == -1, "secret-based auth refused");
	CHECK(cimd_validate(url, bad_uri, strlen(bad_uri), &name, &uris, &meta,
	    &refresh, &err) == -1, "bad redirect URI refused");
	CHECK(cimd_validate(url, "[1]", 3, &name, &uris, &meta, &refresh,
	    &err) == -1, "non-object refused");

	CHECK(public4("93.184.216.34"), "public IPv4 allowed");
	CHECK(!public4("127.0.0.1"), "loopback refused");
	CHECK(!public4("10.1.2.3"), "10/8 refused");
	CHECK(!public4("172.16.0.1") && !public4("172.31.255.255"), "172.16/12 refused");
	CHECK(public4("172.32.0.1"), "172.32 allowed");
	CHECK(!public4("192.168.1.1"), "192.168/16 refused");
	CHECK(!public4("169.254.169.254"), "link-local (metadata service) refused");
	CHECK(!public4("100.64.0.1"), "CGNAT refused");
	CHECK(!public4("0.0.0.0"), "0/8 refused");
	CHECK(!public4("224.0.0.1") && !public4("255.255.255.255"), "multicast and broadcast refused");
	CHECK(public6("2606:4700::1111"), "public IPv6 allowed");
	CHECK(!public6("::1") && !public6("::"), "IPv6 loopback and unspecified refused");
	CHECK(!public6("fe80::1") && !public6("fd00::1"), "link-local and ULA refused");
	CHECK(!public6("::ffff:127.0.0.1") && !public6("::ffff:10.0.0.1"), "mapped private IPv4 refused");
	CHECK(public6("::ffff:93.184.216.34"), "mapped public IPv4 allowed");
	CHECK(!public6("2001:db8::1"), "documentation IPv6 refused");
	CHECK(!public6("ff02::1"), "IPv6 multicast refused");
}

/* /register's bodies as the endpoint checks them (oauth_register_check). */
static void
registration(void)
{
	struct json_object	*meta, *uris;
	const char		*error;
	char			 why[256];
	bool			 refresh;
	const char		*ok = "{\"redirect_uris\":[\"http://127.0.0.1:9/cb\"],"
	    "\"grant_types\":[\"authorization_code\",\"refresh_token\"],"
	    "\"client_name\":\"c\"}";

	CHECK(oauth_register_check(ok, strlen(ok), &meta, &uris, &refresh,
	    &error, why, sizeof(why)) == 0 && refresh &&
	    strcmp(js_str(meta, "token_endpoint_auth_method"),
	    "client_secret_basic") == 0 && json_object_array_length(uris) == 1,
	    "register: a good body, the default auth method, refresh kept");
	json_object_put(meta);
	json_object_put(uris);
#define REFUSED(body, code, text, name)					\
	CHECK(oauth_register_check(body, strlen(body), &meta, &uris,	\
	    &refresh, &error, why, sizeof(why)) == -1 && meta == NULL &&	\
	    uris == NULL && strcmp(error, code) == 0 &&			\
	    strstr(why, text) != NULL, name)
	REFUSED("{\"redirect_uris\":[\"javascript:x\"]}", "invalid_redirect_uri", "",
	    "register: a bad redirect URI is invalid_redirect_uri");
	REFUSED("[]", "invalid_client_metadata", "JSON object",
	    "register: an array is not a body");
	REFUSED("{\"redirect_uris\":[\"http://127.0.0.1/cb\"],\"application_type\":\"x\"}",
	    "invalid_client_metadata", "native or web",
	    "register: application_type checked");
	REFUSED("{\"redirect_uris\":[\"http://127.0.0.1/cb\"],\"token_endpoint_auth_method\":1}",
	    "invalid_client_metadata", "must be a string",
	    "register: token_endpoint_auth_method must be a string");
	REFUSED("{", "invalid_client_metadata", "",
	    "register: malformed JSON refused");
#undef REFUSED
}

/*
 * The throttle keeps milliseconds: a wrong key at 10.990 s and a retry at
 * 11.010 s are 20 ms apart, so the retry waits; the second wrong key's
 * wait is two full seconds.
 */
static void
throttle(void)
{
	char		 dbpath[] = "/tmp/test_oauth.XXXXXX";
	struct db	*db = NULL;
	struct db_throttle th;
	struct error	 err;
	long long	 wait, ms;
	int		 fd;

	if ((fd = mkstemp(dbpath)) == -1) {
		CHECK(0, "temporary database");
		return;
	}
	close(fd);
	if (db_open(dbpath, &db, &err) == -1) {
		CHECK(0, err.msg);
		goto out;
	}
	/* Just before a second boundary. */
	ms = clock_wall_ms() % 1000;
	usleep((useconds_t)((ms <= 985 ? 985 - ms : 1985 - ms) * 1000));
	CHECK(oauth_throttle_take(db, "192.0.2.1", &wait) ==
	    OAUTH_THROTTLE_TRY && wait == 1, "a first try is let through; "
	    "a wrong key costs 1 s");
	usleep(30 * 1000);
	CHECK(oauth_throttle_take(db, "192.0.2.1", &wait) ==
	    OAUTH_THROTTLE_WAIT && wait == 1, "30 ms later, past the second "
	    "boundary, it still waits 1 s");
	CHECK(oauth_throttle_take(db, "192.0.2.2", &wait) ==
	    OAUTH_THROTTLE_TRY, "another address is not held up");
	usleep(1000 * 1000);
	CHECK(oauth_throttle_take(db, "192.0.2.1", &wait) ==
	    OAUTH_THROTTLE_TRY && wait == 2, "after the wait: a try; the "
	    "next wrong key costs 2 s");
	CHECK(oauth_throttle_take(db, "192.0.2.1", &wait) ==
	    OAUTH_THROTTLE_WAIT && wait == 2, "the wait is shown rounded up");
	CHECK(db_throttle_get(db, "192.0.2.1", &th) == LOOKUP_FOUND &&
	    th.failures == 2 && th.blocked_until - th.last_failure == 2000,
	    "the row keeps milliseconds");
	CHECK(db_exec(db, STMT_THROTTLE_CLEAR, "t", "192.0.2.1") == 1 &&
	    oauth_throttle_take(db, "192.0.2.1", &wait) == OAUTH_THROTTLE_TRY &&
	    wait == 1, "a right key clears the count");
out:
	db_close(db);
	unlink(dbpath);
}

int
main(void)
{
	redirects();
	pkce();
	basic();
	cimd();
	registration();
	throttle();
	return check_status();
}
