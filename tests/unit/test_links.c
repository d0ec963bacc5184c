/*
 * test_links.c: link signing and checking (lib/links/links.c, against a real
 * SQLite file), range parsing, Content-Disposition, ETag matching and
 * media types (lib/links/dl.c, lib/links/mime.c), and the engine's time format
 * (lib/sandbox/files.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "base/crypto.h"
#include "check.h"
#include "links/dl.h"
#include "links/links.h"
#include "links/mime.h"
#include "links/uplinks.h"
#include "oauth/owners.h"
#include "sandbox/files.h"
#include "store/db.h"
#include "store/db_links.h"

static const char api_key[] = "test-api-key-0123456789abcdefghijklmnop";

static void
test_sign(void)
{
	uint8_t	 k1[LINK_KEY_LEN], k2[LINK_KEY_LEN], k3[LINK_KEY_LEN];
	char	 sig[LINK_SIG_LEN + 1], bad[LINK_SIG_LEN + 1];
	const char *id = "AAAAAAAAAAAAAAAAAAAAAA";

	links_legacy_key(api_key, k1);
	links_legacy_key(api_key, k2);
	links_legacy_key("another key", k3);
	CHECK(memcmp(k1, k2, sizeof(k1)) == 0, "key derivation is deterministic");
	CHECK(memcmp(k1, k3, sizeof(k1)) != 0, "another API key, another link key");

	links_sign(k1, id, 1800000000, "/sandbox/a.txt", sig);
	CHECK(strlen(sig) == LINK_SIG_LEN, "signature is 43 characters");
	CHECK(links_verify(k1, id, 1800000000, "/sandbox/a.txt", sig),
	    "signature verifies");
	CHECK(!links_verify(k3, id, 1800000000, "/sandbox/a.txt", sig),
	    "rotated key: signature refused");
	CHECK(!links_verify(k1, "AAAAAAAAAAAAAAAAAAAAAB", 1800000000,
	    "/sandbox/a.txt", sig), "other id: refused");
	CHECK(!links_verify(k1, id, 1800000001, "/sandbox/a.txt", sig),
	    "other expiry: refused");
	CHECK(!links_verify(k1, id, 1800000000, "/sandbox/b.txt", sig),
	    "other path: refused");
	memcpy(bad, sig, sizeof(bad));
	bad[LINK_SIG_LEN - 1] = bad[LINK_SIG_LEN - 1] == 'A' ? 'B' : 'A';
	CHECK(!links_verify(k1, id, 1800000000, "/sandbox/a.txt", bad),
	    "changed last character: refused");
	bad[LINK_SIG_LEN - 1] = '\0';
	CHECK(!links_verify(k1, id, 1800000000, "/sandbox/a.txt", bad),
	    "short signature: refused");
	/* The separators make the encoding unambiguous. */
	links_sign(k1, "ab", 1, "/c", sig);
	CHECK(!links_verify(k1, "a", 1, "b/c", sig), "fields do not run together");
}

static void
test_parse(void)
{
	struct link_url	 u;
	struct error	 err;
	const char	*good = "/dl/abcdefghijklmnopqrstuv/1800000000/"
	    "0123456789012345678901234567890123456789012/r%C3%A9sum%c3%a9.pdf";
	char		 buf[512];

	CHECK(links_parse(good, &u, &err) == 0 &&
	    strcmp(u.id, "abcdefghijklmnopqrstuv") == 0 &&
	    u.expires == 1800000000 &&
	    strcmp(u.name, "r\xc3\xa9sum\xc3\xa9.pdf") == 0 &&
	    u.name_len == 12, "parse a link (name percent-decoded)");

	struct { const char *path; int status; const char *what; } bad[] = {
		{ "/dl", 404, "no parts" },
		{ "/dl/", 404, "empty" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012", 404, "no name" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012/a/b", 404, "extra part" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012/", 404, "trailing slash" },
		{ "/dl/abcdefghijklmnopqrstu/1800000000/"
		    "0123456789012345678901234567890123456789012/a", 400, "short id" },
		{ "/dl/abcdefghijklmnopqrstu!/1800000000/"
		    "0123456789012345678901234567890123456789012/a", 400, "id charset" },
		{ "/dl/abcdefghijklmnopqrstuv/01800000000/"
		    "0123456789012345678901234567890123456789012/a", 400, "leading zero" },
		{ "/dl/abcdefghijklmnopqrstuv/18000x0000/"
		    "0123456789012345678901234567890123456789012/a", 400, "expiry digits" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000000/"
		    "0123456789012345678901234567890123456789012/a", 400, "expiry too long" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "012345678901234567890123456789012345678901/a", 400, "short sig" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "012345678901234567890123456789012345678901=/a", 400, "sig charset" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012/a%2", 400, "bad escape" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012/a%00b", 400, "NUL in name" },
		{ "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012/a%2Fb", 400, "slash in name" },
		{ "/dlx/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012/a", 404, "other prefix" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "malformed link (%s): %d", bad[i].what,
		    bad[i].status);
		CHECK(links_parse(bad[i].path, &u, &err) == -1 &&
		    error_http_status(err.kind) == bad[i].status, buf);
	}
	{
		char longname[1200] = "/dl/abcdefghijklmnopqrstuv/1800000000/"
		    "0123456789012345678901234567890123456789012/";
		size_t n = strlen(longname);

		memset(longname + n, 'x', 256);
		longname[n + 256] = '\0';
		CHECK(links_parse(longname, &u, &err) == -1 && err.kind == ERR_INVALID,
		    "name over 255 bytes");
	}
}

static void
test_url(void)
{
	uint8_t		 key[LINK_KEY_LEN];
	char		 sig[LINK_SIG_LEN + 1], *url;
	struct link_url	 u;
	struct error	 err;
	const char	*path = "/sandbox/dir/caf\xc3\xa9 & co #1.txt";
	const char	*pfx = "https://sandbox.example/dl/";

	links_legacy_key(api_key, key);
	links_sign(key, "abcdefghijklmnopqrstuv", 1800000000, path, sig);
	url = links_url("https://sandbox.example", "abcdefghijklmnopqrstuv",
	    1800000000, sig, path);
	CHECK(url != NULL && strncmp(url, pfx, strlen(pfx)) == 0 &&
	    strstr(url, "/caf%C3%A9%20%26%20co%20%231.txt") != NULL,
	    "URL: name percent-encoded");
	CHECK(url != NULL && links_parse(url + strlen(pfx) - 4, &u, &err) == 0 &&
	    strcmp(u.name, files_basename(path)) == 0 &&
	    links_verify(key, u.id, u.expires, path, u.sig),
	    "URL parses back and verifies");
	free(url);
	CHECK(strcmp(files_basename("/a/b/c.txt"), "c.txt") == 0, "basename");
}

/*
 * Security review item 7: links are signed under a key with the links'
 * secret in it, so knowing (or guessing) the API key signs nothing; a
 * link made before the secret keeps its API-key signature until it
 * expires; deleting the secret invalidates every link.
 */
static void
set_legacy(const char *dbpath, const char *id, int v)
{
	sqlite3	*h = NULL;
	char	 q[128];

	snprintf(q, sizeof(q), "UPDATE link SET legacy_key = %d WHERE id = '%s'",
	    v, id);
	if (sqlite3_open(dbpath, &h) == SQLITE_OK)
		sqlite3_exec(h, q, NULL, NULL, NULL);
	sqlite3_close(h);
}

static void
test_secret_key(struct db *db, const char *dbpath, const struct link_row *row,
    const char *req, long long now)
{
	uint8_t		 legacy[LINK_KEY_LEN], k1[LINK_KEY_LEN], k2[LINK_KEY_LEN];
	char		 sig[LINK_SIG_LEN + 1], forged[1024], name[64];
	struct link_row	 got;
	struct error	 err;

	links_legacy_key(api_key, legacy);
	CHECK(links_key(db, api_key, false, k1) == 0 &&
	    links_key(db, api_key, false, k2) == 0 &&
	    memcmp(k1, k2, sizeof(k1)) == 0 &&
	    memcmp(k1, legacy, sizeof(k1)) != 0,
	    "link signatures are keyed from a server-side random secret, "
	    "not from the API key alone (security review item 7)");
	/* What a link holder who guessed the API key could sign. */
	links_sign(legacy, row->id, now + 50, row->path, sig);
	snprintf(name, sizeof(name), "%s", files_basename(row->path));
	snprintf(forged, sizeof(forged), "/dl/%s/%lld/%s/%s", row->id, now + 50,
	    sig, name);
	CHECK(links_check(db, api_key, forged, now, &got, &err) == -1 &&
	    err.kind == ERR_DENIED,
	    "a link signed with the API key alone is refused (item 7)");
	/* A row from before the secret (sql/017): its old signature holds. */
	set_legacy(dbpath, row->id, 1);
	CHECK(links_check(db, api_key, forged, now, &got, &err) == 0,
	    "a link made before the secret works until it expires (item 7)");
	CHECK(links_check(db, api_key, forged, now + 50, &got, &err) == -1 &&
	    err.kind == ERR_GONE, "and not after (item 7)");
	CHECK(links_check(db, api_key, req, now, &got, &err) == -1 &&
	    err.kind == ERR_DENIED, "a legacy row takes no new-key signature");
	set_legacy(dbpath, row->id, 0);
	crypto_wipe(legacy, sizeof(legacy));
	crypto_wipe(k1, sizeof(k1));
	crypto_wipe(k2, sizeof(k2));
}

static void
test_check(void)
{
	char		 dbpath[] = "/tmp/test_links.XXXXXX", *url, req[1024], *p;
	struct db	*db = NULL;
	struct error	 err;
	struct link_row	 row, got;
	int		 fd;
	long long	 now = 1800000000;

	if ((fd = mkstemp(dbpath)) == -1) {
		CHECK(0, "temporary database");
		return;
	}
	close(fd);
	if (db_open(dbpath, &db, &err) == -1) {
		CHECK(0, err.msg);
		unlink(dbpath);
		return;
	}
	CHECK(db_version(db) >= 3, "schema migrated to version 3 or later");
	url = links_create(db, api_key, "http://h", "/sandbox/out/report.pdf",
	    1234, "api-key", "alice", now, 100, &row, &err);
	CHECK(url != NULL && strlen(row.id) == LINK_ID_LEN &&
	    row.expires == now + 100, "create a link");
	if (url == NULL)
		goto out;
	snprintf(req, sizeof(req), "%s", url + strlen("http://h"));

	CHECK(links_check(db, api_key, req, now, &got, &err) == -1 &&
	    err.kind == ERR_GONE,
	    "an owner without a valid key: 410 (security review item 3)");
	{
		char k[OWNER_KEY_MAX];

		CHECK(owners_key_add(db, "alice", k, &err) == 0, "alice's key");
	}
	CHECK(links_check(db, api_key, req, now, &got, &err) == 0 &&
	    strcmp(got.path, "/sandbox/out/report.pdf") == 0 && got.size == 1234 &&
	    strcmp(got.owner, "alice") == 0,
	    "a fresh link is good, and knows its owner");
	CHECK(links_check(db, api_key, req, now + 99, &got, &err) == 0,
	    "good until the last second");
	CHECK(links_check(db, api_key, req, now + 100, &got, &err) == -1 &&
	    err.kind == ERR_GONE, "expired: 410");
	CHECK(links_check(db, "rotated", req, now, &got, &err) == -1 &&
	    err.kind == ERR_DENIED, "rotated API key: 403");
	test_secret_key(db, dbpath, &row, req, now);

	/* Tamper with each part, keeping its syntax. */
	{
		static const int parts[] = { 4, 4 + 23, 4 + 23 + 11, -1 };
		static const char *const what[] = { "id", "expiry", "signature", "name" };

		for (int i = 0; i < 4; i++) {
			char t[1024], name[64];

			snprintf(t, sizeof(t), "%s", req);
			if (parts[i] >= 0) {
				p = t + parts[i];
				*p = *p == '1' ? '2' : (*p == 'A' ? 'B' :
				    (i == 1 ? '1' : 'A'));
			} else
				snprintf(strrchr(t, '/'), sizeof(t) - (size_t)(strrchr(t, '/') - t),
				    "/other.pdf");
			snprintf(name, sizeof(name), "tampered %s: 403", what[i]);
			CHECK(links_check(db, api_key, t, now, &got, &err) == -1 &&
			    err.kind == ERR_DENIED, name);
		}
	}
	CHECK(links_check(db, api_key, "/dl/x", now, &got, &err) == -1 &&
	    err.kind == ERR_NOT_FOUND, "malformed: 404");

	/* Another owner cannot revoke it; its owner can. */
	CHECK(links_revoke(db, row.id, "bob", now) == LOOKUP_NONE &&
	    links_check(db, api_key, req, now, &got, &err) == 0,
	    "another owner's revocation finds no link");
	CHECK(links_revoke(db, row.id, "alice", now) == LOOKUP_FOUND,
	    "its owner revokes it");
	/* An operator shortens the link, then revokes it (again: no-op). */
	db_exec(db, STMT_LINK_REVOKE, "it", now, row.id);
	CHECK(links_check(db, api_key, req, now, &got, &err) == -1 &&
	    err.kind == ERR_GONE && strstr(err.msg, "revoked") != NULL,
	    "revoked: 410");
	links_count_download(db, row.id, now);
	{
		struct db_link l;

		CHECK(db_link_get(db, row.id, &l) == LOOKUP_FOUND && l.revoked,
		    "revocation recorded");
	}
	free(url);
out:
	db_close(db);
	unlink(dbpath);
	snprintf(req, sizeof(req), "%s-wal", dbpath);
	unlink(req);
	snprintf(req, sizeof(req), "%s-shm", dbpath);
	unlink(req);
}

/*
 * Security review item 3: revoking a key revokes its owner's download and
 * upload links with it; the operator's links stay.
 */
static void
test_revoke_owner(void)
{
	char		 dbpath[] = "/tmp/test_links.XXXXXX", key[OWNER_KEY_MAX];
	char		 dl[1024], up[1024], op[1024], *url;
	struct db	*db = NULL;
	struct error	 err;
	struct link_row	 row, got;
	struct uplink_row urow, ugot;
	struct uplink_url uurl;
	int		 fd;
	long long	 now = (long long)time(NULL);

	if ((fd = mkstemp(dbpath)) == -1) {
		CHECK(0, "temporary database");
		return;
	}
	close(fd);
	if (db_open(dbpath, &db, &err) == -1) {
		CHECK(0, err.msg);
		unlink(dbpath);
		return;
	}
	CHECK(owners_key_add(db, "rita", key, &err) == 0, "rita's key");
	dl[0] = up[0] = op[0] = '\0';
	if ((url = links_create(db, api_key, "http://h", "/sandbox/a.txt", 1,
	    "c", "rita", now, 100, &row, &err)) != NULL)
		snprintf(dl, sizeof(dl), "%s", url + strlen("http://h"));
	free(url);
	if ((url = uplinks_create(db, api_key, "http://h", "/sandbox/in", 1000,
	    false, "c", "rita", now, 100, &urow, &err)) != NULL)
		snprintf(up, sizeof(up), "%sx.txt", url + strlen("http://h"));
	free(url);
	if ((url = links_create(db, api_key, "http://h", "/sandbox/b.txt", 1,
	    "c", OWNER_OPERATOR, now, 100, &row, &err)) != NULL)
		snprintf(op, sizeof(op), "%s", url + strlen("http://h"));
	free(url);
	CHECK(links_check(db, api_key, dl, now, &got, &err) == 0 &&
	    uplinks_check(db, api_key, up, now, &ugot, &uurl, &err) == 0 &&
	    links_check(db, api_key, op, now, &got, &err) == 0,
	    "the links work while the key is valid");
	CHECK(owners_key_revoke(db, "rita", &err) == LOOKUP_FOUND, "revoke rita");
	CHECK(links_check(db, api_key, dl, now, &got, &err) == -1 &&
	    err.kind == ERR_GONE, "revoked owner's download link: 410");
	CHECK(uplinks_check(db, api_key, up, now, &ugot, &uurl, &err) == -1 &&
	    err.kind == ERR_GONE, "revoked owner's upload link: 410");
	CHECK(owners_live(db, "rita") == LOOKUP_NONE &&
	    owners_live(db, OWNER_OPERATOR) == LOOKUP_FOUND,
	    "owners_live: rita no more, the operator always");
	CHECK(links_check(db, api_key, op, now, &got, &err) == 0,
	    "the operator's link stays");
	/* A new key for the name does not bring the old links back. */
	CHECK(owners_key_add(db, "rita", key, &err) == 0 &&
	    links_check(db, api_key, dl, now, &got, &err) == -1 &&
	    err.kind == ERR_GONE && strstr(err.msg, "revoked") != NULL &&
	    uplinks_check(db, api_key, up, now, &ugot, &uurl, &err) == -1 &&
	    err.kind == ERR_GONE, "links stay revoked under a new key");
	db_close(db);
	unlink(dbpath);
	snprintf(dl, sizeof(dl), "%s-wal", dbpath);
	unlink(dl);
	snprintf(dl, sizeof(dl), "%s-shm", dbpath);
	unlink(dl);
}

static void
test_range(void)
{
	unsigned long long f = 0, l = 0;

	CHECK(dl_range_parse("bytes=0-99", 1000, &f, &l) == DL_RANGE_OK &&
	    f == 0 && l == 100, "range 0-99");
	CHECK(dl_range_parse("bytes=500-", 1000, &f, &l) == DL_RANGE_OK &&
	    f == 500 && l == 500, "open range 500-");
	CHECK(dl_range_parse("bytes=-100", 1000, &f, &l) == DL_RANGE_OK &&
	    f == 900 && l == 100, "suffix -100");
	CHECK(dl_range_parse("bytes=-5000", 1000, &f, &l) == DL_RANGE_OK &&
	    f == 0 && l == 1000, "suffix longer than the file");
	CHECK(dl_range_parse("bytes=900-5000", 1000, &f, &l) == DL_RANGE_OK &&
	    f == 900 && l == 100, "last beyond the end is clamped");
	CHECK(dl_range_parse("bytes=999-999", 1000, &f, &l) == DL_RANGE_OK &&
	    f == 999 && l == 1, "last byte");
	CHECK(dl_range_parse("bytes=1000-", 1000, &f, &l) ==
	    DL_RANGE_UNSATISFIABLE, "first past the end: 416");
	CHECK(dl_range_parse("bytes=-0", 1000, &f, &l) ==
	    DL_RANGE_UNSATISFIABLE, "suffix of 0: 416");
	CHECK(dl_range_parse("bytes=0-", 0, &f, &l) == DL_RANGE_UNSATISFIABLE,
	    "any range of an empty file: 416");
	CHECK(dl_range_parse("bytes=5-1", 1000, &f, &l) == DL_RANGE_NONE,
	    "last before first: ignored");
	CHECK(dl_range_parse("bytes=0-1,5-6", 1000, &f, &l) == DL_RANGE_NONE,
	    "several ranges: whole file");
	CHECK(dl_range_parse("items=0-1", 1000, &f, &l) == DL_RANGE_NONE,
	    "other unit: ignored");
	CHECK(dl_range_parse("bytes=-", 1000, &f, &l) == DL_RANGE_NONE,
	    "bare dash: ignored");
	CHECK(dl_range_parse("bytes=99999999999999999999-", 1000, &f, &l) ==
	    DL_RANGE_NONE, "overlong number: ignored");
	CHECK(dl_range_parse("BYTES=1-2", 1000, &f, &l) == DL_RANGE_OK &&
	    f == 1 && l == 2, "unit is case-insensitive");
	CHECK(dl_range_parse(NULL, 1000, &f, &l) == DL_RANGE_NONE, "no header");
}

static void
test_disposition(void)
{
	char	buf[1024];

	CHECK(dl_disposition("inline", "chart.png", buf, sizeof(buf)) > 0 &&
	    strcmp(buf, "inline; filename=\"chart.png\"") == 0, "ASCII name");
	CHECK(dl_disposition("attachment", "r\xc3\xa9sum\xc3\xa9 \"1\".pdf", buf,
	    sizeof(buf)) > 0 && strcmp(buf, "attachment; filename=\"r__sum__ _1_.pdf\"; "
	    "filename*=UTF-8''r%C3%A9sum%C3%A9%20%221%22.pdf") == 0,
	    "non-ASCII name: filename* (RFC 8187)");
	CHECK(dl_disposition("attachment", "bad\xff.bin", buf, sizeof(buf)) > 0 &&
	    strcmp(buf, "attachment; filename=\"bad_.bin\"") == 0,
	    "invalid UTF-8: fallback only");
	CHECK(dl_disposition("attachment", "a\r\nb", buf, sizeof(buf)) > 0 &&
	    strchr(buf, '\r') == NULL && strchr(buf, '\n') == NULL,
	    "control characters never reach a header");
	CHECK(dl_disposition("inline", "x.txt", buf, 10) == -1, "too small");

	/*
	 * The longest name a link serves, all of it non-ASCII: /dl must still
	 * say attachment (an HTML file must not be shown inline).
	 */
	{
		char	name[LINK_NAME_MAX + 1], big[DL_DISPOSITION_MAX];
		size_t	i;

		for (i = 0; i + 2 <= LINK_NAME_MAX - 5; i += 2)
			memcpy(name + i, "\xc3\xa9", 2);
		memcpy(name + i, ".html", 6);
		CHECK(strlen(name) <= LINK_NAME_MAX && dl_disposition("attachment",
		    name, big, sizeof(big)) > 0 && strncmp(big, "attachment; ",
		    12) == 0, "a 255-byte non-ASCII name fits DL_DISPOSITION_MAX");
	}
}

static void
test_etag(void)
{
	const char *e = "\"10-20-abc\"";

	CHECK(dl_etag_match("\"10-20-abc\"", e), "same ETag");
	CHECK(dl_etag_match("W/\"10-20-abc\"", e), "weak comparison");
	CHECK(dl_etag_match("\"x\", \"10-20-abc\"", e), "in a list");
	CHECK(dl_etag_match("*", e), "star");
	CHECK(!dl_etag_match("\"10-20-abd\"", e), "other ETag");
	CHECK(!dl_etag_match("10-20-abc", e), "unquoted");
	CHECK(!dl_etag_match(NULL, e), "absent");
}

static void
test_mime(void)
{
	CHECK(strcmp(mime_lookup("a.PDF")->type, "application/pdf") == 0 &&
	    mime_lookup("a.pdf")->disposition == MIME_INLINE &&
	    mime_is_pdf(mime_lookup("x.pdf")), "pdf");
	CHECK(strcmp(mime_lookup("a.png")->type, "image/png") == 0 &&
	    mime_lookup("a.png")->disposition == MIME_INLINE, "png inline");
	CHECK(strcmp(mime_lookup("a.svg")->type, "image/svg+xml") == 0 &&
	    mime_lookup("a.svg")->disposition == MIME_ATTACHMENT, "svg attachment");
	CHECK(mime_lookup("index.html")->disposition == MIME_ATTACHMENT &&
	    mime_lookup("a.xhtml")->disposition == MIME_ATTACHMENT &&
	    mime_lookup("a.xml")->disposition == MIME_ATTACHMENT &&
	    mime_lookup("a.js")->disposition == MIME_ATTACHMENT,
	    "page and script types are attachments");
	CHECK(strcmp(mime_lookup("a.txt")->type, "text/plain; charset=utf-8") == 0,
	    "text has a charset");
	CHECK(strcmp(mime_lookup("a.tar.gz")->type, "application/gzip") == 0,
	    "last extension counts");
	CHECK(strcmp(mime_lookup("a.mp4")->type, "video/mp4") == 0 &&
	    strcmp(mime_lookup("a.mp3")->type, "audio/mpeg") == 0 &&
	    strcmp(mime_lookup("a.csv")->type, "text/csv; charset=utf-8") == 0 &&
	    strcmp(mime_lookup("a.zip")->type, "application/zip") == 0 &&
	    strcmp(mime_lookup("a.parquet")->type, "application/vnd.apache.parquet") == 0 &&
	    strcmp(mime_lookup("a.xlsx")->type, "application/vnd.openxmlformats-"
	    "officedocument.spreadsheetml.sheet") == 0, "common types");
	CHECK(strcmp(mime_lookup("Makefile")->type, "application/octet-stream") == 0 &&
	    strcmp(mime_lookup(".bashrc")->type, "application/octet-stream") == 0 &&
	    strcmp(mime_lookup("x.")->type, "application/octet-stream") == 0 &&
	    mime_lookup("x.unknownext")->disposition == MIME_ATTACHMENT,
	    "unknown: octet-stream attachment");
}

static void
test_time(void)
{
	long long t = 0;

	CHECK(files_parse_time("2024-05-01T12:34:56.123456789Z", &t) == 0 &&
	    t == 1714566896, "RFC 3339 with nanoseconds");
	CHECK(files_parse_time("2024-05-01T14:34:56+02:00", &t) == 0 &&
	    t == 1714566896, "RFC 3339 with an offset");
	CHECK(files_parse_time("2024-05-01 12:34:56Z", &t) == -1 &&
	    files_parse_time("2024-13-01T00:00:00Z", &t) == -1 &&
	    files_parse_time("2024-05-01T12:34:56", &t) == -1,
	    "malformed times refused");
}

int
main(void)
{
	test_sign();
	test_parse();
	test_url();
	test_check();
	test_revoke_owner();
	test_range();
	test_disposition();
	test_etag();
	test_mime();
	test_time();
	return check_status();
}
