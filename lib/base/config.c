/*
 * config.c: settings from the env file and the environment.
 *
 * The table below is the single list of settings. Each entry names the
 * variable, its default, how to parse it and where it goes in struct config.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/clientaddr.h"
#include "base/config.h"
#include "base/envfile.h"
#include "base/secret.h"
#include "base/url.h"

enum kind { K_STR, K_SECRET, K_URL, K_LONG, K_SIZE, K_CPUS, K_BOOL, K_PATH,
	K_DOCKER_HOST, K_NAME, K_ADDRS, K_HEADER, K_WARN_REFUSE };

struct setting {
	const char	*name;
	enum kind	 kind;
	const char	*def;		/* NULL: required */
	long long	 min, max;	/* for numbers */
	size_t		 off;		/* offset in struct config */
	const char	*help;
};

#define OFF(f) offsetof(struct config, f)

static const struct setting settings[] = {
	{ "SANDBOX_API_KEY", K_SECRET, NULL, 16, 512, OFF(api_key),
	  "Secret asked for on the sign-in page; also signs download links. Required." },
	{ "SANDBOX_HOST", K_STR, "127.0.0.1", 1, 255, OFF(host),
	  "Address the web server listens on." },
	{ "SANDBOX_PORT", K_LONG, "8891", 1, 65535, OFF(port),
	  "Port the web server listens on." },
	{ "SANDBOX_PUBLIC_URL", K_URL, "", 0, URL_MAX, OFF(public_url),
	  "Public origin clients use (https://sandbox.example.com, without /mcp). Default http://SANDBOX_HOST:SANDBOX_PORT; required when SANDBOX_HOST is 0.0.0.0 or ::." },
	{ "MAX_OUTPUT_BYTES", K_LONG, "50000", 256, 10000000, OFF(max_output_bytes),
	  "Per-stream output kept from a command; above it the middle is cut." },
	{ "SANDBOX_CHANNEL", K_BOOL, "1", 0, 1, OFF(channel),
	  "Run commands over one persistent channel to the supervisor per server process; 0: one engine exec per command." },
	{ "FILE_TTL", K_LONG, "604800", 60, 315360000, OFF(file_ttl),
	  "Seconds without change after which a top-level entry of /sandbox is removed." },
	{ "LINK_TTL", K_LONG, "86400", 10, 31536000, OFF(link_ttl),
	  "Seconds a share_file download link stays valid." },
	{ "TERMINAL_MAX", K_LONG, "4", 0, 1000, OFF(terminal_max),
	  "Terminals (terminal_start) one owner may have open at once; 0 turns the terminal tools off." },
	{ "TERMINAL_IDLE", K_LONG, "3600", 10, 2592000, OFF(terminal_idle),
	  "Seconds without input or output after which a terminal closes itself." },
	{ "TERMINAL_LINK_TTL", K_LONG, "900", 10, 86400, OFF(terminal_link_ttl),
	  "Seconds a terminal_link (a person typing into a terminal from a browser) stays valid." },
	{ "SANDBOX_IMAGE", K_STR, "code-sandbox:latest", 1, 255, OFF(image),
	  "Docker image of the sandbox container." },
	/* At most 80: a person's names add 13, a snapshot helper's more. */
	{ "SANDBOX_CONTAINER", K_NAME, "code-sandbox", 1, 80, OFF(container),
	  "Name of the one long-lived sandbox container (at most 80 characters)." },
	{ "SANDBOX_VOLUME", K_NAME, "code-sandbox-data", 1, 80, OFF(volume),
	  "Named volume mounted at /sandbox (at most 80 characters)." },
	{ "SANDBOX_MEMORY", K_SIZE, "2g", 6LL << 20, 1LL << 50, OFF(memory_bytes),
	  "Container memory limit (bytes, or with k, m, g suffix); swap is not added." },
	{ "SANDBOX_CPUS", K_CPUS, "2", 10000000LL, 1024000000000LL, OFF(nano_cpus),
	  "Container CPU limit in CPUs (may be fractional: 0.5)." },
	{ "SANDBOX_PIDS_LIMIT", K_LONG, "1024", 16, 4194304, OFF(pids_limit),
	  "Maximum number of processes in the container." },
	{ "SANDBOX_DB", K_PATH, "state.db", 1, PATH_MAX, OFF(db_path),
	  "SQLite file for sessions, OAuth state and links (relative to the env file's folder)." },
	{ "DOCKER_HOST", K_DOCKER_HOST, "unix:///var/run/docker.sock", 1, 1024, OFF(docker_host),
	  "Docker engine: unix:///path/docker.sock, or tcp://host:port (TLS with DOCKER_TLS_VERIFY)." },
	{ "DOCKER_TLS_VERIFY", K_BOOL, "0", 0, 1, OFF(docker_tls_verify),
	  "Use TLS with client certificates for a tcp:// engine." },
	{ "DOCKER_CERT_PATH", K_STR, "", 0, PATH_MAX, OFF(docker_cert_path),
	  "Folder with ca.pem, cert.pem and key.pem for a TLS engine." },
	{ "SANDBOX_PING_INTERVAL", K_LONG, "15", 1, 300, OFF(ping_interval),
	  "Seconds between keep-alive pings on a streamed response." },
	{ "SANDBOX_THREADS", K_LONG, "32", 1, 256, OFF(threads),
	  "Requests each FastCGI process serves at once: threads start on demand, up to this many." },
	{ "SANDBOX_DB_CACHE", K_LONG, "256", 16, 1048576, OFF(db_cache_kib),
	  "SQLite page cache of each thread's database connection, in KiB." },
	{ "SANDBOX_MALLOC_ARENAS", K_LONG, "1", 1, 64, OFF(malloc_arenas),
	  "malloc arenas of each FastCGI process (glibc M_ARENA_MAX); more trade memory for less lock contention." },
	{ "SANDBOX_MAX_TIMEOUT", K_LONG, "86400", 1, 2592000, OFF(max_timeout),
	  "Largest timeout (seconds) execute accepts." },
	{ "SANDBOX_INLINE_WAIT", K_LONG, "20", 1, 50, OFF(inline_wait),
	  "Seconds a 2026-07-28 execute waits for its command before answering with a task or its run_id." },
	{ "SANDBOX_MAX_RUNNING", K_LONG, "56", 1, 100000, OFF(max_running),
	  "Commands running at once on the server; execute refuses more." },
	{ "SANDBOX_MAX_RUNNING_PER_OWNER", K_LONG, "28", 1, 100000, OFF(max_running_per_owner),
	  "Commands one owner (the operator's key, or one personal key) may have running at once; the default is half of SANDBOX_MAX_RUNNING's, so one person alone cannot take every place." },
	{ "SANDBOX_SESSION_TTL", K_LONG, "86400", 60, 31536000, OFF(session_ttl),
	  "Seconds an idle MCP session is kept." },
	{ "SANDBOX_ALLOW_KEY_BEARER", K_BOOL, "0", 0, 1, OFF(allow_key_bearer),
	  "Also accept SANDBOX_API_KEY itself as a bearer token on /mcp." },
	{ "SANDBOX_ACCESS_TOKEN_TTL", K_LONG, "3600", 60, 31536000, OFF(access_token_ttl),
	  "Lifetime of OAuth access tokens, seconds." },
	{ "SANDBOX_REFRESH_TOKEN_TTL", K_LONG, "2592000", 300, 315360000, OFF(refresh_token_ttl),
	  "Lifetime of OAuth refresh tokens, seconds." },
	{ "SANDBOX_AUDIT_RETENTION", K_LONG, "7776000", 3600, 315360000, OFF(audit_retention),
	  "Seconds audit log rows (the run table) are kept; stored command results go after a day." },
	{ "SANDBOX_CLEANUP_INTERVAL", K_LONG, "3600", 60, 31536000, OFF(cleanup_interval),
	  "Seconds between automatic clean-up passes (FILE_TTL, audit pruning), started by requests." },
	{ "SANDBOX_ALLOWED_ORIGINS", K_STR, "", 0, 4096, OFF(allowed_origins),
	  "Extra browser origins allowed on /mcp, space-separated." },
	{ "SANDBOX_SCOPE", K_STR, "shared", 0, 16, OFF(scope),
	  "shared: one sandbox for everyone; person: one container and volume per owner (personal key)." },
	{ "SANDBOX_IDLE_STOP", K_LONG, "1800", 1, 31536000, OFF(idle_stop),
	  "person scope: seconds without a request or a running command after which an owner's container is stopped (files and packages are kept)." },
	{ "SANDBOX_MAX_SANDBOXES", K_LONG, "0", 0, 10000, OFF(max_sandboxes),
	  "person scope: containers running at once (0: no cap); at the cap the least recently used idle one is stopped." },
	{ "SANDBOX_EGRESS", K_STR, "internet", 4, 8, OFF(egress),
	  "What the sandbox reaches: internet (public addresses only, not the host, link-local, private ranges or other containers), none (no network) or open (Docker's default bridge, everything)." },
	{ "SANDBOX_NETWORK", K_NAME, "code-sandbox", 1, 64, OFF(network),
	  "Docker network of the internet policy; made with its firewall rules by containers/netpolicy.sh (root)." },
	{ "SANDBOX_EGRESS_ALLOW", K_STR, "", 0, 4096, OFF(egress_allow),
	  "IPv4 addresses or CIDRs the internet policy lets through although private (an internal mirror), space-separated; read by containers/netpolicy.sh." },
	{ "SANDBOX_DNS", K_STR, "", 0, 1024, OFF(dns),
	  "Resolvers the internet policy allows port 53 to (IPv4, space-separated); default the host's (/etc/resolv.conf)." },
	{ "SANDBOX_RUNTIME", K_STR, "", 0, 64, OFF(runtime),
	  "OCI runtime of the container (runsc for gVisor); empty for the engine's default." },
	{ "SANDBOX_DISK_LIMIT", K_SIZE, "10g", 6LL << 20, 1LL << 50, OFF(disk_limit),
	  "Most bytes /sandbox may hold (a fixed-size file system from containers/sandbox-disk.sh, else a watchdog)." },
	{ "SANDBOX_LAYER_LIMIT", K_SIZE, "10g", 6LL << 20, 1LL << 50, OFF(layer_limit),
	  "Most bytes the container's own layer (packages, files outside /sandbox) may hold; watched." },
	{ "SANDBOX_TRUSTED_PROXIES", K_ADDRS, "", 0, 4096, OFF(trusted_proxies),
	  "Reverse proxies whose forwarding header names the client (addresses or CIDR blocks, space-separated); empty: the peer is the client." },
	{ "SANDBOX_CLIENT_ADDR_HEADER", K_HEADER, "X-Forwarded-For", 1, 64, OFF(client_addr_header),
	  "Header a trusted proxy puts the client address in (X-Forwarded-For, or a tunnel's own such as CF-Connecting-IP)." },
	{ "SANDBOX_REDIRECT_HOSTS", K_STR, "claude.ai claude.com", 0, 4096, OFF(redirect_hosts),
	  "Redirect hosts the sign-in page shows without a warning, space-separated (loopback hosts never warn)." },
	{ "SANDBOX_REDIRECT_UNKNOWN", K_WARN_REFUSE, "warn", 0, 16, OFF(redirect_refuse),
	  "Sign-in for a redirect host not in SANDBOX_REDIRECT_HOSTS: warn (show a warning) or refuse." },
	{ "SANDBOX_REGISTER_PER_HOUR", K_LONG, "1000", 1, 1000000, OFF(register_per_hour),
	  "Client registrations accepted per client address and hour." },
	{ "SANDBOX_PENDING_SIGNINS", K_LONG, "1000", 10, 1000000, OFF(pending_max),
	  "Sign-in pages open at once; past it the oldest stop working." },
	{ "SANDBOX_CIMD_FETCHES_PER_MINUTE", K_LONG, "30", 1, 100000, OFF(cimd_per_minute),
	  "Client ID Metadata Document fetches per minute, overall (a fifth of it per host)." },
	{ "SANDBOX_CIMD_ALLOW_ADDRS", K_ADDRS, "", 0, 4096, OFF(cimd_allow_addrs),
	  "Addresses and CIDR blocks a Client ID Metadata Document's host may resolve to though not public (an internal client registry), space-separated; empty: public addresses only." },
	{ "SANDBOX_CIMD_CA", K_PATH, "", 0, PATH_MAX, OFF(cimd_ca),
	  "PEM file of the CA certificates that verify metadata document fetches to SANDBOX_CIMD_ALLOW_ADDRS (only those; public hosts keep the system's store); empty: the system's store." },
	{ "SANDBOX_BODY_DEADLINE", K_LONG, "30", 1, 3600, OFF(body_deadline),
	  "Seconds a request body may take to arrive; a stalled one is cut (408), freeing its worker." },
	{ "SANDBOX_UPLOAD_MAX_BYTES", K_SIZE, "2g", 1, 1LL << 40, OFF(upload_max_bytes),
	  "Most bytes one upload link accepts in all (bytes, or with k, m, g suffix); upload_link may ask for less." },
	{ "SANDBOX_SPOOL_DIR", K_PATH, "/var/tmp", 1, PATH_MAX, OFF(spool_dir),
	  "Folder on disk where /up keeps uploads of unknown length until they are complete (unnamed files, gone on exit), and where lighttpd.conf spools request bodies." },
	{ "SANDBOX_IMAGE_MAX_BYTES", K_SIZE, "100k", 1024, 64LL << 20, OFF(image_max_bytes),
	  "Largest image view_image returns to the model; larger ones are scaled down to fit." },
	{ "SANDBOX_IMAGE_MAX_DIM", K_LONG, "1568", 64, 16384, OFF(image_max_pixels),
	  "Longest side, in pixels, of an image view_image returns; larger ones are scaled down." },
	{ "SANDBOX_SHM_SIZE", K_SIZE, "1g", 64LL << 20, 1LL << 40, OFF(shm_bytes),
	  "Size of the container's /dev/shm (headless Chromium needs more than Docker's 64 MB); applies when the container is created." },
	{ "SANDBOX_PREVIEW_URL", K_STR, "", 0, 255, OFF(preview_url),
	  "Origin of preview links with a * for each link's id (https://*.preview.example.net): needs a wildcard DNS record and certificate, and a front routing those hosts to the preview program. Empty: http://ID.preview.localhost:PORT on a loopback server, no previews otherwise." },
	{ "SANDBOX_PREVIEW_CONNECTIONS", K_LONG, "64", 1, 100000, OFF(preview_conns),
	  "Most preview connections open at once per owner (a page loads its assets over several)." },
	{ "SANDBOX_PREVIEW_SOCKETS", K_STR, "", 0, 200, OFF(preview_sockets),
	  "Folder on the engine's host where the preview program puts a socket for each container, bound read-only into it, so that the supervisor hands the app's connections over rather than carrying their bytes (local engine only; absolute). Empty: previews/ beside SANDBOX_DB with a local engine, off with a remote one; off: always through the engine." },
	{ "SANDBOX_PROXY", K_BOOL, "0", 0, 1, OFF(proxy),
	  "Send the sandbox's HTTP and HTTPS through the egress proxy (containers/proxy.sh; needed by secrets); internet policy only. The sandbox then trusts the proxy's CA." },
	{ "SANDBOX_EGRESS_HOSTS", K_STR, "", 0, 4096, OFF(egress_hosts),
	  "Host names the sandbox alone may reach (space-separated; *.example.com for example.com and its subdomains), over HTTP and HTTPS through the egress proxy; everything else is refused at once. Needs SANDBOX_EGRESS=internet and SANDBOX_PROXY=1. Empty: the internet policy as it is." },
	{ "SANDBOX_SECRETS_KEY", K_PATH, "secrets.key", 1, PATH_MAX, OFF(secrets_key),
	  "File of the 32-byte key the secrets' values are sealed with in the database (AES-256-GCM; made on first use, mode 600; relative to the env file's folder)." },
	{ "SANDBOX_PROXY_DIR", K_PATH, "proxy", 1, PATH_MAX, OFF(proxy_dir),
	  "Folder of the egress proxy's generated configuration, its CA and its state (containers/proxy.sh; mode 700; relative to the env file's folder)." },
	{ "SANDBOX_PROXY_PORT", K_LONG, "3129", 1, 65535, OFF(proxy_port),
	  "Port of the egress proxy on the sandbox network's gateway (the one host address the sandbox may reach)." },
	{ "SANDBOX_PROXY_CA", K_PATH, "", 0, PATH_MAX, OFF(proxy_ca),
	  "A PEM file of CAs the egress proxy trusts for upstream servers besides the system store (an internal CA); empty for the system store only." },
	{ "SANDBOX_PROXY_HOSTS_FILE", K_PATH, "/etc/hosts", 1, PATH_MAX, OFF(proxy_hosts_file),
	  "The hosts file the egress proxy's resolver reads before DNS." },
	{ "SANDBOX_SNAPSHOT_DIR", K_PATH, "", 0, PATH_MAX, OFF(snapshot_dir),
	  "Folder on the server's host that holds the /sandbox archives of snapshots (made 0700 when missing); outside every container. Empty: snapshots/ beside SANDBOX_DB." },
	{ "SANDBOX_SNAPSHOTS", K_LONG, "10", 0, 10000, OFF(snapshot_max),
	  "Snapshots one sandbox (one owner in person scope) may keep; 0 turns the snapshot tools off." },
	{ "SANDBOX_SNAPSHOT_BYTES", K_SIZE, "20g", 1LL << 20, 1LL << 50, OFF(snapshot_bytes),
	  "Bytes the snapshots of one sandbox may take in all (its /sandbox archives and the layers' size as the engine reports it)." },
	{ "SANDBOX_SNAPSHOT_DEPTH", K_LONG, "16", 1, 100, OFF(snapshot_depth),
	  "Layers a snapshot's image may have beyond SANDBOX_IMAGE's (each snapshot taken after a restore adds one); past it the snapshot's image is flattened into one layer (the container's whole file system passes through the server once)." },
};

#define NSETTINGS (sizeof(settings) / sizeof(settings[0]))

int
config_describe(int i, const char **name, const char **def, const char **help)
{
	if (i < 0 || (size_t)i >= NSETTINGS)
		return 0;
	*name = settings[i].name;
	*def = settings[i].def;
	*help = settings[i].help;
	return 1;
}

/* A setting's value: the environment's, else the file's, else NULL. */
static const char *
lookup(const struct envfile *ef, const char *name)
{
	const char *v;

	if ((v = getenv(name)) != NULL)
		return v;
	return envfile_get(ef, name);
}

static int
parse_ll(const char *s, long long *out)
{
	char		*end;
	long long	 v;

	errno = 0;
	if (*s == '\0' || isspace((unsigned char)*s))
		return -1;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* "2g", "512m", "1048576": bytes. */
static int
parse_size(const char *s, long long *out)
{
	char		*end;
	long long	 v, mul = 1;

	errno = 0;
	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtoll(s, &end, 10);
	if (errno != 0)
		return -1;
	switch (tolower((unsigned char)*end)) {
	case '\0': break;
	case 'k': mul = 1LL << 10; end++; break;
	case 'm': mul = 1LL << 20; end++; break;
	case 'g': mul = 1LL << 30; end++; break;
	case 't': mul = 1LL << 40; end++; break;
	default: return -1;
	}
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end != '\0' || v > LLONG_MAX / mul)
		return -1;
	*out = v * mul;
	return 0;
}

/* "1.5" CPUs to nano-CPUs, without floating point surprises. */
static int
parse_cpus(const char *s, long long *out)
{
	long long	 whole = 0, frac = 0, scale = 1000000000LL;
	int		 digits = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	while (isdigit((unsigned char)*s)) {
		whole = whole * 10 + (*s++ - '0');
		if (whole > 100000)
			return -1;
	}
	if (*s == '.') {
		s++;
		while (isdigit((unsigned char)*s)) {
			if (++digits > 9)
				return -1;
			scale /= 10;
			frac += (*s++ - '0') * scale;
		}
	}
	if (*s != '\0')
		return -1;
	*out = whole * 1000000000LL + frac;
	return 0;
}

static int
parse_bool(const char *s, bool *out)
{
	if (strcmp(s, "1") == 0 || strcasecmp(s, "true") == 0 ||
	    strcasecmp(s, "yes") == 0 || strcasecmp(s, "on") == 0)
		*out = true;
	else if (strcmp(s, "0") == 0 || strcasecmp(s, "false") == 0 ||
	    strcasecmp(s, "no") == 0 || strcasecmp(s, "off") == 0 || *s == '\0')
		*out = false;
	else
		return -1;
	return 0;
}

/* The egress policy's settings (containers/netpolicy.sh reads the same). */
static bool
word_of(const char *s, size_t len, const char *const *set)
{
	for (; *set != NULL; set++)
		if (strlen(*set) == len && strncmp(*set, s, len) == 0)
			return true;
	return false;
}

bool
config_valid_ipv4(const char *s, bool cidr)
{
	int	 parts = 0;
	long	 v;

	for (;;) {
		if (*s < '0' || *s > '9')
			return false;
		if (s[0] == '0' && s[1] >= '0' && s[1] <= '9')
			return false;	/* no leading zeros (octal in some parsers) */
		for (v = 0; *s >= '0' && *s <= '9'; s++) {
			v = v * 10 + (*s - '0');
			if (v > 255)
				return false;
		}
		if (++parts == 4)
			break;
		if (*s++ != '.')
			return false;
	}
	if (*s == '\0')
		return true;
	if (!cidr || *s++ != '/' || *s < '0' || *s > '9')
		return false;
	if (s[0] == '0' && s[1] != '\0')
		return false;
	for (v = 0; *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (*s - '0')) > 32)
			return false;
	return *s == '\0';
}

/* Each space-separated word of list passes valid_ipv4; bad gets the first that does not. */
static bool
valid_list(const char *list, bool cidr, char *bad, size_t n)
{
	char	 w[64];
	size_t	 len;

	while (*list != '\0') {
		list += strspn(list, " \t");
		if ((len = strcspn(list, " \t")) == 0)
			break;
		if (len >= sizeof(w)) {
			snprintf(bad, n, "%.40s...", list);
			return false;
		}
		memcpy(w, list, len);
		w[len] = '\0';
		if (!config_valid_ipv4(w, cidr)) {
			snprintf(bad, n, "%s", w);
			return false;
		}
		list += len;
	}
	return true;
}

static int
check_egress(const struct config *c, struct error *err)
{
	static const char *const policies[] = { "internet", "none", "open",
	    NULL };
	char bad[64];

	if (!word_of(c->egress, strlen(c->egress), policies))
		return error_set(err, "SANDBOX_EGRESS: must be internet, none "
		    "or open");
	if (!valid_list(c->egress_allow, true, bad, sizeof(bad)))
		return error_set(err, "SANDBOX_EGRESS_ALLOW: %s is not an IPv4 "
		    "address or CIDR (IPv6 is not supported: the sandbox's "
		    "network is IPv4 only)", bad);
	if (!valid_list(c->dns, false, bad, sizeof(bad)))
		return error_set(err, "SANDBOX_DNS: %s is not an IPv4 address",
		    bad);
	if (c->egress_hosts[0] != '\0') {
		char	 host[SECRET_HOST_MAX];
		const char *p = c->egress_hosts;
		size_t	 len;

		if (strcmp(c->egress, "internet") != 0)
			return error_set(err, "SANDBOX_EGRESS_HOSTS: only with "
			    "SANDBOX_EGRESS=internet (with none there is no "
			    "network, with open no filter to enforce it)");
		if (!c->proxy)
			return error_set(err, "SANDBOX_EGRESS_HOSTS: needs "
			    "SANDBOX_PROXY=1 (the egress proxy enforces it)");
		for (;;) {
			p += strspn(p, " \t");
			if (*p == '\0')
				break;
			len = strcspn(p, " \t");
			if (len >= sizeof(host) || (memcpy(host, p, len),
			    host[len] = '\0', !secret_host_valid(host, true)))
				return error_set(err, "SANDBOX_EGRESS_HOSTS: %.80s "
				    "is not a host name (lower case, or *.name "
				    "for its subdomains; no address, no port)",
				    len < sizeof(host) ? host : "a name");
			p += len;
		}
	}
	if (strspn(c->runtime, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRST"
	    "UVWXYZ0123456789_.-") != strlen(c->runtime))
		return error_set(err, "SANDBOX_RUNTIME: use letters, digits, "
		    "'_', '.' and '-' only (an OCI runtime name such as runsc)");
	return 0;
}

/* Docker and container names: [a-zA-Z0-9][a-zA-Z0-9_.-]* */
static bool
valid_name(const char *s)
{
	if (!isalnum((unsigned char)*s))
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && strchr("_.-", *s) == NULL)
			return false;
	return true;
}

static bool
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* A wildcard listen address: every interface, no name clients could use. */
static bool
host_is_wildcard(const char *h)
{
	return strcmp(h, "0.0.0.0") == 0 || strcmp(h, "::") == 0 ||
	    strcmp(h, "[::]") == 0 || strcmp(h, "*") == 0;
}

/*
 * SANDBOX_PUBLIC_URL: an absolute http(s) URL (url.h) that is an origin
 * (RFC 6454 §4: scheme, host, port): the metadata, issuer, audience and
 * links append their own paths to it, so "https://host/mcp" would advertise
 * /mcp/mcp. A single trailing slash is allowed and dropped. Sets *url to
 * scheme://authority. Returns 0, or -1 with the reason in err (the value
 * cut short).
 */
static int
parse_public_url(const char *name, const char *s, char **url,
    struct error *err)
{
	struct url	 u;
	char		 shown[96];
	int		 n;

	if (url_split(s, &u) == -1 || strpbrk(u.rest, "?#") != NULL)
		return error_set(err, "%s: expected an absolute http(s) URL "
		    "without query, fragment or user info", name);
	n = (int)(u.rest - s);
	if (*u.rest != '\0' && strcmp(u.rest, "/") != 0) {
		snprintf(shown, sizeof(shown), "%.80s", s);
		return error_set(err, "%s: must be an origin "
		    "(scheme://host[:port]) without a path, query or fragment, "
		    "got %s%s; set %s=%.*s (clients then use %.*s/mcp)", name,
		    shown, strlen(s) > 80 ? "..." : "", name, n > 80 ? 80 : n, s,
		    n > 80 ? 80 : n, s);
	}
	if ((*url = strndup(s, (size_t)n)) == NULL)
		return error_set(err, "out of memory");
	return 0;
}

static char *
dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* Make a path absolute against base (a folder). */
static char *
absolutize(const char *base, const char *path)
{
	char	*out;
	size_t	 n;

	if (path[0] == '/')
		return strdup(path);
	n = strlen(base) + strlen(path) + 2;
	if ((out = malloc(n)) == NULL)
		return NULL;
	/* "/" and "x" make "/x", not "//x". */
	snprintf(out, n, "%s%s%s", base, strcmp(base, "/") == 0 ? "" : "/", path);
	return out;
}

/* Set the string member of c that s names to a copy of v. 0, or -1. */
static int
set_copy(struct config *c, const struct setting *s, const char *v,
    struct error *err)
{
	char *str;

	if ((str = strdup(v)) == NULL)
		return error_set(err, "out of memory");
	*(char **)((char *)c + s->off) = str;
	return 0;
}

/* K_STR, K_NAME, K_SECRET, K_DOCKER_HOST: a bounded printable string. */
static int
apply_text(struct config *c, const struct setting *s, const char *v,
    struct error *err)
{
	size_t len = strlen(v);

	if ((long long)len < s->min || (long long)len > s->max)
		return error_set(err, "%s: must be %lld to %lld characters",
		    s->name, s->min, s->max);
	if (!printable(v))
		return error_set(err, "%s: contains control characters",
		    s->name);
	if (s->kind == K_NAME && !valid_name(v))
		return error_set(err, "%s: use letters, digits, '_', '.' "
		    "and '-' only", s->name);
	if (s->kind == K_SECRET && strpbrk(v, " \t") != NULL)
		return error_set(err, "%s: must not contain spaces", s->name);
	if (s->kind == K_DOCKER_HOST && strncmp(v, "unix:///", 8) != 0 &&
	    strncmp(v, "tcp://", 6) != 0)
		return error_set(err, "%s: expected unix:///path or "
		    "tcp://host:port", s->name);
	return set_copy(c, s, v, err);
}

/* K_ADDRS, K_HEADER: client addresses, or a header name. */
static int
apply_net(struct config *c, const struct setting *s, const char *v,
    struct error *err)
{
	char	why[128];
	size_t	len = strlen(v);

	if ((long long)len > s->max || !printable(v))
		return error_set(err, "%s: too long or contains control "
		    "characters", s->name);
	if (s->kind == K_ADDRS && !clientaddr_list_valid(v, why, sizeof(why)))
		return error_set(err, "%s: %s", s->name, why);
	/* RFC 9110 §5.1: a header name is a token. */
	if (s->kind == K_HEADER && (len == 0 ||
	    strspn(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789-") != len))
		return error_set(err, "%s: expected a header name such as "
		    "X-Forwarded-For", s->name);
	return set_copy(c, s, v, err);
}

/* K_URL: the public URL and its origin; empty is derived later. */
static int
apply_url(struct config *c, const struct setting *s, const char *v,
    struct error *err)
{
	char	*str = NULL, *origin;
	size_t	 len = strlen(v);

	if (len == 0)
		return 0;	/* derived from host and port (derive) */
	if (len > (size_t)s->max)
		return error_set(err, "%s: expected an absolute http(s) URL "
		    "without query, fragment or user info", s->name);
	if (parse_public_url(s->name, v, &str, err) == -1)
		return -1;
	if ((origin = strdup(str)) == NULL) {
		free(str);
		return error_set(err, "out of memory");
	}
	c->public_url = str;
	c->public_origin = origin;
	return 0;
}

/* K_LONG, K_SIZE, K_CPUS: a number within the setting's bounds. */
static int
apply_number(struct config *c, const struct setting *s, const char *v,
    struct error *err)
{
	char		*base = (char *)c;
	long long	 n;

	switch (s->kind) {
	case K_LONG:
		if (parse_ll(v, &n) == -1 || n < s->min || n > s->max)
			return error_set(err, "%s: expected an integer from %lld "
			    "to %lld", s->name, s->min, s->max);
		*(long *)(base + s->off) = (long)n;
		return 0;
	case K_SIZE:
		if (parse_size(v, &n) == -1 || n < s->min || n > s->max)
			return error_set(err, "%s: expected a size such as 512m "
			    "or 2g (at least 6m)", s->name);
		*(long long *)(base + s->off) = n;
		return 0;
	default:
		if (parse_cpus(v, &n) == -1 || n < s->min || n > s->max)
			return error_set(err, "%s: expected a number of CPUs "
			    "such as 1 or 0.5", s->name);
		*(long long *)(base + s->off) = n;
		return 0;
	}
}

/* Parse v as setting s into c; envdir anchors relative paths. 0, or -1. */
static int
apply(struct config *c, const struct setting *s, const char *v,
    const char *envdir, struct error *err)
{
	char	*base = (char *)c, *str;
	bool	 b;
	size_t	 len = strlen(v);

	switch (s->kind) {
	case K_STR:
	case K_NAME:
	case K_SECRET:
	case K_DOCKER_HOST:
		return apply_text(c, s, v, err);
	case K_ADDRS:
	case K_HEADER:
		return apply_net(c, s, v, err);
	case K_URL:
		return apply_url(c, s, v, err);
	case K_LONG:
	case K_SIZE:
	case K_CPUS:
		return apply_number(c, s, v, err);
	case K_WARN_REFUSE:
		if (strcmp(v, "warn") != 0 && strcmp(v, "refuse") != 0)
			return error_set(err, "%s: expected warn or refuse", s->name);
		*(bool *)(base + s->off) = strcmp(v, "refuse") == 0;
		return 0;
	case K_PATH:
		if (len == 0 && s->min == 0) {
			/* An optional path left empty: none. */
			if ((str = strdup("")) == NULL)
				return error_set(err, "out of memory");
			*(char **)(base + s->off) = str;
			return 0;
		}
		if (len == 0 || len > PATH_MAX || !printable(v))
			return error_set(err, "%s: not a valid path", s->name);
		if ((str = absolutize(envdir, v)) == NULL)
			return error_set(err, "out of memory");
		*(char **)(base + s->off) = str;
		return 0;
	case K_BOOL:
		if (parse_bool(v, &b) == -1)
			return error_set(err, "%s: expected 1/0, true/false, "
			    "yes/no or on/off", s->name);
		*(bool *)(base + s->off) = b;
		return 0;
	}
	return error_set(err, "%s: unknown setting kind", s->name);
}

/*
 * The settings file's absolute path (*abspath) and folder (*envdir), both
 * malloc'd: SANDBOX_ENV_FILE, else .env in the working folder. A file named
 * on purpose must be there. 0, or -1 with err (the caller frees both).
 */
static int
env_path(char **abspath, char **envdir, struct error *err)
{
	const char	*path;
	char		 cwd[PATH_MAX];
	bool		 explicit = false;
	struct stat	 st;

	if ((path = getenv("SANDBOX_ENV_FILE")) == NULL || *path == '\0')
		path = ".env";
	else
		explicit = true;
	if (path[0] == '/')
		*abspath = strdup(path);
	else if (getcwd(cwd, sizeof(cwd)) != NULL)
		*abspath = absolutize(cwd, path);
	if (*abspath == NULL || (*envdir = dir_of(*abspath)) == NULL)
		return error_set(err, "SANDBOX_ENV_FILE: cannot resolve %s", path);
	if (explicit && stat(*abspath, &st) == -1)
		return error_set(err, "SANDBOX_ENV_FILE: the settings file %s "
		    "does not exist (%s)", *abspath, strerror(errno));
	if (explicit && !S_ISREG(st.st_mode))
		return error_set(err, "SANDBOX_ENV_FILE: %s is not a file",
		    *abspath);
	return 0;
}

/* Every setting of the table into c: environment, file, default. 0, or -1. */
static int
apply_all(struct config *c, const struct envfile *ef, const char *envdir,
    struct error *err)
{
	const char	*v;
	size_t		 i;

	for (i = 0; i < NSETTINGS; i++) {
		v = lookup(ef, settings[i].name);
		if (v == NULL)
			v = settings[i].def;
		if (v == NULL && access(c->env_file, F_OK) == -1)
			return error_set(err, "%s: required setting is missing, "
			    "and there is no settings file %s (name one with "
			    "SANDBOX_ENV_FILE)", settings[i].name, c->env_file);
		if (v == NULL)
			return error_set(err, "%s: required setting is missing "
			    "(set it in %s or the environment)", settings[i].name,
			    c->env_file);
		if (apply(c, &settings[i], v, envdir, err) == -1)
			return -1;
	}
	return 0;
}

/* *field becomes the folder name beside SANDBOX_DB (none: left as is). */
static int
beside_db(struct config *c, const char *name, char **field,
    struct error *err)
{
	const char	*slash;
	size_t		 n;
	int		 dl;

	if (c->db_path == NULL)
		return 0;
	slash = strrchr(c->db_path, '/');
	dl = slash == NULL ? 1 : (int)(slash - c->db_path);
	n = (size_t)dl + strlen(name) + 2;
	free(*field);
	if ((*field = malloc(n)) == NULL)
		return error_set(err, "out of memory");
	snprintf(*field, n, "%.*s/%s", dl, slash == NULL ? "." : c->db_path,
	    name);
	return 0;
}

/*
 * SANDBOX_PREVIEW_SOCKETS: "off" and a remote engine give "" (off); empty
 * gives "previews" beside the database; else an absolute path.
 */
static int
derive_preview_sockets(struct config *c, struct error *err)
{
	const char	*v = c->preview_sockets;
	size_t		 n;

	if (v == NULL)
		return 0;
	if (strcmp(v, "off") == 0 ||
	    strncmp(c->docker_host, "unix://", 7) != 0) {
		c->preview_sockets[0] = '\0';
		return 0;
	}
	if (v[0] != '\0') {
		n = strlen(v);
		/* As the engine keeps a bind's source: clean. */
		if (v[0] != '/' || n < 2 || v[n - 1] == '/' ||
		    strstr(v, "//") != NULL || strstr(v, "/./") != NULL ||
		    strstr(v, "/../") != NULL || strchr(v, ' ') != NULL ||
		    strcmp(v + n - 2, "/.") == 0 ||
		    (n >= 3 && strcmp(v + n - 3, "/..") == 0))
			return error_set(err, "SANDBOX_PREVIEW_SOCKETS: an "
			    "absolute path without spaces, ., .. or a trailing "
			    "/, or off");
		return 0;
	}
	return beside_db(c, "previews", &c->preview_sockets, err);
}

/*
 * What follows from the settings read: the public URL when none was set
 * (http://SANDBOX_HOST:SANDBOX_PORT, which a wildcard host cannot give),
 * the MCP URL, the scope. 0, or -1 with err.
 */
static int
derive(struct config *c, struct error *err)
{
	size_t n;

	if (c->public_url == NULL && host_is_wildcard(c->host))
		return error_set(err, "SANDBOX_PUBLIC_URL: required when "
		    "SANDBOX_HOST is %s (every interface has no address clients "
		    "can use); set it to the origin clients reach, such as "
		    "https://sandbox.example.com", c->host);
	if (c->public_url == NULL) {
		n = strlen(c->host) + 32;
		if ((c->public_url = malloc(n)) == NULL)
			return error_set(err, "out of memory");
		if (strchr(c->host, ':') != NULL)
			snprintf(c->public_url, n, "http://[%s]:%ld", c->host, c->port);
		else
			snprintf(c->public_url, n, "http://%s:%ld", c->host, c->port);
		if ((c->public_origin = strdup(c->public_url)) == NULL)
			return error_set(err, "out of memory");
	}
	n = strlen(c->public_url) + 5;
	if ((c->mcp_url = malloc(n)) == NULL)
		return error_set(err, "out of memory");
	snprintf(c->mcp_url, n, "%s/mcp", c->public_url);
	if (strcmp(c->scope, "shared") != 0 && strcmp(c->scope, "person") != 0)
		return error_set(err, "SANDBOX_SCOPE: expected shared or person");
	c->per_person = strcmp(c->scope, "person") == 0;
	if (derive_preview_sockets(c, err) == -1)
		return -1;
	/* No snapshot folder given: "snapshots" beside the database. */
	if (c->snapshot_dir != NULL && c->snapshot_dir[0] == '\0')
		return beside_db(c, "snapshots", &c->snapshot_dir, err);
	return 0;
}

int
config_load(struct config **out, struct error *err)
{
	struct config	*c = NULL;
	struct envfile	 ef = { NULL, 0 };
	char		*envdir = NULL, *abspath = NULL;
	int		 rc = -1;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return error_set(err, "out of memory");
	if (env_path(&abspath, &envdir, err) == -1 ||
	    envfile_read(abspath, &ef, err) == -1)
		goto out;
	c->env_file = abspath;
	abspath = NULL;
	if (apply_all(c, &ef, envdir, err) == -1 || derive(c, err) == -1 ||
	    check_egress(c, err) == -1)
		goto out;
	if (strncmp(c->docker_host, "tcp://", 6) == 0 && c->docker_tls_verify &&
	    c->docker_cert_path[0] == '\0') {
		error_set(err, "DOCKER_CERT_PATH: required with DOCKER_TLS_VERIFY");
		goto out;
	}
	*out = c;
	c = NULL;
	rc = 0;
out:
	envfile_free(&ef);
	free(envdir);
	free(abspath);
	config_free(c);
	return rc;
}

void
config_free(struct config *c)
{
	size_t i;

	if (c == NULL)
		return;
	if (c->api_key != NULL)
		explicit_bzero(c->api_key, strlen(c->api_key));
	for (i = 0; i < NSETTINGS; i++) {
		switch (settings[i].kind) {
		case K_STR: case K_NAME: case K_SECRET: case K_PATH:
		case K_DOCKER_HOST: case K_ADDRS: case K_HEADER:
			free(*(char **)((char *)c + settings[i].off));
			break;
		default:
			break;
		}
	}
	free(c->public_url);
	free(c->public_origin);
	free(c->mcp_url);
	free(c->env_file);
	free(c);
}

bool
config_host_is_loopback(const struct config *c)
{
	return strcmp(c->host, "localhost") == 0 ||
	    strncmp(c->host, "127.", 4) == 0 || strcmp(c->host, "::1") == 0;
}

bool
config_origin_allowed(const struct config *c, const char *origin)
{
	struct url	 u;
	const char	*p;
	size_t		 n = strlen(origin);

	if (n == 0)
		return false;
	if (strcasecmp(origin, c->public_origin) == 0)
		return true;
	for (p = c->allowed_origins; *p != '\0'; p += strcspn(p, " ")) {
		p += strspn(p, " ");
		if (*p != '\0' && strlen(p) >= n && strncasecmp(p, origin, n) == 0 &&
		    (p[n] == ' ' || p[n] == '\0'))
			return true;
	}
	return config_host_is_loopback(c) && url_split_origin(origin, &u) == 0 &&
	    url_host_is_loopback(&u);
}
