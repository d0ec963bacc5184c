/*
 * proxy.c: proxy-config, the egress proxy's configuration written from the
 * settings and the secrets (sandbox/proxy.h), for containers/proxy.sh;
 * prints, for it, the folder, the port and the network as name=value
 * lines (values checked: no space, quote or control character).
 */
#include <stdio.h>
#include <string.h>

#include "base/config.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"
#include "sandbox/netpolicy.h"
#include "sandbox/proxy.h"

int
ctl_proxy_config(struct ctl *c)
{
	struct error	 err;

	if (proxy_write(c->cfg, c->db, true, &err) == -1) {
		fprintf(stderr, "sandboxctl: %s\n", err.msg);
		return 1;
	}
	printf("dir=%s\nport=%ld\nnetwork=%s\negress=%s\n", c->cfg->proxy_dir,
	    c->cfg->proxy_port, netpolicy_network_mode(c->cfg),
	    netpolicy_name(netpolicy_egress(c->cfg)));
	return 0;
}
