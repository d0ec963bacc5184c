/* proxy.c: see proxy.h. */
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "base/secret.h"
#include "sandbox/owneraddr.h"
#include "sandbox/proxy.h"
#include "sandbox/secrets.h"

#define HOST_ADDRS_MAX	64

/* Always refused, whatever SANDBOX_EGRESS_ALLOW says. */
static const char never[] = "0.0.0.0/8 127.0.0.0/8 169.254.0.0/16 "
    "224.0.0.0/4 240.0.0.0/4 ::1 fe80::/10 ff00::/8";
/* Refused unless SANDBOX_EGRESS_ALLOW opens them. */
static const char private[] = "10.0.0.0/8 100.64.0.0/10 172.16.0.0/12 "
    "192.168.0.0/16 fc00::/7";

/* A path squid reads: no space, quote, backslash or control character. */
static bool
path_ok(const char *p)
{
	for (; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || *p == '"' || *p == '\\' ||
		    *p == '\'' || *p == '#' || (unsigned char)*p >= 0x7f)
			return false;
	return true;
}

/* An address the host has, as text: digits, hex, '.', ':' and '/' only. */
static bool
addr_ok(const char *a)
{
	size_t	 n = strlen(a);

	return n > 0 && n < 64 &&
	    strspn(a, "0123456789abcdefABCDEF.:/") == n;
}

/* s as a quoted squid value: \ and " escaped, % doubled (logformat). */
static void
quoted(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s != '\0'; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		else if (*s == '%')
			fputc('%', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* The hosts of a list "a,b,c" on one line, separated by spaces. */
static void
hosts_line(FILE *f, const char *list)
{
	for (; *list != '\0'; list++)
		fputc(*list == ',' ? ' ' : *list, f);
}

/* SANDBOX_EGRESS_HOSTS's words are host names ("*." allowed). */
static bool
hosts_ok(const char *list)
{
	char	 host[SECRET_HOST_MAX];
	size_t	 len;

	for (;;) {
		list += strspn(list, " \t");
		if (*list == '\0')
			return true;
		len = strcspn(list, " \t");
		if (len >= sizeof(host))
			return false;
		memcpy(host, list, len);
		host[len] = '\0';
		if (!secret_host_valid(host, true))
			return false;
		list += len;
	}
}

/* The words of SANDBOX_EGRESS_HOSTS for squid: "*.a.b" as ".a.b". */
static void
hosts_words(FILE *f, const char *list)
{
	size_t	 len;

	for (;;) {
		list += strspn(list, " \t");
		if (*list == '\0')
			return;
		len = strcspn(list, " \t");
		if (strncmp(list, "*.", 2) == 0)
			fprintf(f, " %.*s", (int)len - 1, list + 1);
		else
			fprintf(f, " %.*s", (int)len, list);
		list += len;
	}
}

/*
 * Is s added to requests: with its value, and for an owner's secret only
 * with the owner's fixed address (a checked IPv4 address).
 */
static bool
injected(const struct secret *s)
{
	struct in_addr	 in;

	if (s->value == NULL)
		return false;
	if (s->owner[0] == '\0')
		return true;
	return s->addr[0] != '\0' && inet_pton(AF_INET, s->addr, &in) == 1;
}

/* " cs_oI" for an owner's secret I (its address's acl), "" for a shared one. */
static const char *
owned(const struct secret *s, size_t i, char *buf, size_t n)
{
	if (s->owner[0] != '\0')
		snprintf(buf, n, " cs_o%zu", i);
	else
		buf[0] = '\0';
	return buf;
}

char *
proxy_conf(const struct config *cfg, const struct secrets *ss,
    const char *const *host_addrs, size_t n, struct error *err)
{
	FILE		*f;
	char		*buf = NULL, *hv, *allow, *a, *save, who[32];
	size_t		 len = 0, i;
	bool		 hosts;

	if (!path_ok(cfg->proxy_dir) || !path_ok(cfg->proxy_hosts_file) ||
	    !path_ok(cfg->proxy_ca)) {
		error_kind(err, ERR_INVALID, "SANDBOX_PROXY_DIR, _HOSTS_FILE or "
		    "_CA: a path with a space, quote or control character "
		    "cannot go into the proxy's configuration");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!addr_ok(host_addrs[i])) {
			error_set(err, "proxy: a host address that is not one");
			return NULL;
		}
	hosts = cfg->egress_hosts != NULL && cfg->egress_hosts[0] != '\0';
	if (hosts && !hosts_ok(cfg->egress_hosts)) {
		error_kind(err, ERR_INVALID, "SANDBOX_EGRESS_HOSTS: not a list "
		    "of host names");
		return NULL;
	}
	if ((f = open_memstream(&buf, &len)) == NULL) {
		error_set(err, "proxy: out of memory");
		return NULL;
	}
	fprintf(f,
	    "# Written by code-sandbox (sandboxctl proxy-config) from its "
	    "settings and\n# secrets: do not edit, it is written again.\n"
	    "include %s/listen.conf\n"
	    "pid_filename %s/squid.pid\n"
	    "cache_log %s/cache.log\n"
	    "access_log stdio:%s/access.log\n"
	    "coredump_dir %s\n"
	    "sslcrtd_program /usr/lib/squid/security_file_certgen -s %s/ssl_db "
	    "-M 4MB\n"
	    "sslcrtd_children 4 startup=1 idle=1\n"
	    "hosts_file %s\n"
	    "cache deny all\n"
	    "cache_mem 8 MB\n"
	    "visible_hostname code-sandbox-proxy\n"
	    "httpd_suppress_version_string on\n"
	    "via off\n"
	    "forwarded_for delete\n"
	    "shutdown_lifetime 1 seconds\n"
	    "pinger_enable off\n"
	    "read_ahead_gap 1 MB\n"
	    "sslproxy_cert_error deny all\n",
	    cfg->proxy_dir, cfg->proxy_dir, cfg->proxy_dir, cfg->proxy_dir,
	    cfg->proxy_dir, cfg->proxy_dir, cfg->proxy_hosts_file);
	if (cfg->proxy_ca[0] != '\0')
		fprintf(f, "tls_outgoing_options cafile=%s\n", cfg->proxy_ca);

	/* The packet filter's address rules, for every destination resolved. */
	fprintf(f, "acl cs_never dst %s\n", never);
	for (i = 0; i < n; i++)
		fprintf(f, "acl cs_never dst %s\n", host_addrs[i]);
	fprintf(f, "acl cs_private dst %s\n", private);
	if ((allow = strdup(cfg->egress_allow)) == NULL)
		goto oom;
	fprintf(f, "acl cs_allow dst 255.255.255.255/32\n");
	for (a = strtok_r(allow, " \t", &save); a != NULL;
	    a = strtok_r(NULL, " \t", &save))
		if (config_valid_ipv4(a, true))
			fprintf(f, "acl cs_allow dst %s\n", a);
	free(allow);
	fprintf(f, "error_directory %s/errors\n", cfg->proxy_dir);
	if (hosts) {
		/* SANDBOX_EGRESS_HOSTS: names only, an answer that says so. */
		fprintf(f, "acl cs_hosts dstdomain");
		hosts_words(f, cfg->egress_hosts);
		fprintf(f, "\nacl cs_hosts_sni ssl::server_name");
		hosts_words(f, cfg->egress_hosts);
		fprintf(f, "\nacl cs_tls_port port 443\n"
		    "deny_info ERR_CS_EGRESS_HOSTS cs_hosts\n"
		    "http_access deny CONNECT !cs_tls_port\n"
		    "http_access deny !CONNECT !cs_hosts\n");
	}
	fprintf(f,
	    "deny_info ERR_ACCESS_DENIED cs_never\n"
	    "http_access deny !sandbox\n"
	    "http_access deny to_localhost\n"
	    "http_access deny cs_never\n"
	    "http_access deny cs_private !cs_allow\n"
	    "http_access allow sandbox\n"
	    "http_access deny all\n");

	/*
	 * TLS: bump the secrets' hosts, splice the rest. An owner's secret
	 * (person scope) only for the owner's own fixed address
	 * (owneraddr.h): its hosts are bumped for that sandbox alone, every
	 * other sandbox's TLS to them is spliced as to any host.
	 *
	 * A CONNECT to a secret's host by name (the proxy variables) is
	 * bumped at once, before any upstream connection: the request then
	 * goes out on a connection the proxy keeps to that host (one TLS
	 * handshake fewer per request), still verified before any header is
	 * sent. Redirected TLS (no name yet) is peeked at for its server
	 * name (SNI) first. dstdomain -n: no reverse lookup of an address.
	 */
	fprintf(f, "acl cs_step1 at_step SslBump1\n");
	for (i = 0; i < ss->n; i++) {
		if (!injected(&ss->v[i]))
			continue;
		fprintf(f, "acl cs_s%zu dstdomain -n ", i);
		hosts_line(f, ss->v[i].hosts);
		fputc('\n', f);
		fprintf(f, "acl cs_b%zu ssl::server_name ", i);
		hosts_line(f, ss->v[i].hosts);
		fputc('\n', f);
		if (ss->v[i].owner[0] != '\0')
			fprintf(f, "acl cs_o%zu src %s/32\n", i, ss->v[i].addr);
	}
	for (i = 0; i < ss->n; i++)
		if (injected(&ss->v[i]))
			fprintf(f, "ssl_bump bump cs_step1 CONNECT cs_s%zu%s\n",
			    i, owned(&ss->v[i], i, who, sizeof(who)));
	fprintf(f, "ssl_bump peek cs_step1\n");
	/*
	 * A host not listed: bumped with the installation's CA (the sandbox
	 * trusts it) only to answer the request with the page naming
	 * SANDBOX_EGRESS_HOSTS, as plain HTTP gets, in place of a cut
	 * handshake; http_access refuses it before any upstream request.
	 * Listed hosts stay spliced unless a secret wants them.
	 */
	if (hosts)
		fprintf(f, "ssl_bump bump !cs_hosts_sni\n");
	for (i = 0; i < ss->n; i++)
		if (injected(&ss->v[i]))
			fprintf(f, "ssl_bump bump cs_b%zu%s\n", i,
			    owned(&ss->v[i], i, who, sizeof(who)));
	fprintf(f, "ssl_bump splice all\n");

	/* The headers: over HTTPS only, to the secret's hosts only. */
	fprintf(f, "acl cs_https proto HTTPS\n");
	for (i = 0; i < ss->n; i++) {
		if (!injected(&ss->v[i]))
			continue;
		owned(&ss->v[i], i, who, sizeof(who));
		fprintf(f, "request_header_access %s deny cs_s%zu%s\n",
		    ss->v[i].header, i, who);
		if ((hv = secrets_header_value(&ss->v[i])) == NULL) {
			fclose(f);
			free(buf);
			error_set(err, "proxy: out of memory");
			return NULL;
		}
		fprintf(f, "request_header_add %s ", ss->v[i].header);
		quoted(f, hv);
		fprintf(f, " cs_s%zu cs_https%s\n", i, who);
		crypto_wipe(hv, strlen(hv));
		free(hv);
	}
	if (fclose(f) != 0) {
		free(buf);
		error_set(err, "proxy: out of memory");
		return NULL;
	}
	return buf;
oom:
	fclose(f);
	free(buf);
	error_set(err, "proxy: out of memory");
	return NULL;
}

/* The host's own addresses, as text (at most HOST_ADDRS_MAX). */
static size_t
host_addrs(char addrs[HOST_ADDRS_MAX][64])
{
	struct ifaddrs	*ifa, *p;
	size_t		 n = 0;
	void		*src;

	if (getifaddrs(&ifa) == -1)
		return 0;
	for (p = ifa; p != NULL && n < HOST_ADDRS_MAX; p = p->ifa_next) {
		if (p->ifa_addr == NULL)
			continue;
		if (p->ifa_addr->sa_family == AF_INET)
			src = &((struct sockaddr_in *)(void *)p->ifa_addr)->sin_addr;
		else if (p->ifa_addr->sa_family == AF_INET6)
			src = &((struct sockaddr_in6 *)(void *)p->ifa_addr)->sin6_addr;
		else
			continue;
		/* Loopback and link-local are refused whole already. */
		if (inet_ntop(p->ifa_addr->sa_family, src, addrs[n], 64) != NULL &&
		    strncmp(addrs[n], "127.", 4) != 0 &&
		    strncmp(addrs[n], "169.254.", 8) != 0 &&
		    strcmp(addrs[n], "::1") != 0 &&
		    strncmp(addrs[n], "fe80:", 5) != 0)
			n++;
	}
	freeifaddrs(ifa);
	return n;
}

/*
 * The owners' fixed addresses for their secrets (person scope): a secret
 * whose owner has none (no engine, an older network) is left out, said on
 * the log.
 */
static void
owner_addrs(const struct config *cfg, struct db *db, struct secrets *ss)
{
	struct docker	*d = NULL;
	struct error	 err;
	size_t		 i;

	for (i = 0; i < ss->n; i++) {
		if (ss->v[i].owner[0] == '\0' || !owneraddr_wanted(cfg))
			continue;
		if (d == NULL && docker_open(cfg->docker_host,
		    cfg->docker_tls_verify, cfg->docker_cert_path, &d,
		    &err) == -1) {
			log_warn("proxy: owners' secrets left out: %s", err.msg);
			return;
		}
		if (owneraddr_get(cfg, db, d, ss->v[i].owner, ss->v[i].addr,
		    &err) == -1)
			log_warn("proxy: secret %s left out (no address for "
			    "owner %s): %s", ss->v[i].name, ss->v[i].owner,
			    err.msg);
	}
	docker_close(d);
}

int
proxy_write(const struct config *cfg, struct db *db, bool create,
    struct error *err)
{
	struct secrets	 ss;
	struct stat	 st;
	char		 addrs[HOST_ADDRS_MAX][64], path[4096], tmp[4096];
	const char	*ptrs[HOST_ADDRS_MAX];
	char		*text;
	size_t		 n, i, len;
	int		 fd;

	if (!create && (stat(cfg->proxy_dir, &st) == -1 ||
	    !S_ISDIR(st.st_mode)))
		return error_kind(err, ERR_NOT_FOUND, "no proxy folder %s "
		    "(containers/proxy.sh start makes it)", cfg->proxy_dir);
	if (create && mkdir(cfg->proxy_dir, 0750) == -1 && errno != EEXIST)
		return error_set(err, "proxy: cannot make %s: %s",
		    cfg->proxy_dir, strerror(errno));
	if (stat(cfg->proxy_dir, &st) == -1 || !S_ISDIR(st.st_mode))
		return error_set(err, "proxy: %s is not a folder",
		    cfg->proxy_dir);
	if (secrets_load(cfg, db, NULL, true, &ss, err) == -1)
		return -1;
	owner_addrs(cfg, db, &ss);
	n = host_addrs(addrs);
	for (i = 0; i < n; i++)
		ptrs[i] = addrs[i];
	text = proxy_conf(cfg, &ss, ptrs, n, err);
	secrets_free(&ss);
	if (text == NULL)
		return -1;
	len = strlen(text);
	snprintf(path, sizeof(path), "%s/squid.conf", cfg->proxy_dir);
	snprintf(tmp, sizeof(tmp), "%s/.squid.conf.%ld", cfg->proxy_dir,
	    (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
	    0600);
	if (fd == -1 || write(fd, text, len) != (ssize_t)len || fsync(fd) == -1) {
		if (fd != -1)
			close(fd);
		unlink(tmp);
		crypto_wipe(text, len);
		free(text);
		return error_set(err, "proxy: cannot write %s", tmp);
	}
	crypto_wipe(text, len);
	free(text);
	/* The folder's group (the proxy's user) may read it, nobody else. */
	if (fchown(fd, (uid_t)-1, st.st_gid) == -1 || fchmod(fd, 0640) == -1 ||
	    close(fd) == -1 || rename(tmp, path) == -1) {
		unlink(tmp);
		return error_set(err, "proxy: cannot put %s in place: %s", path,
		    strerror(errno));
	}
	return 0;
}

/* The pid in squid.pid, or -1. */
static long
proxy_pid(const struct config *cfg)
{
	char		 path[4096], buf[32], *end;
	ssize_t		 r;
	long		 pid;
	int		 fd;

	snprintf(path, sizeof(path), "%s/squid.pid", cfg->proxy_dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return -1;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	pid = strtol(buf, &end, 10);
	if (pid <= 1 || (*end != '\n' && *end != '\0'))
		return -1;
	return pid;
}

struct json_object *
proxy_status(const struct config *cfg, struct db *db)
{
	struct json_object	*o = json_object_new_object();
	struct secrets		 ss;
	struct stat		 st;
	char			 path[4096];
	long			 pid = proxy_pid(cfg);

	js_set_str(o, "dir", cfg->proxy_dir);
	js_set_int(o, "port", cfg->proxy_port);
	js_set_bool(o, "running", pid > 0 &&
	    (kill((pid_t)pid, 0) == 0 || errno == EPERM));
	snprintf(path, sizeof(path), "%s/squid.conf", cfg->proxy_dir);
	js_set_bool(o, "configured", stat(path, &st) == 0);
	snprintf(path, sizeof(path), "%s/ca.pem", cfg->proxy_dir);
	js_set_bool(o, "ca", stat(path, &st) == 0);
	if (secrets_load(cfg, db, NULL, false, &ss, NULL) == 0) {
		js_set_int(o, "secrets", (long long)ss.n);
		secrets_free(&ss);
	}
	if (cfg->egress_hosts[0] != '\0')
		js_set_str(o, "hosts", cfg->egress_hosts);
	return o;
}

enum lookup_result
proxy_reload(const struct config *cfg, struct error *err)
{
	char		 path[4096], buf[32];
	ssize_t		 r;
	long		 pid;
	char		*end;
	int		 fd;

	snprintf(path, sizeof(path), "%s/squid.pid", cfg->proxy_dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return LOOKUP_NONE;
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (r <= 0)
		return LOOKUP_NONE;
	buf[r] = '\0';
	pid = strtol(buf, &end, 10);
	if (pid <= 1 || (*end != '\n' && *end != '\0'))
		return LOOKUP_NONE;
	if (kill((pid_t)pid, SIGHUP) == -1) {
		if (errno == ESRCH)
			return LOOKUP_NONE;
		error_set(err, "proxy: cannot signal the proxy (pid %ld): %s",
		    pid, strerror(errno));
		return LOOKUP_ERROR;
	}
	return LOOKUP_FOUND;
}

int
proxy_apply_ctl(const struct config *cfg, struct db *db)
{
	struct error		 err;
	enum lookup_result	 rc;

	if (proxy_write(cfg, db, false, &err) == -1) {
		if (err.kind == ERR_NOT_FOUND) {
			fprintf(stderr, "sandboxctl: note: %s; the proxy reads "
			    "the secrets when it starts\n", err.msg);
			return 0;
		}
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return -1;
	}
	if ((rc = proxy_reload(cfg, &err)) == LOOKUP_ERROR) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return -1;
	}
	fprintf(stderr, "sandboxctl: the proxy's configuration is written%s\n",
	    rc == LOOKUP_FOUND ? " and the proxy reads it now" :
	    " (no proxy runs now)");
	return 0;
}

int
proxy_ca_read(const struct config *cfg, char *pem, size_t n,
    struct error *err)
{
	char		 path[4096];
	size_t		 got = 0, i;
	ssize_t		 r;
	int		 fd;

	if (n < 64)
		return error_set(err, "proxy: no room for the CA");
	snprintf(path, sizeof(path), "%s/ca.pem", cfg->proxy_dir);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		return error_set(err, "no CA at %s (containers/proxy.sh makes "
		    "it): %s", path, strerror(errno));
	while (got < n - 1) {
		if ((r = read(fd, pem + got, n - 1 - got)) <= 0) {
			if (r == -1 && errno == EINTR)
				continue;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (got == n - 1)
		return error_set(err, "%s is larger than %zu bytes", path,
		    n - 2);
	pem[got] = '\0';
	while (got > 0 && (pem[got - 1] == '\n' || pem[got - 1] == '\r'))
		pem[--got] = '\0';
	if (strncmp(pem, "-----BEGIN CERTIFICATE-----", 27) != 0)
		return error_set(err, "%s is not a PEM certificate", path);
	for (i = 0; i < got; i++)
		if ((pem[i] < 0x20 && pem[i] != '\n' && pem[i] != '\r') ||
		    (unsigned char)pem[i] >= 0x7f)
			return error_set(err, "%s is not a PEM certificate", path);
	return 0;
}
