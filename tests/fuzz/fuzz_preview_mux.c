/*
 * fuzz_preview_mux.c: libFuzzer target for the preview channel's reader
 * of the supervisor's mux frames (lib/sandbox/muxin.c), which reads bytes
 * a hostile container writes. Three streams are open (ids 1 to 3; the
 * first byte of the input decides which have been shut on our side and
 * which were opened for the lane, so may be answered 'L'), the
 * input is fed in pieces cut at points taken from it, and between pieces
 * some queued bytes are taken, as the preview program does. Whatever
 * comes, no stream may hold more than its window nor be granted past it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "fuzz.h"
#include "sandbox/muxin.h"

#define STREAMS 3

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char	 out[SUPF_MUX_DATA];
	struct mux_in		 m;
	struct mux_stream	 s[STREAMS];
	size_t			 off = 1, cut, i;
	int			 k;

	if (size < 1)
		return 0;
	muxin_init(&m);
	for (k = 0; k < STREAMS; k++) {
		if (muxin_stream_init(&s[k], (uint32_t)k + 1) == -1)
			abort();
		s[k].shut = (data[0] >> k) & 1;
		s[k].lane = (data[0] >> (k + 3)) & 1;
		muxin_link(&m, &s[k]);
	}
	while (off < size) {
		cut = 1 + (data[off] * 7u) % 512;
		if (cut > size - off)
			cut = size - off;
		if (muxin_feed(&m, data + off, cut) == -1)
			break;
		off += cut;
		for (k = 0; k < STREAMS; k++) {
			if (s[k].qlen > SUPF_MUX_WINDOW ||
			    s[k].credit > SUPF_MUX_WINDOW)
				abort();
			i = muxin_take(&s[k], out, (off & 3) * 4096);
			if (i > (off & 3) * 4096)
				abort();
		}
	}
	for (k = 0; k < STREAMS; k++) {
		muxin_unlink(&m, &s[k]);
		muxin_stream_free(&s[k]);
	}
	muxin_free(&m);
	return 0;
}
