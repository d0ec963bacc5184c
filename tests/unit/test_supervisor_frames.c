/*
 * test_supervisor_frames.c: the supervisor's frame parser
 * (containers/supervisor/frames.c), which reads the container's bytes.
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "frames.h"

struct seen {
	char	types[64];
	size_t	n;
	char	data[256];
	size_t	len;
	struct supf_result r;
	bool	result;
};

static int
on_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	struct seen *s = arg;

	if (s->n + 1 < sizeof(s->types))
		s->types[s->n++] = (char)type;
	if (type == 'R')
		s->result = supf_result_decode(p, len, &s->r) == 0;
	else if (len <= sizeof(s->data) - s->len) {
		memcpy(s->data + s->len, p, len);
		s->len += len;
	}
	return 0;
}

static size_t
add(unsigned char *buf, size_t at, int type, const void *p, uint32_t len)
{
	supf_header(type, len, buf + at);
	if (len > 0)
		memcpy(buf + at + SUPF_HEADER, p, len);
	return at + SUPF_HEADER + len;
}

int
main(void)
{
	unsigned char		 msg[512], enc[SUPF_RESULT_LEN];
	struct supf_result	 r = { SUPF_SIGNALLED, 9, 2001, 5, 6, 1, 2 };
	struct supf		 f;
	struct seen		 s;
	size_t			 len = 0, cut;
	bool			 ok = true;

	supf_result_encode(&r, enc);
	len = add(msg, len, 'S', NULL, 0);
	len = add(msg, len, 'o', "hello", 5);
	len = add(msg, len, 'e', "err", 3);
	len = add(msg, len, 'R', enc, SUPF_RESULT_LEN);

	memset(&s, 0, sizeof(s));
	supf_init(&f, SUPF_LIVE_MAX);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == 0 &&
	    supf_at_boundary(&f), "a live stream parses whole");
	CHECK(s.n == 4 && memcmp(s.types, "SoeR", 4) == 0 &&
	    s.len == 8 && memcmp(s.data, "helloerr", 8) == 0, "frames in order");
	CHECK(s.result && s.r.how == SUPF_SIGNALLED && s.r.code == 9 &&
	    s.r.duration_ms == 2001 && s.r.out_total == 5 &&
	    s.r.err_total == 6 && s.r.oom_before == 1 && s.r.oom_after == 2,
	    "the result round-trips");
	supf_free(&f);

	for (cut = 0; cut <= len; cut++) {
		memset(&s, 0, sizeof(s));
		supf_init(&f, SUPF_LIVE_MAX);
		if (supf_feed(&f, msg, cut, on_frame, &s) != 0 ||
		    supf_feed(&f, msg + cut, len - cut, on_frame, &s) != 0 ||
		    s.n != 4 || !s.result)
			ok = false;
		supf_free(&f);
	}
	CHECK(ok, "split at every byte");

	memset(&s, 0, sizeof(s));
	supf_init(&f, SUPF_LIVE_MAX);
	for (cut = 0; cut < len; cut++)
		if (supf_feed(&f, msg + cut, 1, on_frame, &s) != 0)
			ok = false;
	CHECK(ok && s.n == 4, "one byte at a time");
	supf_free(&f);

	supf_init(&f, 4);
	len = add(msg, 0, 'o', "hello", 5);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == -1,
	    "a payload over the limit is refused before it is read");
	CHECK(supf_feed(&f, msg, 1, on_frame, &s) == -1, "and the parser stays failed");
	supf_free(&f);

	supf_init(&f, SUPF_LIVE_MAX);
	memcpy(msg, "o\0\0\0\xff\xff\xff\xff", 8);
	CHECK(supf_feed(&f, msg, 8, on_frame, &s) == -1, "a 4 GiB length is refused");
	supf_free(&f);

	supf_init(&f, SUPF_LIVE_MAX);
	memcpy(msg, "Z\0\0\0\0\0\0\0", 8);
	CHECK(supf_feed(&f, msg, 8, on_frame, &s) == -1, "an unknown type is refused");
	supf_free(&f);

	supf_init(&f, SUPF_LIVE_MAX);
	memcpy(msg, "S\0\1\0\0\0\0\0", 8);
	CHECK(supf_feed(&f, msg, 8, on_frame, &s) == -1, "non-zero padding is refused");
	supf_free(&f);

	supf_init(&f, SUPF_LIVE_MAX);
	len = add(msg, 0, 'R', enc, 10);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == -1, "a short result is refused");
	supf_free(&f);

	supf_init(&f, SUPF_LIVE_MAX);
	len = add(msg, 0, 'o', "", 0);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == -1, "an empty output frame is refused");
	supf_free(&f);

	enc[1] = 7;
	CHECK(supf_result_decode(enc, SUPF_RESULT_LEN, &r) == -1, "an unknown ending is refused");
	supf_result_encode(&r, enc);
	enc[0] = 2;
	CHECK(supf_result_decode(enc, SUPF_RESULT_LEN, &r) == -1, "another version is refused");
	return check_status();
}
