/*
 * test_upload.c: the parsers and writers of /up: multipart/form-data fed
 * in every split, upload names, the tar headers the archive upload sends
 * (read back with tar_extract), and the upload link URL.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine/tar.h"
#include "links/extern.h"
#include "links/multipart.h"
#include "links/uplinks.h"
#include "links/upload.h"
#include "tools/image.h"

struct seen {
	char	log[2048];
	size_t	len;
};

static void
put(struct seen *s, const char *p, size_t n)
{
	if (s->len + n < sizeof(s->log)) {
		memcpy(s->log + s->len, p, n);
		s->len += n;
		s->log[s->len] = '\0';
	}
}

static int
on_begin(void *arg, const struct multipart_part *p)
{
	put(arg, "[", 1);
	put(arg, p->name, strlen(p->name));
	put(arg, "|", 1);
	put(arg, p->filename, strlen(p->filename));
	put(arg, "]", 1);
	return 0;
}

static int
on_data(void *arg, const char *buf, size_t len)
{
	put(arg, buf, len);
	return 0;
}

static int
on_end(void *arg)
{
	put(arg, "<end>", 5);
	return 0;
}

/* Parse body fed in pieces of step bytes; the log of events, or NULL. */
static enum multipart_rc
parse(const char *boundary, const char *body, size_t len, size_t step,
    struct seen *s)
{
	struct multipart_cb	 cb = { on_begin, on_data, on_end, s };
	struct multipart	*m = multipart_new(boundary, &cb);
	struct error		 e;
	enum multipart_rc	 rc = MULTIPART_MORE;
	size_t			 i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < len && rc == MULTIPART_MORE; i += step)
		rc = multipart_feed(m, body + i, len - i < step ? len - i : step, &e);
	if (rc == MULTIPART_MORE)
		rc = multipart_end(m, &e);
	multipart_free(m);
	return rc;
}

static void
test_multipart(void)
{
	static const char body[] =
	    "preamble\r\n"
	    "--XyZ\r\n"
	    "Content-Disposition: form-data; name=\"files\"; filename=\"a \\\"q\\\".txt\"\r\n"
	    "Content-Type: text/plain\r\n\r\n"
	    "line one\r\n--XyNot a delimiter\r\n-\r\r\n--X\r\n"
	    "--XyZ  \r\n"
	    "Content-Disposition: form-data; name=note\r\n\r\n"
	    "hi\r\n"
	    "--XyZ--\r\nepilogue";
	static const char want[] =
	    "[files|a \"q\".txt]line one\r\n--XyNot a delimiter\r\n-\r\r\n--X<end>"
	    "[note|]hi<end>";
	char		 b[MULTIPART_BOUNDARY_MAX + 1];
	struct seen	 s;
	size_t		 step;
	int		 all = 1;

	for (step = 1; step <= sizeof(body); step++) {
		if (parse("XyZ", body, sizeof(body) - 1, step, &s) != MULTIPART_DONE ||
		    strcmp(s.log, want) != 0)
			all = 0;
	}
	CHECK(all, "multipart: the same parts and data for every piece size");
	CHECK(parse("XyZ", body, sizeof(body) - 20, 7, &s) == MULTIPART_ERROR,
	    "multipart: a body cut before the closing delimiter is an error");
	CHECK(parse("XyZ", "--XyZ\r\nX-No: disposition\r\n\r\nx\r\n--XyZ--", 38,
	    5, &s) == MULTIPART_ERROR, "multipart: a part without a disposition");
	CHECK(multipart_boundary("multipart/form-data; boundary=----WebKitFormBoundaryab12", b) == 0 &&
	    strcmp(b, "----WebKitFormBoundaryab12") == 0, "boundary: token");
	CHECK(multipart_boundary("Multipart/Form-Data; charset=utf-8; boundary=\"a b\"", b) == 0 &&
	    strcmp(b, "a b") == 0, "boundary: quoted, after another parameter");
	CHECK(multipart_boundary("multipart/mixed; boundary=x", b) == -1, "boundary: other type refused");
	CHECK(multipart_boundary("multipart/form-data", b) == -1, "boundary: missing refused");
	CHECK(multipart_boundary("multipart/form-data; boundary=\"\"", b) == -1, "boundary: empty refused");
	CHECK(multipart_boundary("multipart/form-data; boundary=a\rb", b) == -1, "boundary: CR refused");
}

static void
test_names(void)
{
	char		 out[UPLOAD_NAME_MAX + 1], big[600];
	struct error	 e;
	size_t		 i;
	static const char *const bad_escapes[] = {
		"%zz", "a%", "a%4", "%4g.txt", "%%41", "x%G0",
	};
	int		 refused = 0;

	upload_name("../../etc/passwd", 16, false, out, NULL);
	CHECK(strcmp(out, "_._.._etc_passwd") == 0, "name: slashes and a leading dot");
	upload_name("a\001b\nc", 5, false, out, NULL);
	CHECK(strcmp(out, "a_b_c") == 0, "name: control characters and newline");
	CHECK(upload_name("a%0Ab%2Fc%5C..%25", 17, true, out, NULL) == 9 &&
	    strcmp(out, "a_b_c_..%") == 0, "name: percent-decoded, then sanitised");
	CHECK(upload_name("a%2fb", 5, false, out, NULL) == 5 &&
	    strcmp(out, "a%2fb") == 0, "name: a form's name is not percent-decoded");
	upload_name("", 0, true, out, NULL);
	CHECK(strcmp(out, "upload") == 0, "name: empty");
	upload_name("..", 2, false, out, NULL);
	CHECK(strcmp(out, "_.") == 0, "name: never ..");
	upload_name("\xc3\xa9t\xc3\xa9\xff\xc3", 7, false, out, NULL);
	CHECK(strcmp(out, "\xc3\xa9t\xc3\xa9__") == 0, "name: UTF-8 kept, bad bytes replaced");
	memset(big, 'x', sizeof(big));
	big[197] = '\xe2', big[198] = '\x82', big[199] = '\xac';	/* a 3-byte character */
	CHECK(upload_name(big, sizeof(big), false, out, NULL) == UPLOAD_NAME_MAX &&
	    strlen(out) == UPLOAD_NAME_MAX, "name: cut to the maximum");
	memset(big, 'x', sizeof(big));
	big[198] = '\xe2', big[199] = '\x82', big[200] = '\xac';
	CHECK(upload_name(big, sizeof(big), false, out, NULL) == 198,
	    "name: cut on a character boundary");

	/* Strict: a bad escape or a NUL refuses the name (400). */
	for (i = 0; i < sizeof(bad_escapes) / sizeof(bad_escapes[0]); i++) {
		error_clear(&e);
		if (upload_name(bad_escapes[i], strlen(bad_escapes[i]), true, out,
		    &e) == -1 && e.kind == ERR_INVALID &&
		    strstr(e.msg, "two hexadecimal digits") != NULL)
			refused++;
	}
	CHECK(refused == (int)i, "name: malformed percent escapes refused with 400");
	error_clear(&e);
	CHECK(upload_name("a%00b", 5, true, out, &e) == -1 && e.kind == ERR_INVALID &&
	    strstr(e.msg, "NUL byte (%00)") != NULL, "name: %00 refused with 400");
	error_clear(&e);
	CHECK(upload_name("a\0b", 3, false, out, &e) == -1 && e.kind == ERR_INVALID &&
	    strstr(e.msg, "NUL byte") != NULL, "name: a NUL byte refused with 400");
	memset(big, 'x', sizeof(big));
	big[590] = '%', big[591] = 'z';
	CHECK(upload_name(big, sizeof(big), true, out, NULL) == -1,
	    "name: a bad escape past the length cut is still refused");
	big[590] = '%', big[591] = '4', big[592] = '1';
	CHECK(upload_name(big, sizeof(big), true, out, NULL) == UPLOAD_NAME_MAX,
	    "name: a long well-formed name is cut");
}

struct got {
	char			name[600];
	unsigned long long	size;
	char			data[16];
	size_t			dlen;
};

static int
got_begin(void *arg, const struct tar_entry *e)
{
	struct got *g = arg;

	snprintf(g->name, sizeof(g->name), "%s", e->name);
	g->size = e->size;
	return 0;
}

static int
got_data(void *arg, const void *buf, size_t len)
{
	struct got *g = arg;

	if (g->dlen + len <= sizeof(g->data)) {
		memcpy(g->data + g->dlen, buf, len);
		g->dlen += len;
	}
	return 0;
}

static void
test_tar_write(void)
{
	char			 stream[4 * TAR_HEADER_MAX + 4096], name[400];
	struct tar_sink		 sink;
	struct tar_extract	*x;
	struct got		 g;
	struct error		 e;
	long			 h1, h2;
	size_t			 o;

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	memcpy(name, ".cs-up-abc/", 11);
	memset(stream, 0, sizeof(stream));
	h1 = tar_header_write(stream, ".cs-up-abc/", '5', 0, 1700000000, 0700);
	h2 = tar_header_write(stream + h1, name, '0', 5, 1700000000, 0644);
	CHECK(h1 == TAR_BLOCK && h2 == 3 * TAR_BLOCK, "tar: a long name gets a pax header");
	o = (size_t)(h1 + h2);
	memcpy(stream + o, "hello", 5);
	o += 5 + tar_padding(5) + 2 * TAR_BLOCK;
	memset(&g, 0, sizeof(g));
	sink.begin = got_begin;
	sink.data = got_data;
	sink.arg = &g;
	x = tar_extract_new(name, &sink);
	CHECK(x != NULL && tar_extract_feed(x, stream, o, &e) == TAR_DONE &&
	    strcmp(g.name, name) == 0 && g.size == 5 && g.dlen == 5 &&
	    memcmp(g.data, "hello", 5) == 0, "tar: written entries read back");
	tar_extract_free(x);
	CHECK(tar_header_write(stream, "a\nb", '0', 1, 0, 0644) == -1, "tar: newline refused");
	CHECK(tar_header_write(stream, "", '0', 1, 0, 0644) == -1, "tar: empty name refused");
	CHECK(tar_header_write(stream, "big", '0', 1ULL << 40, 0, 0644) == TAR_BLOCK &&
	    (unsigned char)stream[124] == 0x80, "tar: 1 TiB in base-256");
	CHECK(tar_padding(512) == 0 && tar_padding(1) == 511, "tar: padding");
}

static void
test_uplink_url(void)
{
	struct uplink_url	u;
	struct error		e;
	char			p[200];

	snprintf(p, sizeof(p), "/up/%s/1700000000/%s/", "AAAAAAAAAAAAAAAAAAAAAA",
	    "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB");
	CHECK(uplinks_parse(p, &u, &e) == 0 && u.name_len == 0 &&
	    u.expires == 1700000000, "uplink: the page URL");
	snprintf(p + strlen(p), sizeof(p) - strlen(p), "a%%20b.txt");
	CHECK(uplinks_parse(p, &u, &e) == 0 && strcmp(u.name, "a%20b.txt") == 0,
	    "uplink: a file name, kept encoded");
	snprintf(p + strlen(p), sizeof(p) - strlen(p), "/x");
	CHECK(uplinks_parse(p, &u, &e) == -1 && e.kind == ERR_NOT_FOUND, "uplink: extra segment");
	CHECK(uplinks_parse("/up/short/1/x/", &u, &e) == -1 && e.kind == ERR_INVALID,
	    "uplink: malformed id");
	CHECK(uplinks_parse("/up/AAAAAAAAAAAAAAAAAAAAAA/17", &u, &e) == -1 &&
	    e.kind == ERR_NOT_FOUND, "uplink: too few segments");
}

static void
test_image(void)
{
	static const unsigned char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\x90\0\0\x01\x2c";
	static const unsigned char gif[] = "GIF89a\x10\x00\x20\x00";
	static const unsigned char jpg[] = "\xff\xd8\xff\xe0\x00\x04JF\xff\xc0\x00\x11\x08\x00\x30\x00\x40";
	static const unsigned char webp[] = "RIFF\x24\x00\x00\x00WEBPVP8X\x0a\x00\x00\x00\x00\x00\x00\x00\x3f\x00\x00\x1f\x00\x00";
	unsigned long w, h;

	CHECK(image_info(png, sizeof(png) - 1, &w, &h) == IMAGE_PNG && w == 400 &&
	    h == 300, "image: PNG and its IHDR size");
	CHECK(image_info(gif, sizeof(gif) - 1, &w, &h) == IMAGE_GIF && w == 16 &&
	    h == 32, "image: GIF");
	CHECK(image_info(jpg, sizeof(jpg) - 1, &w, &h) == IMAGE_JPEG && w == 64 &&
	    h == 48, "image: JPEG, size from SOF0 after another segment");
	CHECK(image_info(webp, sizeof(webp) - 1, &w, &h) == IMAGE_WEBP && w == 64 &&
	    h == 32, "image: WebP VP8X canvas");
	CHECK(image_info(png, 12, &w, &h) == IMAGE_PNG && w == 0,
	    "image: a PNG cut before its size");
	CHECK(image_info((const unsigned char *)"<svg", 4, &w, &h) == IMAGE_UNKNOWN,
	    "image: SVG is not one of the four");
}

/* The upload page's sizes, as people read them. */
static void
test_sizes(void)
{
	char b[64];

	upload_page_size(b, sizeof(b), 2147483648LL);
	CHECK(strcmp(b, "2 GiB") == 0, "2 GiB, not 2147483648");
	upload_page_size(b, sizeof(b), 1536LL << 20);
	CHECK(strcmp(b, "1.5 GiB") == 0, "1.5 GiB");
	upload_page_size(b, sizeof(b), 300);
	CHECK(strcmp(b, "300 bytes") == 0, "300 bytes");
	upload_page_size(b, sizeof(b), 100LL << 20);
	CHECK(strcmp(b, "100 MiB") == 0, "100 MiB");
	upload_page_size(b, sizeof(b), 1LL << 40);
	CHECK(strcmp(b, "1 TiB") == 0, "1 TiB");
}

int
main(void)
{
	test_image();
	test_multipart();
	test_names();
	test_tar_write();
	test_uplink_url();
	test_sizes();
	return check_status();
}
