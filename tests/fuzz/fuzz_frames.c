/*
 * The Engine API's multiplexed stream frames (exec output,
 * lib/engine/docker_exec.c): the first byte sets the size of each piece fed.
 */
#include "engine/docker.h"
#include "fuzz.h"

static void
frame(void *arg, int stream, const char *buf, size_t len)
{
	size_t *total = arg;

	if (len == 0 || stream < 0 || stream > 3)
		abort();	/* the contract: never len 0; stdin, stdout, stderr or systemerr */
	*total += len + (size_t)(buf[len - 1] & 0);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct docker_frames	 f;
	size_t			 step, off, total = 0;

	if (size < 1)
		return 0;
	docker_frames_init(&f);
	step = 1 + data[0] % 32;
	for (off = 1; off < size; off += step)
		if (docker_frames_feed(&f, (const char *)data + off, size - off < step ?
		    size - off : step, frame, &total) == -1)
			break;
	(void)docker_frames_at_boundary(&f);
	if (total > size)
		abort();
	return 0;
}
