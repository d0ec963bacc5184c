/* test_preview.c: the heads on a preview's way, and preview ids. */
#include <string.h>

#include "base/config.h"
#include "links/previews.h"
#include "preview/phead.h"
#include "check.h"

static long
parse(const char *s, bool response, struct phead *h)
{
	const char *why;

	return phead_parse(s, strlen(s), response, h, &why);
}

/* The origin of a preview, for each configuration. */
static void
test_origins(void)
{
	struct config	c;
	struct error	e;
	char		o[PREVIEW_ORIGIN_MAX];
	const char	*id = "abcdefghijklmnopqrstuvwxyz";

	memset(&c, 0, sizeof(c));
	c.host = "127.0.0.1";
	c.port = 8891;
	c.public_origin = "http://127.0.0.1:4321";
	c.preview_url = "";
	CHECK(previews_origin(&c, id, o, sizeof(o), &e) == 0 &&
	    strcmp(o, "http://abcdefghijklmnopqrstuvwxyz.preview.localhost:4321")
	    == 0, "loopback: ID.preview.localhost on the public URL's port");
	CHECK(strcmp(previews_cookie(&c), "cs-preview") == 0,
	    "plain http: a plain cookie name");
	c.host = "0.0.0.0";
	c.public_origin = "https://sandbox.example.com";
	CHECK(previews_origin(&c, id, o, sizeof(o), &e) == -1 &&
	    strstr(e.msg, "SANDBOX_PREVIEW_URL") != NULL &&
	    strstr(e.msg, "wildcard DNS") != NULL &&
	    strstr(e.msg, "certificate") != NULL,
	    "public server without the setting: the error names it");
	c.preview_url = "https://*.preview.example.net";
	CHECK(previews_origin(&c, id, o, sizeof(o), &e) == 0 &&
	    strcmp(o, "https://abcdefghijklmnopqrstuvwxyz.preview.example.net")
	    == 0, "the wildcard setting");
	CHECK(previews_https(&c) && strcmp(previews_cookie(&c),
	    "__Host-cs-preview") == 0, "https: a __Host- cookie");
	c.preview_url = "https://*.preview.example.net:8443";
	CHECK(previews_origin(&c, id, o, sizeof(o), &e) == 0 &&
	    strcmp(o, "https://abcdefghijklmnopqrstuvwxyz.preview.example.net:8443")
	    == 0, "the wildcard setting with a port");
	c.preview_url = "https://preview.example.net";
	CHECK(previews_origin(&c, id, o, sizeof(o), &e) == -1 &&
	    strstr(e.msg, "*.") != NULL, "no wildcard: refused, saying why");
	c.preview_url = "https://*.preview.example.net/path";
	CHECK(previews_origin(&c, id, o, sizeof(o), &e) == -1,
	    "a path after the origin refused");
	c.preview_url = "ftp://*.preview.example.net";
	CHECK(previews_origin(&c, id, o, sizeof(o), &e) == -1,
	    "another scheme refused");
}

int
main(void)
{
	struct phead	 h;
	const char	*why, *s;
	char		 out[PHEAD_MAX + 512], id[PREVIEW_ID_LEN + 1], v[64];
	long		 n;

	s = "GET /a?b HTTP/1.1\r\nHost: x\r\nCookie: a=1; cs-preview=SIG; "
	    "b=2\r\nConnection: keep-alive, X-Gone\r\nX-Gone: 1\r\n"
	    "Keep-Alive: 5\r\n\r\nBODY";
	n = parse(s, false, &h);
	CHECK(n == (long)strlen(s) - 4, "request head length");
	CHECK(h.nfield == 5, "five fields");
	CHECK(phead_cookie(&h, "cs-preview", v, sizeof(v)) == 3 &&
	    strcmp(v, "SIG") == 0, "the preview's cookie read");
	n = phead_request(&h, NULL, "cs-preview", out, sizeof(out));
	CHECK(n > 0, "request rewritten");
	out[n > 0 ? n : 0] = '\0';
	CHECK(strstr(out, "Cookie: a=1; b=2\r\n") != NULL,
	    "the preview's cookie taken out");
	CHECK(strstr(out, "X-Gone") == NULL && strstr(out, "Keep-Alive") ==
	    NULL, "hop-by-hop fields dropped");
	CHECK(strstr(out, "Connection: close\r\n\r\n") != NULL, "one request");
	CHECK(strncmp(out, "GET /a?b HTTP/1.1\r\n", 19) == 0, "request line");

	CHECK(parse("GET / HTTP/1.1\r\nHost: x\r\n", false, &h) == 0,
	    "a partial head needs more");
	CHECK(parse("GET / HTTP/1.1\r\n Folded: x\r\n\r\n", false, &h) == -1,
	    "folding refused");
	CHECK(parse("GET / HTTP/1.1\r\nBad Name: x\r\n\r\n", false, &h) == -1,
	    "bad name refused");
	CHECK(parse("GET / HTTP/1.1\r\nA: x\001y\r\n\r\n", false, &h) == -1,
	    "control byte refused");
	CHECK(parse("GET / HTTP/2\r\n\r\n", false, &h) == -1, "HTTP/2 refused");

	s = "HTTP/1.1 200 OK\r\nSet-Cookie: a=1; Domain=.example.net; Path=/\r\n"
	    "Set-Cookie: cs-preview=stolen; Path=/\r\nConnection: keep-alive\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n";
	CHECK(parse(s, true, &h) > 0 && h.status == 200, "answer parsed");
	n = phead_response(&h, "cs-preview", out, sizeof(out), &why);
	CHECK(n > 0, "answer rewritten");
	out[n > 0 ? n : 0] = '\0';
	CHECK(strstr(out, "Set-Cookie: a=1; Path=/\r\n") != NULL,
	    "Domain taken off");
	CHECK(strstr(out, "stolen") == NULL, "the preview's cookie not set by the app");
	CHECK(strstr(out, "Transfer-Encoding: chunked\r\n") != NULL,
	    "chunked kept with its body");
	CHECK(strstr(out, "keep-alive") == NULL &&
	    strstr(out, "Connection: close\r\n") != NULL, "one answer");

	CHECK(parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1"
	    "\r\n\r\n", true, &h) > 0 && phead_response(&h, "c", out,
	    sizeof(out), &why) == -1, "two lengths refused");
	CHECK(parse("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding:"
	    " chunked\r\n\r\n", true, &h) > 0 && phead_response(&h, "c", out,
	    sizeof(out), &why) == -1, "a length and chunked refused");
	CHECK(parse("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", true,
	    &h) > 0 && phead_response(&h, "c", out, sizeof(out), &why) == -1,
	    "a negative length refused");
	CHECK(parse("HTTP/1.1 20 OK\r\n\r\n", true, &h) == -1, "short status");
	CHECK(parse("HTTP/1.1 101 Switching\r\nUpgrade: websocket\r\n"
	    "Connection: upgrade\r\n\r\n", true, &h) > 0 && (n = phead_response(&h,
	    "c", out, sizeof(out), &why)) > 0, "101 passed");
	out[n > 0 ? n : 0] = '\0';
	CHECK(strstr(out, "Connection: Upgrade\r\nUpgrade: websocket\r\n") !=
	    NULL, "101 keeps its upgrade");

	memset(out, 'a', PHEAD_MAX);
	CHECK(phead_parse(out, PHEAD_MAX, true, &h, &why) == -1,
	    "a head of 16 KiB without its end refused");

	s = "abcdefghijklmnopqrstuvwxyz.preview.localhost:8891";
	CHECK(previews_host_id(s, strlen(s), id) == 0 &&
	    strcmp(id, "abcdefghijklmnopqrstuvwxyz") == 0, "host id");
	s = "abcdefghijklmnopqrstuvwxy1.preview.localhost";
	CHECK(previews_host_id(s, strlen(s), id) == -1, "base32 only");
	s = "127.0.0.1:8891";
	CHECK(previews_host_id(s, strlen(s), id) == -1, "the server's host");
	CHECK(previews_path_ok("/") && previews_path_ok("/a/b?c=d%20"),
	    "paths");
	CHECK(!previews_path_ok("a") && !previews_path_ok("//evil.example") &&
	    !previews_path_ok("/a b") && !previews_path_ok("/a#b"),
	    "bad paths refused");
	test_origins();
	return check_status();
}
