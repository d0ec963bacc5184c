/*
 * test_guard_per_container: the guard's samples and verdicts are kept per
 * container (sandbox/extern.h, guard_slot), so in person scope one
 * person's over-limit sample or canary verdict never stands for another's
 * (issue: "the guard's disk and canary cache is one per process").
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "sandbox/extern.h"

int
main(void)
{
	struct guard_cache	*a, *b;
	char			 name[32];
	int			 i;

	pthread_mutex_lock(&guard_mu);
	a = guard_slot("cs-sandbox-aaaa");
	a->disk_watch = a->disk_known = true;
	a->sandbox_used = 1LL << 40;	/* A is over any limit */
	a->disk_at = 1;
	a->canary_at = 1;
	a->canary_ok = false;
	snprintf(a->watched_id, sizeof(a->watched_id), "abc");
	b = guard_slot("cs-sandbox-bbbb");
	CHECK(a != b, "two containers have two entries");
	CHECK(b->sandbox_used == 0 && !b->disk_watch && b->disk_at == 0,
	    "A's over-limit sample is not B's");
	CHECK(b->canary_at == 0 && !b->canary_ok,
	    "A's canary verdict is not B's (B's canary runs for B)");
	b->canary_at = 2;
	b->canary_ok = true;
	CHECK(guard_slot("cs-sandbox-aaaa") == a && a->sandbox_used == 1LL << 40,
	    "alternating owners keep their own samples");
	CHECK(guard_slot("cs-sandbox-bbbb") == b && b->canary_ok &&
	    b->canary_at == 2, "alternating owners do not re-run the canary");

	guard_slot_reset(a);
	CHECK(a->sandbox_used == 0 && a->canary_at == 0 &&
	    strcmp(a->container, "cs-sandbox-aaaa") == 0 &&
	    strcmp(a->watched_id, "abc") == 0,
	    "a new instance starts afresh but stays watched");

	/* Many containers: the least recently used entry is given away. */
	b = guard_slot("cs-sandbox-bbbb");
	for (i = 0; i < 200; i++) {
		snprintf(name, sizeof(name), "cs-sandbox-%d", i);
		guard_slot(name)->disk_at = i + 10;
		guard_slot("cs-sandbox-bbbb");	/* B stays in use */
	}
	CHECK(guard_slot("cs-sandbox-bbbb") == b && b->canary_ok,
	    "a container in use keeps its entry among many");
	CHECK(guard_slot("cs-sandbox-aaaa")->disk_at == 0,
	    "an unused one is reused and starts afresh");
	pthread_mutex_unlock(&guard_mu);
	return check_status();
}
