/*
 * config.h: the server's settings.
 *
 * Settings come from an env file (KEY=VALUE lines, base/envfile.h; the path
 * is SANDBOX_ENV_FILE, default ".env") and each may be overridden by an
 * environment variable of the same name. Every setting has a validator; the
 * first bad or missing one makes config_load fail with a message naming it.
 * The table in config.c is the one list of settings; the manual page
 * code-sandbox-settings(5) is written from it at build time
 * (docs/settings-man.c, through config_describe).
 */
#ifndef CS_CONFIG_H
#define CS_CONFIG_H

#include <stdbool.h>

#include "base/error.h"

struct config {
	char		*env_file;	/* absolute path of the env file read, or NULL */
	char		*api_key;	/* SANDBOX_API_KEY: secret, never log */
	char		*public_url;	/* SANDBOX_PUBLIC_URL, no trailing slash */
	char		*public_origin;	/* scheme://host[:port] of public_url */
	char		*mcp_url;	/* public_url + "/mcp": the OAuth resource */
	char		*host;		/* SANDBOX_HOST */
	long		 port;		/* SANDBOX_PORT */
	long		 max_output_bytes; /* MAX_OUTPUT_BYTES, per stream */
	long		 file_ttl;	/* FILE_TTL, seconds */
	long		 link_ttl;	/* LINK_TTL, seconds */
	char		*image;		/* SANDBOX_IMAGE */
	char		*container;	/* SANDBOX_CONTAINER */
	char		*volume;	/* SANDBOX_VOLUME */
	long long	 memory_bytes;	/* SANDBOX_MEMORY */
	long long	 nano_cpus;	/* SANDBOX_CPUS, as 1e-9 CPUs */
	long		 pids_limit;	/* SANDBOX_PIDS_LIMIT */
	char		*db_path;	/* SANDBOX_DB, absolute */
	char		*docker_host;	/* DOCKER_HOST: unix:///path or tcp://host:port */
	bool		 docker_tls_verify; /* DOCKER_TLS_VERIFY */
	char		*docker_cert_path; /* DOCKER_CERT_PATH: ca.pem cert.pem key.pem */
	long		 ping_interval;	/* SANDBOX_PING_INTERVAL, seconds */
	long		 threads;	/* SANDBOX_THREADS, per FastCGI process */
	long		 db_cache_kib;	/* SANDBOX_DB_CACHE, per connection */
	long		 malloc_arenas;	/* SANDBOX_MALLOC_ARENAS, per process */
	long		 max_timeout;	/* SANDBOX_MAX_TIMEOUT, seconds */
	long		 inline_wait;	/* SANDBOX_INLINE_WAIT, seconds (2026 execute) */
	long		 max_running;	/* SANDBOX_MAX_RUNNING */
	long		 max_running_per_owner; /* SANDBOX_MAX_RUNNING_PER_OWNER */
	long		 session_ttl;	/* SANDBOX_SESSION_TTL, idle seconds */
	bool		 allow_key_bearer; /* SANDBOX_ALLOW_KEY_BEARER */
	bool		 channel;	/* SANDBOX_CHANNEL */
	long		 access_token_ttl; /* SANDBOX_ACCESS_TOKEN_TTL, seconds */
	long		 refresh_token_ttl; /* SANDBOX_REFRESH_TOKEN_TTL, seconds */
	long		 audit_retention; /* SANDBOX_AUDIT_RETENTION, seconds */
	long		 cleanup_interval; /* SANDBOX_CLEANUP_INTERVAL, seconds */
	char		*allowed_origins; /* SANDBOX_ALLOWED_ORIGINS: extra, space-separated */
	char		*scope;		/* SANDBOX_SCOPE: "shared" or "person" */
	bool		 per_person;	/* SANDBOX_SCOPE is "person" */
	long		 idle_stop;	/* SANDBOX_IDLE_STOP, seconds (person scope) */
	long		 max_sandboxes;	/* SANDBOX_MAX_SANDBOXES, 0: no cap (person scope) */
	char		*egress;	/* SANDBOX_EGRESS: internet, none or open */
	char		*network;	/* SANDBOX_NETWORK: the sandbox's bridge network */
	char		*egress_allow;	/* SANDBOX_EGRESS_ALLOW: IPv4 CIDRs, space-separated */
	char		*dns;		/* SANDBOX_DNS: resolvers allowed, or "" (the host's) */
	char		*runtime;	/* SANDBOX_RUNTIME: OCI runtime, "" for the engine's default */
	long long	 disk_limit;	/* SANDBOX_DISK_LIMIT: bytes in /sandbox */
	long long	 layer_limit;	/* SANDBOX_LAYER_LIMIT: bytes in the container's own layer */
	char		*trusted_proxies; /* SANDBOX_TRUSTED_PROXIES: addresses, CIDR blocks */
	char		*client_addr_header; /* SANDBOX_CLIENT_ADDR_HEADER */
	char		*redirect_hosts; /* SANDBOX_REDIRECT_HOSTS: no warning for these */
	bool		 redirect_refuse; /* SANDBOX_REDIRECT_UNKNOWN=refuse */
	long		 register_per_hour; /* SANDBOX_REGISTER_PER_HOUR, per address */
	long		 pending_max;	/* SANDBOX_PENDING_SIGNINS */
	long		 cimd_per_minute; /* SANDBOX_CIMD_FETCHES_PER_MINUTE, overall */
	char		*cimd_allow_addrs; /* SANDBOX_CIMD_ALLOW_ADDRS: not public, allowed */
	char		*cimd_ca;	/* SANDBOX_CIMD_CA: their CA file, or "" */
	long		 body_deadline;	/* SANDBOX_BODY_DEADLINE, seconds */
	long long	 upload_max_bytes; /* SANDBOX_UPLOAD_MAX_BYTES, per upload link */
	char		*spool_dir;	/* SANDBOX_SPOOL_DIR: bodies of unknown length */
	long long	 image_max_bytes; /* SANDBOX_IMAGE_MAX_BYTES: images to the model */
	long		 image_max_pixels; /* SANDBOX_IMAGE_MAX_DIM: longest side */
	long long	 shm_bytes;	/* SANDBOX_SHM_SIZE: the container's /dev/shm */
	long		 terminal_max;	/* TERMINAL_MAX: open terminals per owner */
	long		 terminal_idle;	/* TERMINAL_IDLE, seconds */
	long		 terminal_link_ttl; /* TERMINAL_LINK_TTL, seconds */
	char		*preview_url;	/* SANDBOX_PREVIEW_URL: a wildcard origin, or "" */
	long		 preview_conns;	/* SANDBOX_PREVIEW_CONNECTIONS, open per owner */
	char		*preview_sockets; /* SANDBOX_PREVIEW_SOCKETS: absolute, or "" for off */
	bool		 proxy;		/* SANDBOX_PROXY */
	char		*egress_hosts;	/* SANDBOX_EGRESS_HOSTS: names, space-separated, or "" */
	char		*secrets_key;	/* SANDBOX_SECRETS_KEY: the key file, absolute */
	char		*proxy_dir;	/* SANDBOX_PROXY_DIR: the proxy's files, absolute */
	long		 proxy_port;	/* SANDBOX_PROXY_PORT */
	char		*proxy_ca;	/* SANDBOX_PROXY_CA: extra upstream CAs, or "" */
	char		*proxy_hosts_file; /* SANDBOX_PROXY_HOSTS_FILE */
	char		*snapshot_dir;	/* SANDBOX_SNAPSHOT_DIR: /sandbox archives */
	long		 snapshot_max;	/* SANDBOX_SNAPSHOTS: per sandbox (owner) */
	long long	 snapshot_bytes; /* SANDBOX_SNAPSHOT_BYTES: per sandbox (owner) */
	long		 snapshot_depth; /* SANDBOX_SNAPSHOT_DEPTH: layers over the image */
};

/*
 * Load settings. Returns 0 and a new config in *out (free with
 * config_free), or -1 with a one-line message naming the bad setting.
 */
int	config_load(struct config **out, struct error *err);
void	config_free(struct config *);

/* Is the server bound to a loopback address (SANDBOX_HOST)? */
bool	config_host_is_loopback(const struct config *);

/*
 * The Origin check (MCP transports, "Security Warning": DNS rebinding): may
 * a browser page of origin (an Origin header's value) call the server? Yes
 * for the public URL's origin, one listed in SANDBOX_ALLOWED_ORIGINS (both
 * compared without case), or a loopback origin (url.h) when the server
 * itself is bound to loopback. Anything that is not an http(s) origin
 * ("null", a path after the host, a bad port) is refused.
 */
bool	config_origin_allowed(const struct config *, const char *origin);

/*
 * Entry i of the settings table, for the manual page's generator
 * (docs/settings-man.c): returns 1 with the setting's name, its default
 * (NULL when it is required) and its help text, all the table's own
 * strings (not to be freed), or 0 when i is past the end.
 */
int	config_describe(int i, const char **name, const char **def, const char **help);

/* An IPv4 address, or address/prefix when cidr: dotted quad, no leading zeros. */
bool	 config_valid_ipv4(const char *s, bool cidr);

#endif
