/*
 * test_secrets.c: a secret's words checked (base/secret.h), values sealed
 * and opened (crypto_seal), the store and the key file (sandbox/secrets.h),
 * and masking: plain, Base64 at three alignments, percent-encoded, split
 * across reads.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/secret.h"
#include "sandbox/owneraddr.h"
#include "sandbox/proxy.h"
#include "sandbox/secrets.h"
#include "store/db.h"
#include "check.h"

#define VALUE	"s3cr3t+/Token=value?&"

/* Mask in (NUL-terminated); a new string. */
static char *
masked(const struct mask *m, const char *in)
{
	size_t	 n;

	return mask_apply(m, in, strlen(in), &n);
}

/* Does s hold no part of the value 8 bytes long or more? */
static int
clean(const char *s)
{
	char	 part[9];
	size_t	 i, len = strlen(VALUE);

	for (i = 0; i + 8 <= len; i++) {
		memcpy(part, VALUE + i, 8);
		part[8] = '\0';
		if (strstr(s, part) != NULL)
			return 0;
	}
	return 1;
}

static void
test_words(void)
{
	struct error	 err;
	char		 hosts[SECRET_HOSTS_MAX], name[SECRET_HEADER_MAX];
	char		 tmpl[SECRET_TEMPLATE_MAX];

	CHECK(secret_name_check("GH_token-1", &err) == 0, "name ok");
	CHECK(secret_name_check("1abc", &err) == -1, "name starts with a digit");
	CHECK(secret_name_check("a b", &err) == -1, "name with a space");
	CHECK(secret_name_check("", &err) == -1, "empty name");
	CHECK(secret_value_check("abcdefgh", 8, &err) == 0, "value of 8");
	CHECK(secret_value_check("abcdefg", 7, &err) == -1, "value of 7");
	CHECK(secret_value_check("abcd\nefgh", 9, &err) == -1 &&
	    strstr(err.msg, "control") != NULL, "value with a newline");
	CHECK(secret_value_check("abcd\0efgh", 9, &err) == -1, "value with NUL");
	CHECK(secret_value_check("abcd\xc3\xa9" "efgh", 10, &err) == -1,
	    "value not ASCII");
	CHECK(secret_hosts_check("API.Example.test,git.example.test", hosts,
	    sizeof(hosts), &err) == 0 &&
	    strcmp(hosts, "api.example.test,git.example.test") == 0,
	    "hosts folded");
	CHECK(secret_hosts_check("a.test,a.test", hosts, sizeof(hosts), &err) ==
	    -1, "host twice");
	CHECK(secret_hosts_check("10.0.0.1", hosts, sizeof(hosts), &err) == -1,
	    "address refused");
	CHECK(secret_hosts_check("a.test:443", hosts, sizeof(hosts), &err) == -1,
	    "port refused");
	CHECK(secret_hosts_check("*.a.test", hosts, sizeof(hosts), &err) == -1,
	    "wildcard refused for a secret");
	CHECK(secret_hosts_check("a.test,", hosts, sizeof(hosts), &err) == -1,
	    "trailing comma");
	CHECK(secret_hosts_check("localhost", hosts, sizeof(hosts), &err) == -1,
	    "one label");
	CHECK(secret_hosts_check("a\"b.test", hosts, sizeof(hosts), &err) == -1,
	    "quote in a host");
	CHECK(secret_host_valid("*.mirror.example.test", true), "wildcard when allowed");
	CHECK(secret_header_check("X-Api-Key: {}", name, tmpl, &err) == 0 &&
	    strcmp(name, "X-Api-Key") == 0 && strcmp(tmpl, "{}") == 0,
	    "header template");
	CHECK(secret_header_check("X-Api-Key: token", name, tmpl, &err) == -1 &&
	    strstr(err.msg, "{}") != NULL, "template without {}");
	CHECK(secret_header_check("X-Api-Key: {}{}", name, tmpl, &err) == -1,
	    "template with {} twice");
	CHECK(secret_header_check("X Key: {}", name, tmpl, &err) == -1,
	    "header name with a space");
	CHECK(secret_header_check("Host: {}", name, tmpl, &err) == -1,
	    "Host refused");
	CHECK(secret_header_check("X-K: a\r\nB: {}", name, tmpl, &err) == -1,
	    "header injection refused");
	CHECK(secret_user_check("alice", &err) == 0, "basic user");
	CHECK(secret_user_check("a:b", &err) == -1, "basic user with a colon");
}

static void
test_seal(void)
{
	uint8_t		 key[CRYPTO_SEAL_KEY], key2[CRYPTO_SEAL_KEY];
	unsigned char	 sealed[64 + CRYPTO_SEAL_OVERHEAD];
	char		 out[128];
	long		 n, m;

	crypto_random(key, sizeof(key));
	crypto_random(key2, sizeof(key2));
	n = crypto_seal(key, "A", 1, VALUE, strlen(VALUE), sealed,
	    sizeof(sealed));
	CHECK(n == (long)strlen(VALUE) + CRYPTO_SEAL_OVERHEAD, "sealed length");
	CHECK(memmem(sealed, (size_t)n, "s3cr3t", 6) == NULL, "no plain text");
	m = crypto_open(key, "A", 1, sealed, (size_t)n, out, sizeof(out));
	CHECK(m == (long)strlen(VALUE) && memcmp(out, VALUE, (size_t)m) == 0,
	    "opened");
	CHECK(crypto_open(key2, "A", 1, sealed, (size_t)n, out, sizeof(out)) ==
	    -1, "another key does not open");
	CHECK(crypto_open(key, "B", 1, sealed, (size_t)n, out, sizeof(out)) ==
	    -1, "another name does not open");
	sealed[15] ^= 1;
	CHECK(crypto_open(key, "A", 1, sealed, (size_t)n, out, sizeof(out)) ==
	    -1, "a changed byte does not open");
	CHECK(crypto_open(key, "A", 1, sealed, 10, out, sizeof(out)) == -1,
	    "too short");
}

static void
test_mask(void)
{
	struct mask		*m = mask_new();
	struct mask_stream	*ms;
	char			 b64[128], buf[256], *s, *o, *all;
	size_t			 k, n, cut, len, total;
	int			 ok;

	CHECK(mask_add(m, "GH", VALUE, strlen(VALUE)) == 0, "mask add");
	CHECK(mask_add(m, "X", "short", 5) == -1, "short value refused");
	s = masked(m, "token: " VALUE " end");
	CHECK(s != NULL && strcmp(s, "token: [secret GH] end") == 0, "plain");
	free(s);
	s = masked(m, VALUE VALUE);
	CHECK(s != NULL && strcmp(s, "[secret GH][secret GH]") == 0 && clean(s),
	    "twice in a row");
	free(s);
	/* Base64 of the value after 0, 1 and 2 bytes of anything. */
	for (k = 0; k < 3; k++) {
		snprintf(buf, sizeof(buf), "%.*s%s!", (int)k, "xy", VALUE);
		crypto_b64_encode(buf, strlen(buf), b64);
		s = masked(m, b64);
		CHECK(s != NULL && strstr(s, "[secret GH]") != NULL,
		    k == 0 ? "base64 at 0" : k == 1 ? "base64 at 1" :
		    "base64 at 2");
		/* No run of the value's own characters is left. */
		ok = s != NULL && strlen(s) < strlen(b64) + 4;
		CHECK(ok, "base64 replaced, not appended");
		free(s);
		/* URL-safe. */
		for (n = 0; b64[n] != '\0'; n++)
			if (b64[n] == '+')
				b64[n] = '-';
			else if (b64[n] == '/')
				b64[n] = '_';
		s = masked(m, b64);
		CHECK(s != NULL && strstr(s, "[secret GH]") != NULL,
		    "base64url");
		free(s);
	}
	s = masked(m, "q=s3cr3t%2B%2FToken%3Dvalue%3F%26");
	CHECK(s != NULL && strcmp(s, "q=[secret GH]") == 0, "percent-encoded");
	free(s);
	s = masked(m, "nothing here");
	CHECK(s != NULL && strcmp(s, "nothing here") == 0, "no match copies");
	free(s);
	s = masked(NULL, "abc");
	CHECK(s != NULL && strcmp(s, "abc") == 0, "no mask copies");
	free(s);

	/* A value the middle cut split: both pieces masked. */
	{
		const char *ct = "out: s3cr3t+/To\n[... 1234 bytes cut ...]\n"
		    "value?& end\n";

		s = mask_apply_cut(m, ct, strlen(ct), &n);
		CHECK(s != NULL && strcmp(s, "out: [secret GH]\n[... 1234 bytes "
		    "cut ...]\n[secret GH] end\n") == 0, "pieces at a cut");
		free(s);
		ct = "a s3cr3t+/Token=value?& b\n[... 9 bytes cut ...]\nplain\n";
		s = mask_apply_cut(m, ct, strlen(ct), &n);
		CHECK(s != NULL && strcmp(s, "a [secret GH] b\n[... 9 bytes cut "
		    "...]\nplain\n") == 0, "whole values around a cut");
		free(s);
		s = mask_apply_cut(m, "no cut s3cr3t+/Token=value?&", 28, &n);
		CHECK(s != NULL && strcmp(s, "no cut [secret GH]") == 0,
		    "no cut: as mask_apply");
		free(s);
	}

	/* Split across two reads, at every place. */
	snprintf(buf, sizeof(buf), "before %s after", VALUE);
	len = strlen(buf);
	ok = 1;
	for (cut = 0; cut <= len; cut++) {
		ms = mask_stream_new(m);
		all = calloc(1, 512);
		total = 0;
		mask_stream_feed(ms, buf, cut, &o, &n);
		memcpy(all + total, o, n);
		total += n;
		free(o);
		mask_stream_feed(ms, buf + cut, len - cut, &o, &n);
		memcpy(all + total, o, n);
		total += n;
		free(o);
		mask_stream_end(ms, &o, &n);
		memcpy(all + total, o, n);
		total += n;
		free(o);
		all[total] = '\0';
		if (strcmp(all, "before [secret GH] after") != 0)
			ok = 0;
		free(all);
		mask_stream_free(ms);
	}
	CHECK(ok, "split across two reads at every byte");
	/* A byte at a time. */
	ms = mask_stream_new(m);
	all = calloc(1, 512);
	total = 0;
	for (k = 0; k < len; k++) {
		mask_stream_feed(ms, buf + k, 1, &o, &n);
		memcpy(all + total, o, n);
		total += n;
		free(o);
	}
	mask_stream_end(ms, &o, &n);
	memcpy(all + total, o, n);
	total += n;
	free(o);
	all[total] = '\0';
	CHECK(strcmp(all, "before [secret GH] after") == 0, "a byte at a time");
	free(all);
	mask_stream_free(ms);
	mask_free(m);
}

static void
test_store(void)
{
	char		 dir[] = "/tmp/cs-test-secrets-XXXXXX", path[256];
	struct config	 cfg;
	struct db	*db = NULL;
	struct error	 err;
	struct secret	 s;
	struct secrets	 ss;
	struct mask	*m;
	struct stat	 st;
	char		*hv, *o;
	FILE		*f;
	char		 raw[65536];
	size_t		 n;

	if (mkdtemp(dir) == NULL) {
		SKIP("store", "no temporary folder");
		return;
	}
	memset(&cfg, 0, sizeof(cfg));
	snprintf(path, sizeof(path), "%s/secrets.key", dir);
	cfg.secrets_key = path;
	{
		char dbp[256];

		snprintf(dbp, sizeof(dbp), "%s/state.db", dir);
		CHECK(db_open(dbp, &db, &err) == 0, "db open");
	}
	memset(&s, 0, sizeof(s));
	snprintf(s.name, sizeof(s.name), "GH");
	snprintf(s.hosts, sizeof(s.hosts), "api.example.test");
	snprintf(s.header, sizeof(s.header), "Authorization");
	snprintf(s.tmpl, sizeof(s.tmpl), "Bearer {}");
	CHECK(secrets_add(&cfg, db, &s, VALUE, strlen(VALUE), &err) == 0,
	    "add");
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 &&
	    st.st_size == 32, "key file of mode 600");
	CHECK(secrets_add(&cfg, db, &s, VALUE, strlen(VALUE), &err) == -1 &&
	    err.kind == ERR_CONFLICT, "name taken");
	snprintf(s.name, sizeof(s.name), "B");
	snprintf(s.owner, sizeof(s.owner), "bob");
	snprintf(s.basic_user, sizeof(s.basic_user), "alice");
	snprintf(s.tmpl, sizeof(s.tmpl), "Basic {}");
	CHECK(secrets_add(&cfg, db, &s, "abcdefgh", 8, &err) == 0, "add basic");
	CHECK(secrets_add(&cfg, db, &s, "bad\nvalue", 9, &err) == -1,
	    "newline refused by the store too");
	db_close(db);
	db = NULL;
	snprintf(raw, sizeof(raw), "%s/state.db", dir);
	f = fopen(raw, "rb");
	n = f != NULL ? fread(raw, 1, sizeof(raw), f) : 0;
	if (f != NULL)
		fclose(f);
	CHECK(n > 0 && memmem(raw, n, "s3cr3t", 6) == NULL,
	    "no value in the database file");
	snprintf(raw, sizeof(raw), "%s/state.db", dir);
	CHECK(db_open(raw, &db, &err) == 0, "db again");
	CHECK(secrets_load(&cfg, db, NULL, true, &ss, &err) == 0 && ss.n == 2,
	    "load all");
	if (ss.n == 2) {
		CHECK(strcmp(ss.v[1].name, "GH") == 0 &&
		    strcmp(ss.v[1].value, VALUE) == 0, "value opened");
		hv = secrets_header_value(&ss.v[1]);
		CHECK(hv != NULL && strcmp(hv, "Bearer " VALUE) == 0,
		    "bearer header");
		free(hv);
		hv = secrets_header_value(&ss.v[0]);
		CHECK(hv != NULL && strcmp(hv, "Basic YWxpY2U6YWJjZGVmZ2g=") == 0,
		    "basic header");
		m = secrets_mask(&ss);
		o = m != NULL ? masked(m, hv) : NULL;
		CHECK(o != NULL && strstr(o, "YWJjZGVmZ2g") == NULL &&
		    strstr(o, "[secret B]") != NULL, "basic header masked");
		free(o);
		free(hv);
		mask_free(m);
	}
	secrets_free(&ss);
	CHECK(secrets_load(&cfg, db, "carol", false, &ss, &err) == 0 &&
	    ss.n == 1 && ss.v[0].value == NULL, "another owner sees one");
	secrets_free(&ss);
	CHECK(secrets_load(&cfg, db, "bob", false, &ss, &err) == 0 && ss.n == 2,
	    "the owner sees both");
	secrets_free(&ss);
	/* Another installation's key opens nothing. */
	unlink(path);
	{
		uint8_t k[32];
		struct secrets ss2;

		crypto_random(k, sizeof(k));
		f = fopen(path, "wb");
		fwrite(k, 1, sizeof(k), f);
		fclose(f);
		chmod(path, 0600);
		CHECK(secrets_load(&cfg, db, NULL, true, &ss2, &err) == -1 &&
		    strstr(err.msg, "does not open") != NULL,
		    "another key refused");
		chmod(path, 0644);
		CHECK(secrets_load(&cfg, db, NULL, true, &ss2, &err) == -1 &&
		    strstr(err.msg, "mode 600") != NULL, "key readable by others");
	}
	CHECK(secrets_remove(db, "GH", &err) == LOOKUP_FOUND, "remove");
	CHECK(secrets_remove(db, "GH", &err) == LOOKUP_NONE, "remove again");
	db_close(db);
	snprintf(raw, sizeof(raw), "rm -rf '%s'", dir);
	if (system(raw) != 0)
		printf("# could not remove %s\n", dir);
}

static void
test_proxy_conf(void)
{
	struct config	 cfg;
	struct secrets	 ss;
	struct secret	 v[2];
	struct error	 err;
	const char	*addrs[] = { "192.0.2.7", "2001:db8::1" };
	const char	*bad[] = { "1.2.3.4 all" };
	char		*t;

	memset(&cfg, 0, sizeof(cfg));
	memset(v, 0, sizeof(v));
	cfg.proxy_dir = "/var/lib/cs/proxy";
	cfg.proxy_hosts_file = "/etc/hosts";
	cfg.proxy_ca = "";
	cfg.egress_allow = "10.1.2.0/24 bogus 10.9.9.9";
	ss.v = v;
	ss.n = 0;
	t = proxy_conf(&cfg, &ss, addrs, 2, &err);
	CHECK(t != NULL && strstr(t, "ssl_bump splice all") != NULL &&
	    strstr(t, "ssl_bump bump") == NULL, "no secret: nothing bumped");
	CHECK(t != NULL && strstr(t, "acl cs_never dst 192.0.2.7\n") != NULL &&
	    strstr(t, "acl cs_never dst 2001:db8::1\n") != NULL,
	    "the host's addresses refused");
	CHECK(t != NULL && strstr(t, "acl cs_allow dst 10.1.2.0/24\n") != NULL &&
	    strstr(t, "acl cs_allow dst 10.9.9.9\n") != NULL &&
	    strstr(t, "bogus") == NULL, "allow list, bad words left out");
	CHECK(t != NULL && strstr(t, "http_access deny to_localhost\n") != NULL &&
	    strstr(t, "http_access deny cs_private !cs_allow\n") != NULL,
	    "address rules");
	free(t);

	snprintf(v[0].name, sizeof(v[0].name), "A");
	snprintf(v[0].hosts, sizeof(v[0].hosts), "api.example.test,b.example.test");
	snprintf(v[0].header, sizeof(v[0].header), "X-Api-Key");
	snprintf(v[0].tmpl, sizeof(v[0].tmpl), "k={}");
	v[0].value = "va\\l\"u%e\" x";
	v[0].value_len = strlen(v[0].value);
	snprintf(v[1].name, sizeof(v[1].name), "B");
	snprintf(v[1].hosts, sizeof(v[1].hosts), "c.example.test");
	snprintf(v[1].owner, sizeof(v[1].owner), "bob");
	snprintf(v[1].header, sizeof(v[1].header), "Authorization");
	snprintf(v[1].tmpl, sizeof(v[1].tmpl), "Bearer {}");
	v[1].value = "bob-value-123";
	v[1].value_len = strlen(v[1].value);
	ss.n = 2;
	t = proxy_conf(&cfg, &ss, addrs, 2, &err);
	CHECK(t != NULL && strstr(t, "acl cs_b0 ssl::server_name "
	    "api.example.test b.example.test\n") != NULL &&
	    strstr(t, "ssl_bump bump cs_b0\n") != NULL, "secret hosts bumped");
	CHECK(t != NULL && strstr(t, "acl cs_s0 dstdomain -n api.example.test "
	    "b.example.test\n") != NULL && strstr(t, "ssl_bump bump cs_step1 "
	    "CONNECT cs_s0\n") < strstr(t, "ssl_bump peek cs_step1\n"),
	    "CONNECT by name bumped at once, before the peek");
	CHECK(t != NULL && strstr(t, "request_header_access X-Api-Key deny "
	    "cs_s0\n") != NULL, "the sandbox's header dropped");
	CHECK(t != NULL && strstr(t, "request_header_add X-Api-Key "
	    "\"k=va\\\\l\\\"u%%e\\\" x\" cs_s0 cs_https\n") != NULL,
	    "value escaped, HTTPS only");
	CHECK(t != NULL && strstr(t, "bob-value") == NULL &&
	    strstr(t, "cs_b1") == NULL,
	    "an owner's secret without the owner's address: left out");
	free(t);

	/* With the owner's fixed address: for that address only. */
	snprintf(v[1].addr, sizeof(v[1].addr), "172.30.128.1");
	t = proxy_conf(&cfg, &ss, addrs, 2, &err);
	CHECK(t != NULL && strstr(t, "acl cs_o1 src 172.30.128.1/32\n") != NULL &&
	    strstr(t, "ssl_bump bump cs_b1 cs_o1\n") != NULL &&
	    strstr(t, "ssl_bump bump cs_step1 CONNECT cs_s1 cs_o1\n") != NULL &&
	    strstr(t, "request_header_access Authorization deny cs_s1 "
	    "cs_o1\n") != NULL && strstr(t, "request_header_add Authorization "
	    "\"Bearer bob-value-123\" cs_s1 cs_https cs_o1\n") != NULL,
	    "an owner's secret for the owner's address alone");
	CHECK(t != NULL && strstr(t, "ssl_bump bump cs_b0\n") != NULL &&
	    strstr(t, " cs_s0 cs_https\n") != NULL, "a shared one for all");
	free(t);
	snprintf(v[1].addr, sizeof(v[1].addr), "1.2.3.4 all");
	t = proxy_conf(&cfg, &ss, addrs, 2, &err);
	CHECK(t != NULL && strstr(t, "bob-value") == NULL &&
	    strstr(t, "1.2.3.4") == NULL,
	    "an address that is not one: left out");
	free(t);
	v[1].addr[0] = '\0';

	cfg.egress_hosts = "api.example.test *.mirror.example.test";
	t = proxy_conf(&cfg, &ss, addrs, 2, &err);
	CHECK(t != NULL && strstr(t, "acl cs_hosts dstdomain api.example.test "
	    ".mirror.example.test\n") != NULL && strstr(t, "ssl_bump bump "
	    "!cs_hosts_sni\n") != NULL && strstr(t, "deny_info "
	    "ERR_CS_EGRESS_HOSTS cs_hosts\n") != NULL, "host list");
	free(t);
	cfg.egress_hosts = "api.example.test \"x";
	CHECK(proxy_conf(&cfg, &ss, addrs, 2, &err) == NULL,
	    "a bad host list refused");
	cfg.egress_hosts = "";
	cfg.proxy_dir = "/var/lib/cs proxy";
	CHECK(proxy_conf(&cfg, &ss, addrs, 2, &err) == NULL,
	    "a path with a space refused");
	cfg.proxy_dir = "/var/lib/cs/proxy";
	CHECK(proxy_conf(&cfg, &ss, bad, 1, &err) == NULL,
	    "a bad address refused");
}

static void
test_owneraddr(void)
{
	struct error	 err;
	char		 a[OWNERADDR_MAX];

	CHECK(owneraddr_pick("172.30.0.0/16", "172.30.0.0/17", 1, a, &err) == 0 &&
	    strcmp(a, "172.30.128.1") == 0, "slot 1: the upper half's first");
	CHECK(owneraddr_pick("172.30.0.0/16", "172.30.0.0/17", 300, a, &err) ==
	    0 && strcmp(a, "172.30.129.44") == 0, "slot 300");
	CHECK(owneraddr_pick("10.9.0.0/24", "10.9.0.0/25", 126, a, &err) == 0 &&
	    strcmp(a, "10.9.0.254") == 0, "the last before the broadcast");
	CHECK(owneraddr_pick("10.9.0.0/24", "10.9.0.0/25", 127, a, &err) == -1 &&
	    err.kind == ERR_UNAVAILABLE && a[0] == '\0', "full");
	CHECK(owneraddr_pick("172.30.0.0/16", NULL, 1, a, &err) == -1,
	    "no dynamic range: none");
	CHECK(owneraddr_pick("172.30.0.0/16", "172.30.128.0/17", 1, a, &err) ==
	    -1, "a range that is not the lower half");
	CHECK(owneraddr_pick("172.30.0.0/16", "172.30.0.0/18", 1, a, &err) == -1,
	    "a smaller range");
	CHECK(owneraddr_pick("172.30.0.0/30", "172.30.0.0/31", 1, a, &err) == -1,
	    "too small a subnet");
	CHECK(owneraddr_pick("bogus", "172.30.0.0/17", 1, a, &err) == -1 &&
	    owneraddr_pick("172.30.0.0/x", "172.30.0.0/17", 1, a, &err) == -1 &&
	    owneraddr_pick("172.30.0.0/16", "172.30.0.0/17", 0, a, &err) == -1,
	    "bad words");
}

int
main(void)
{
	test_words();
	test_seal();
	test_mask();
	test_store();
	test_proxy_conf();
	test_owneraddr();
	return check_status();
}
