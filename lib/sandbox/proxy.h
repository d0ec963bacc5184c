/*
 * proxy.h: the egress proxy (containers/proxy.sh, docs/secrets.md),
 * Debian's squid-openssl run as a service of the project. The programs
 * write its configuration from the settings and the secrets
 * (SANDBOX_PROXY_DIR/squid.conf, mode 640) and have the running proxy
 * read it again; proxy.sh writes listen.conf beside it (the ports on the
 * sandbox network's gateway and the network's address range, acl
 * "sandbox"), makes the per-installation CA (ca.pem, ca.key) and starts
 * squid.
 *
 * What the configuration says:
 *   - every destination the proxy resolves passes the packet filter's
 *     address rules: loopback, the host's own addresses, link-local,
 *     multicast and reserved always refused; private ranges and CGNAT
 *     unless SANDBOX_EGRESS_ALLOW opens them;
 *   - TLS is peeked at (SNI) and spliced through untouched, except for the
 *     hosts of a secret: those are bumped with a certificate of the
 *     installation's CA, the upstream certificate verified against the
 *     system store (and SANDBOX_PROXY_CA), and each request over that
 *     HTTPS gets the secret's header, a header of the same name from the
 *     sandbox dropped first; plain HTTP never gets one.
 *   - with SANDBOX_EGRESS_HOSTS, only those hosts; others get an answer
 *     that names the setting, over HTTPS too (bumped to give it).
 * Values in the file are escaped (\\, \" and %%); a value never reaches a
 * log: the proxy logs no header, and proxy.sh's check drops the lines that
 * carry one from what it prints.
 */
#ifndef CS_PROXY_H
#define CS_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;
struct db;
struct secrets;

/*
 * The configuration's text for these settings and secrets (with values),
 * the host's addresses (n of them, text, checked here) refused: a new
 * NUL-terminated string, or NULL with err set (a path or an address that
 * cannot be written safely).
 */
char	*proxy_conf(const struct config *, const struct secrets *,
	    const char *const *host_addrs, size_t n, struct error *);
/*
 * Write SANDBOX_PROXY_DIR/squid.conf again (atomically, mode 640, the
 * folder's group), the folder made (mode 750) when create.
 */
int	proxy_write(const struct config *, struct db *, bool create,
	    struct error *);
/*
 * Have a running proxy read its configuration again (SIGHUP to the pid in
 * SANDBOX_PROXY_DIR/squid.pid). LOOKUP_FOUND done, LOOKUP_NONE none runs.
 */
enum lookup_result proxy_reload(const struct config *, struct error *);
/*
 * The CA's certificate (SANDBOX_PROXY_DIR/ca.pem) into pem (n bytes, NUL
 * ended, its final newlines taken off): PEM text only, at most
 * PROXY_CA_MAX - 1 bytes. 0 or -1.
 */
#define PROXY_CA_MAX	8192
int	proxy_ca_read(const struct config *, char *pem, size_t n,
	    struct error *);

/*
 * The proxy's state for sandboxctl status: a new object with running (its
 * pid alive), configured (squid.conf written), ca (ca.pem there), port,
 * secrets (how many) and hosts (SANDBOX_EGRESS_HOSTS, when set).
 */
struct json_object *proxy_status(const struct config *, struct db *);

/*
 * For sandboxctl after a secret is added or removed: proxy_write, then
 * proxy_reload (at once, no restart). Says what it did or why not on
 * stderr; 0 or -1.
 */
int	proxy_apply_ctl(const struct config *, struct db *);

#endif
