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
#include "supervisor/frames.h"

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

/* A tagged frame: tag of id, then body. */
static size_t
add_tagged(unsigned char *buf, size_t at, int type, const char *id,
    const void *body, size_t blen)
{
	size_t n = supf_tag_header(type, id, blen, buf + at);

	if (n == 0)
		return at;
	if (blen > 0)
		memcpy(buf + at + n, body, blen);
	return at + n + blen;
}

/* The channel's frames (frames.h, "The channel"). */
static void
channel(void)
{
	unsigned char		 msg[1024], hdr[SUPF_HEADER + 1 + SUPF_ID_MAX];
	char			 id[SUPF_ID_MAX + 1], longid[SUPF_ID_MAX + 2];
	const unsigned char	*rest;
	unsigned char		 v[4], code = 3, start[12];
	struct supf		 f;
	struct seen		 s;
	size_t			 len = 0, n;

	supf_put32(v, SUPF_CHAN_VERSION);
	len = add(msg, len, 'V', v, 4);
	len = add_tagged(msg, len, 'M', "run-1", "S\0\0\0\0\0\0\0", 8);
	len = add_tagged(msg, len, 'E', "run-1", &code, 1);
	len = add_tagged(msg, len, 'K', "run_2", &code, 1);
	len = add_tagged(msg, len, 'Q', "run_2", &code, 1);
	memset(&s, 0, sizeof(s));
	supf_init(&f, SUPF_CHAN_OUT_MAX);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == 0 && s.n == 5 &&
	    memcmp(s.types, "VMEKQ", 5) == 0 && supf_at_boundary(&f),
	    "channel: V, M, E, K, Q are read");
	supf_free(&f);

	CHECK(supf_tag_split(msg + SUPF_HEADER * 2 + 4, 6 + 8, id, &rest,
	    &n) == 0 && strcmp(id, "run-1") == 0 && n == 8 && rest[0] == 'S',
	    "channel: a tag splits into the run id and the rest");
	CHECK(supf_tag_split((const unsigned char *)"\0", 1, id, &rest, &n) == -1,
	    "channel: an empty tag is refused");
	CHECK(supf_tag_split((const unsigned char *)"\005ab", 3, id, &rest,
	    &n) == -1, "channel: a tag longer than its frame is refused");
	CHECK(supf_tag_split((const unsigned char *)"\002a/", 3, id, &rest,
	    &n) == -1, "channel: a tag outside [A-Za-z0-9_-] is refused");
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	CHECK(supf_tag_header('k', longid, 0, hdr) == 0 &&
	    supf_tag_header('k', "a.b", 0, hdr) == 0,
	    "channel: no tag is written for an invalid run id");

	/* An 'E' with no status byte: too short for its type. */
	len = add(msg, 0, 'E', "\001a", 2);
	memset(&s, 0, sizeof(s));
	supf_init(&f, SUPF_CHAN_OUT_MAX);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == -1,
	    "channel: an end frame without its status is refused");
	supf_free(&f);
	/* 'M' over the channel's limit. */
	supf_header('M', SUPF_CHAN_OUT_MAX + 1, msg);
	supf_init(&f, SUPF_RECORD_MAX);
	CHECK(supf_feed(&f, msg, SUPF_HEADER, on_frame, &s) == -1,
	    "channel: output over the live limit is refused");
	supf_free(&f);
	/* 'V' of the wrong length. */
	len = add(msg, 0, 'V', v, 3);
	supf_init(&f, SUPF_CHAN_OUT_MAX);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == -1,
	    "channel: a ready frame of the wrong length is refused");
	supf_free(&f);
	/* A start: tag, timeout, limit, command; one without a command. */
	supf_put32(start, 30);
	supf_put32(start + 4, 1000);
	memcpy(start + 8, "true", 4);
	len = add_tagged(msg, 0, 'r', "r1", start, 12);
	memset(&s, 0, sizeof(s));
	supf_init(&f, SUPF_CHAN_IN_MAX);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == 0 && s.n == 1 &&
	    s.types[0] == 'r', "channel: a start frame is read");
	supf_free(&f);
	len = add_tagged(msg, 0, 'r', "r", start, 8);
	supf_init(&f, SUPF_CHAN_IN_MAX);
	CHECK(supf_feed(&f, msg, len, on_frame, &s) == -1,
	    "channel: a start frame without a command is refused");
	supf_free(&f);
	/* A start larger than the command limit allows. */
	supf_header('r', SUPF_CHAN_IN_MAX + 1, msg);
	supf_init(&f, SUPF_RECORD_MAX);
	CHECK(supf_feed(&f, msg, SUPF_HEADER, on_frame, &s) == -1,
	    "channel: a start over the command limit is refused");
	supf_free(&f);
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
	channel();
	return check_status();
}
