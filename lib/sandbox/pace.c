/*
 * pace.c: see pace.h. The tick is the engine client's (docker_set_tick):
 * the handle's one client reads every exec stream of the handle.
 */
#include "engine/docker.h"
#include "sandbox/pace.h"
#include "sandbox/sandbox.h"

void
pace_set(struct sandbox *sb, long ms)
{
	docker_set_tick(sandbox_docker(sb), ms);
}
