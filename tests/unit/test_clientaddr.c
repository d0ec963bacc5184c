/*
 * test_clientaddr.c: the client address through trusted proxies, the /64
 * throttle key, trusted lists, the URL splitter's loopback and host-list
 * checks, and cookies.
 */
#include <stdio.h>
#include <string.h>

#include "base/clientaddr.h"
#include "base/form.h"
#include "base/url.h"
#include "check.h"

static const char *
resolve(const char *peer, const char *fwd, const char *trusted)
{
	static char out[CLIENTADDR_MAX];

	if (clientaddr_resolve(peer, fwd, trusted, out) == -1)
		return "(bad peer)";
	return out;
}

static const char *
key(const char *addr)
{
	static char out[CLIENTADDR_MAX];

	clientaddr_key(addr, out);
	return out;
}

static bool
in_list(const char *uri, const char *list)
{
	struct url u;

	return url_split(uri, &u) == 0 && url_host_in_list(&u, list);
}

static bool
loopback(const char *uri)
{
	struct url u;

	return url_split(uri, &u) == 0 && url_host_is_loopback(&u);
}

int
main(void)
{
	char why[128], c[64];

	/* Without trusted proxies the header is ignored. */
	CHECK(strcmp(resolve("127.0.0.1", "203.0.113.5", ""), "127.0.0.1") == 0,
	    "untrusted peer: forwarding header ignored");
	CHECK(strcmp(resolve("198.51.100.1", "203.0.113.5", "127.0.0.1"), "198.51.100.1") == 0,
	    "peer not in the trusted list: header ignored");
	/* Trusted: the nearest untrusted address from the right. */
	CHECK(strcmp(resolve("127.0.0.1", "203.0.113.5", "127.0.0.1"), "203.0.113.5") == 0,
	    "trusted peer: the forwarded address");
	CHECK(strcmp(resolve("127.0.0.1", "6.6.6.6, 203.0.113.5", "127.0.0.1"), "203.0.113.5") == 0,
	    "a spoofed entry on the left is not used");
	CHECK(strcmp(resolve("127.0.0.1", "203.0.113.5, 10.1.2.3", "127.0.0.1 10.0.0.0/8"), "203.0.113.5") == 0,
	    "a chain of trusted proxies is walked");
	CHECK(strcmp(resolve("127.0.0.1", "203.0.113.5:4711", "127.0.0.1"), "203.0.113.5") == 0,
	    "IPv4 with a port");
	CHECK(strcmp(resolve("::1", "[2001:db8::7]:443", "::1"), "2001:db8::7") == 0,
	    "bracketed IPv6 with a port");
	CHECK(strcmp(resolve("127.0.0.1", "garbage", "127.0.0.1"), "127.0.0.1") == 0,
	    "a malformed entry stops the walk at the last good address");
	CHECK(strcmp(resolve("127.0.0.1", "", "127.0.0.1"), "127.0.0.1") == 0,
	    "an empty header: the peer");
	CHECK(strcmp(resolve("::ffff:127.0.0.1", "192.0.2.1", "127.0.0.1"), "192.0.2.1") == 0,
	    "an IPv4-mapped peer matches its IPv4 entry");
	CHECK(strcmp(resolve("not-an-address", NULL, ""), "(bad peer)") == 0,
	    "a peer that is not an address is refused");

	CHECK(strcmp(key("203.0.113.5"), "203.0.113.5") == 0, "IPv4 key: the address");
	CHECK(strcmp(key("2001:db8:1:2:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64") == 0,
	    "IPv6 key: its /64");
	snprintf(c, sizeof(c), "%s", key("2001:db8:1:2::1"));
	CHECK(strcmp(c, key("2001:db8:1:2:ffff::9")) == 0, "one /64, one key");
	CHECK(strcmp(c, key("2001:db8:1:3::1")) != 0, "another /64, another key");
	CHECK(strcmp(key("::ffff:192.0.2.9"), "192.0.2.9") == 0, "IPv4-mapped key: the IPv4 address");

	CHECK(clientaddr_in_list("10.200.3.4", "127.0.0.1, 10.0.0.0/8"), "CIDR match");
	CHECK(!clientaddr_in_list("11.0.0.1", "10.0.0.0/8"), "CIDR miss");
	CHECK(clientaddr_in_list("fd00::5", "fd00::/8"), "IPv6 CIDR match");
	CHECK(clientaddr_list_valid("127.0.0.1 ::1 10.0.0.0/8", why, sizeof(why)), "valid list");
	CHECK(!clientaddr_list_valid("127.0.0.1 localhost", why, sizeof(why)) &&
	    strstr(why, "localhost") != NULL, "invalid list names the bad entry");
	CHECK(!clientaddr_list_valid("10.0.0.0/33", why, sizeof(why)), "prefix too long");

	CHECK(loopback("http://127.0.0.1:5000/cb") && loopback("http://[::1]/") &&
	    loopback("http://LOCALHOST/x"), "loopback hosts");
	CHECK(!loopback("http://127.0.0.1.evil.example/") && !loopback("https://claude.ai/"),
	    "not loopback");
	CHECK(in_list("https://claude.ai/api/mcp/auth_callback", "claude.ai claude.com"),
	    "known redirect host");
	CHECK(!in_list("https://claude.ai.evil.example/cb", "claude.ai claude.com") &&
	    !in_list("https://evilclaude.ai/cb", "claude.ai"), "look-alike hosts are unknown");

	CHECK(form_cookie("a=1; cs_x=tok; b=2", "cs_x", c, sizeof(c)) == 0 &&
	    strcmp(c, "tok") == 0, "cookie found");
	CHECK(form_cookie("xcs_x=tok", "cs_x", c, sizeof(c)) == -1, "cookie name must match whole");
	CHECK(form_cookie("cs_x=0123456789", "cs_x", c, 4) == -1, "cookie too long for the buffer");
	return check_status();
}
