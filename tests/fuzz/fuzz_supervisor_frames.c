/*
 * fuzz_supervisor_frames.c: libFuzzer target for the supervisor's frame
 * parser (containers/supervisor/frames.c), which reads bytes from the
 * sandbox container. The input is fed whole and again split at a point
 * taken from its first byte, with the live limit and the record limit;
 * every 'R' payload goes through supf_result_decode and every tagged
 * channel frame through supf_tag_split (also with the channel's limit).
 * Both feeds must agree.
 *
 *   clang -g -fsanitize=fuzzer,address,undefined -Icontainers/supervisor \
 *       tests/fuzz/fuzz_supervisor_frames.c containers/supervisor/frames.c \
 *       -o fuzz_supervisor_frames
 *   ./fuzz_supervisor_frames tests/fuzz/corpus/supervisor_frames
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "supervisor/frames.h"

struct tally {
	unsigned long	frames;
	unsigned long	bytes;
};

static int
on_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct tally		*t = arg;
	struct supf_result	 r;
	size_t			 i;
	unsigned		 x = 0;

	t->frames++;
	t->bytes += len;
	for (i = 0; i < len; i++)	/* touch every byte handed out */
		x += p[i];
	if (type == 'R')
		(void)supf_result_decode(p, len, &r);
	else if (strchr("MEKQkqr", type) != NULL && type != 0) {
		/* The channel's tagged frames, as the server splits them. */
		char			 id[SUPF_ID_MAX + 1];
		const unsigned char	*rest;
		size_t			 n;

		if (supf_tag_split(p, len, id, &rest, &n) == 0)
			for (i = 0; i < n; i++)
				x += rest[i];
	} else if (type == 'V')
		x += supf_get32(p);
	t->bytes += x & 1;
	return 0;
}

static int
feed(const uint8_t *data, size_t size, size_t cut, uint32_t max,
    struct tally *t)
{
	struct supf	f;
	int		rc;

	supf_init(&f, max);
	rc = supf_feed(&f, data, cut, on_frame, t);
	if (rc == 0)
		rc = supf_feed(&f, data + cut, size - cut, on_frame, t);
	(void)supf_at_boundary(&f);
	supf_free(&f);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t	 limits[] = { SUPF_LIVE_MAX, SUPF_RECORD_MAX,
				     SUPF_CHAN_OUT_MAX };
	struct tally		 whole, split;
	size_t			 cut, i;
	int			 a, b;

	cut = size > 0 ? data[0] % (size + 1) : 0;
	for (i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		whole.frames = whole.bytes = 0;
		split.frames = split.bytes = 0;
		a = feed(data, size, size, limits[i], &whole);
		b = feed(data, size, cut, limits[i], &split);
		if (a != b || (a == 0 && (whole.frames != split.frames ||
		    whole.bytes != split.bytes)))
			abort();
	}
	return 0;
}
