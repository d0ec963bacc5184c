/*
 * sandbox/portconn.c: see sandbox/portconn.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "engine/docker.h"
#include "sandbox/extern.h"
#include "sandbox/portconn.h"
#include "sandbox/sandbox.h"
#include "sandbox/sup.h"

#define OPEN_MS		10000	/* from the exec to the supervisor's answer */
#define RAW_MAX		(64u << 10)

struct portconn {
	struct docker_conn	*conn;
	struct docker_frames	 df;
	bool			 ended;
};

/* What docker_frames_feed decodes into: the caller's buffer. */
struct sink {
	char	*buf;
	size_t	 len;
};

static void
to_sink(void *arg, int stream, const char *buf, size_t len)
{
	struct sink *s = arg;

	if (stream != 1)
		return;		/* stderr and the engine's own: dropped */
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
}

long
portconn_recv(struct portconn *pc, void *buf, size_t len, int wait_ms)
{
	char		raw[RAW_MAX];
	struct sink	s;
	long		n;

	if (pc->ended)
		return -1;
	if (len > sizeof(raw))
		len = sizeof(raw);
	/* Decoded payloads are never longer than the raw bytes they came in. */
	if ((n = docker_conn_recv(pc->conn, raw, len, wait_ms)) < 0) {
		pc->ended = true;
		return -1;
	}
	if (n == 0)
		return 0;
	s.buf = buf;
	s.len = 0;
	if (docker_frames_feed(&pc->df, raw, (size_t)n, to_sink, &s) == -1) {
		pc->ended = true;
		return -1;
	}
	return (long)s.len;
}

int
portconn_send(struct portconn *pc, const void *buf, size_t len, int wait_ms)
{
	struct error err;

	return docker_conn_send(pc->conn, buf, len, clock_ms() + wait_ms, &err);
}

void
portconn_shutdown(struct portconn *pc)
{
	if (pc != NULL && pc->conn != NULL)
		docker_conn_shutdown(pc->conn);
}

void
portconn_close(struct portconn *pc)
{
	if (pc == NULL)
		return;
	docker_conn_close(pc->conn);
	free(pc);
}

int
portconn_open(struct sandbox *sb, long port, struct portconn **out,
    struct error *err)
{
	struct json_object	*cmd;
	struct portconn		*pc;
	char			 sup[SUP_PATH_MAX], ports[16], c;
	const char		*argv[4];
	char			*id = NULL;
	long long		 until;
	long			 n;

	*out = NULL;
	if (sup_ensure(sb, sup, err) == -1)
		return -1;
	snprintf(ports, sizeof(ports), "%ld", port);
	argv[0] = sup;
	argv[1] = "connect";
	argv[2] = ports;
	argv[3] = NULL;
	if ((pc = calloc(1, sizeof(*pc))) == NULL)
		return error_set(err, "out of memory");
	docker_frames_init(&pc->df);
	if ((cmd = sandbox_str_array(argv)) == NULL) {
		free(pc);
		return error_set(err, "out of memory");
	}
	if (sandbox_exec_create(sb, cmd, EXEC_ENV_CHANNEL, &id, err) == -1 ||
	    docker_exec_attach(sandbox_docker(sb), id, &pc->conn, err) == -1)
		goto fail;
	/* The supervisor's first byte: '+' connected, '-' nothing listens. */
	until = clock_ms() + OPEN_MS;
	for (;;) {
		if (clock_ms() >= until) {
			error_kind(err, ERR_UPSTREAM, "the sandbox did not answer "
			    "within %d s", OPEN_MS / 1000);
			goto fail;
		}
		if ((n = portconn_recv(pc, &c, 1, 250)) < 0) {
			error_kind(err, ERR_UPSTREAM, "the connection into the "
			    "sandbox ended before it was made");
			goto fail;
		}
		if (n == 1)
			break;
	}
	if (c != '+') {
		error_kind(err, ERR_NOT_FOUND, "nothing listens on port %ld in "
		    "the sandbox", port);
		goto fail;
	}
	json_object_put(cmd);
	free(id);
	*out = pc;
	return 0;
fail:
	json_object_put(cmd);
	free(id);
	portconn_close(pc);
	return -1;
}
