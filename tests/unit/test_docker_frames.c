/*
 * test_docker_frames.c: the Docker raw-stream frame decoder
 * (lib/engine/docker_exec.c).
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "engine/docker.h"

/* What the decoder delivered, per stream. */
struct sink {
	char	out[4][4096];
	size_t	len[4];
	int	calls;
	bool	zero_len;
	bool	overflow;
};

static void
collect(void *arg, int stream, const char *buf, size_t len)
{
	struct sink *s = arg;

	s->calls++;
	if (len == 0)
		s->zero_len = true;
	if (stream < 0 || stream > 3 ||
	    len > sizeof(s->out[0]) - s->len[stream]) {
		s->overflow = true;
		return;
	}
	memcpy(s->out[stream] + s->len[stream], buf, len);
	s->len[stream] += len;
}

/* Append one frame to msg. */
static size_t
frame(unsigned char *msg, size_t at, int stream, const char *payload,
    size_t len)
{
	msg[at] = (unsigned char)stream;
	msg[at + 1] = msg[at + 2] = msg[at + 3] = 0;
	msg[at + 4] = (unsigned char)(len >> 24);
	msg[at + 5] = (unsigned char)(len >> 16);
	msg[at + 6] = (unsigned char)(len >> 8);
	msg[at + 7] = (unsigned char)len;
	memcpy(msg + at + 8, payload, len);
	return at + 8 + len;
}

/* The sink got exactly the test message's stdout and stderr. */
static bool
sink_ok(const struct sink *s)
{
	return !s->overflow && !s->zero_len &&
	    s->len[1] == 12 && memcmp(s->out[1], "hello world\n", 12) == 0 &&
	    s->len[2] == 7 && memcmp(s->out[2], "oops\n\0\xff", 7) == 0;
}

int
main(void)
{
	struct docker_frames	 f;
	struct sink		 s;
	unsigned char		 msg[512];
	size_t			 len, cut, cut2;
	bool			 ok;

	len = 0;
	len = frame(msg, len, 1, "hello ", 6);
	len = frame(msg, len, 2, "oops\n", 5);
	len = frame(msg, len, 1, "", 0);
	len = frame(msg, len, 1, "world\n", 6);
	len = frame(msg, len, 2, "\0\xff", 2);

	/* All frames in one chunk. */
	memset(&s, 0, sizeof(s));
	docker_frames_init(&f);
	ok = docker_frames_feed(&f, (char *)msg, len, collect, &s) == 0;
	CHECK(ok && sink_ok(&s),
	    "several frames in one chunk, stdout and stderr apart");
	CHECK(docker_frames_at_boundary(&f), "at a boundary after whole frames");
	CHECK(s.calls == 4, "empty frame produces no call");

	/* Split at every byte boundary into two chunks. */
	ok = true;
	for (cut = 0; cut <= len; cut++) {
		memset(&s, 0, sizeof(s));
		docker_frames_init(&f);
		if (docker_frames_feed(&f, (char *)msg, cut, collect, &s) != 0 ||
		    docker_frames_feed(&f, (char *)msg + cut, len - cut,
		    collect, &s) != 0 || !sink_ok(&s) ||
		    !docker_frames_at_boundary(&f))
			ok = false;
	}
	CHECK(ok, "split into two chunks at every byte");

	/* Split into three chunks at every pair of positions. */
	ok = true;
	for (cut = 0; cut <= len && ok; cut++)
		for (cut2 = cut; cut2 <= len; cut2++) {
			memset(&s, 0, sizeof(s));
			docker_frames_init(&f);
			if (docker_frames_feed(&f, (char *)msg, cut, collect, &s) ||
			    docker_frames_feed(&f, (char *)msg + cut, cut2 - cut,
			    collect, &s) ||
			    docker_frames_feed(&f, (char *)msg + cut2, len - cut2,
			    collect, &s) || !sink_ok(&s)) {
				ok = false;
				break;
			}
		}
	CHECK(ok, "split into three chunks at every pair of bytes");

	/* One byte at a time. */
	memset(&s, 0, sizeof(s));
	docker_frames_init(&f);
	ok = true;
	for (cut = 0; cut < len; cut++) {
		if (docker_frames_feed(&f, (char *)msg + cut, 1, collect, &s) != 0)
			ok = false;
		if (cut == 3 && docker_frames_at_boundary(&f))
			ok = false;	/* inside the first header */
	}
	CHECK(ok && sink_ok(&s), "one byte at a time");

	/* Partial frame at the end is reported. */
	docker_frames_init(&f);
	memset(&s, 0, sizeof(s));
	docker_frames_feed(&f, (char *)msg, 10, collect, &s);
	CHECK(!docker_frames_at_boundary(&f) && s.len[1] == 2,
	    "partial payload is delivered and not at a boundary");

	/* Stream ids 0 and 3 are valid and reported as they are. */
	len = frame(msg, 0, 0, "in", 2);
	len = frame(msg, len, 3, "engine error", 12);
	memset(&s, 0, sizeof(s));
	docker_frames_init(&f);
	ok = docker_frames_feed(&f, (char *)msg, len, collect, &s) == 0;
	CHECK(ok && s.len[0] == 2 && s.len[3] == 12, "stream ids 0 and 3 accepted");

	/* Bad stream id: error, and stays in error. */
	len = frame(msg, 0, 1, "ok", 2);
	len = frame(msg, len, 7, "bad", 3);
	len = frame(msg, len, 1, "after", 5);
	memset(&s, 0, sizeof(s));
	docker_frames_init(&f);
	ok = docker_frames_feed(&f, (char *)msg, len, collect, &s) == -1;
	CHECK(ok && s.len[1] == 2, "bad stream id rejected after earlier frames");
	CHECK(docker_frames_feed(&f, (char *)msg, 10, collect, &s) == -1 &&
	    s.len[1] == 2 && !docker_frames_at_boundary(&f),
	    "decoder stays failed");

	/* Non-zero padding (e.g. a TTY stream of plain text) is rejected. */
	memset(&s, 0, sizeof(s));
	docker_frames_init(&f);
	CHECK(docker_frames_feed(&f, "\x01hello world", 12, collect, &s) == -1 &&
	    s.calls == 0, "plain text (non-zero padding) rejected");

	/* Stream id 255 split across calls. */
	memset(&s, 0, sizeof(s));
	docker_frames_init(&f);
	ok = docker_frames_feed(&f, "\xff\0\0", 3, collect, &s) == 0 &&
	    docker_frames_feed(&f, "\0\0\0\0\1x", 6, collect, &s) == -1;
	CHECK(ok && s.calls == 0, "bad stream id split across calls rejected");

	/* A large length is streamed through, never buffered. */
	memset(&s, 0, sizeof(s));
	docker_frames_init(&f);
	ok = docker_frames_feed(&f, "\x01\0\0\0\xff\xff\xff\xff", 8, collect, &s) == 0 &&
	    docker_frames_feed(&f, "abc", 3, collect, &s) == 0 &&
	    f.left == UINT32_MAX - 3 && s.len[1] == 3;
	CHECK(ok, "4 GiB frame length streams through");

	/* NULL callback: frames decoded and dropped. */
	len = frame(msg, 0, 1, "x", 1);
	docker_frames_init(&f);
	CHECK(docker_frames_feed(&f, (char *)msg, len, NULL, NULL) == 0 &&
	    docker_frames_at_boundary(&f), "NULL callback allowed");

	return check_status();
}
