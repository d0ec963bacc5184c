/*
 * proxy.h: the egress proxy (containers/proxy.sh, docs/secrets.md): its
 * configuration written from the settings and the secrets, and the
 * running proxy told to read it again.
 */
#ifndef CS_PROXY_H
#define CS_PROXY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

struct config;
struct db;

/*
 * For sandboxctl after a secret is added or removed: write the proxy's
 * configuration again and have a running proxy read it (at once, no
 * restart). Prints what it did or why not on stderr; 0 or -1.
 */
int	proxy_apply_ctl(const struct config *, struct db *);

#endif
