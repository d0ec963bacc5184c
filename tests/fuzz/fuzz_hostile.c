/*
 * fuzz_hostile.c: libFuzzer target for what the sandbox guard reads from
 * outside: the engine's description of a container (cspec_compare), the
 * canary's output and `iptables -S` text (netpolicy.c).
 *
 *   clang -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Ilib \
 *     tests/fuzz/fuzz_hostile.c lib/sandbox/cspec.c lib/sandbox/netpolicy.c \
 *     lib/base/js.c lib/base/error.c $(pkg-config --cflags --libs json-c) -o fuzz_hostile
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "sandbox/cspec.h"
#include "sandbox/netpolicy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cspec	*cs;
	struct config		 c;
	struct json_object	*o;
	char			*s, d[400];

	if (cs == NULL) {
		memset(&c, 0, sizeof(c));
		c.image = "code-sandbox:latest";
		c.container = "code-sandbox";
		c.volume = "code-sandbox-data";
		c.network = "code-sandbox";
		c.egress = "internet";
		c.egress_allow = "";
		c.dns = "";
		c.runtime = "";
		c.memory_bytes = 512LL << 20;
		c.nano_cpus = 1000000000;
		c.pids_limit = 1024;
		if (cspec_new(&c, c.container, c.volume, &cs, NULL) == -1)
			abort();
	}
	if (size > 1 << 20 || (s = malloc(size + 1)) == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if ((o = js_parse(s, size, JS_MAX_DEPTH, NULL)) != NULL) {
		cspec_compare(cs, o, d, sizeof(d));
		cspec_compare(cs, o, d, 5);
		json_object_put(o);
	}
	netpolicy_canary_parse(s, d, sizeof(d));
	netpolicy_rules_in(s, "cs-0123456789", d, sizeof(d));
	config_valid_ipv4(s, true);
	free(s);
	return 0;
}
