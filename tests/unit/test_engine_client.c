/*
 * test_engine_client.c: the Docker engine client (lib/engine/docker.c)
 * against a scripted engine on a unix socket: a JSON call, the kept
 * connection reused, a kept connection the engine closed meanwhile (the
 * call goes out again on a new one), and hostile answers (a body past
 * DOCKER_MAX_RESPONSE, a malformed head, endless interim answers), raw
 * streams cut short before their length or their last chunk (an error,
 * never a complete body), and the stop flag ending a call to an engine
 * that never answers within about a second.
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "check.h"
#include "engine/docker.h"
#include "unix_listen.h"

/* What the engine does with each connection it accepts, in turn. */
struct engine {
	int		 lfd;
	const char	*answers[12];	/* one per request; NULL: close the connection */
	size_t		 lens[12];	/* an answer's length when not 0 (NUL bytes in it) */
	int		 conns;		/* connections accepted */
	int		 requests;	/* requests read */
};

/* Read one request head (the tests send no body but POST's empty one). */
static bool
read_request(int fd)
{
	char	buf[4096];
	size_t	len = 0;
	ssize_t	n;

	while (len < sizeof(buf) - 1) {
		if ((n = read(fd, buf + len, sizeof(buf) - 1 - len)) <= 0)
			return false;
		len += (size_t)n;
		buf[len] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL)
			return true;
	}
	return false;
}

static void *
engine_run(void *arg)
{
	struct engine	*e = arg;
	const char	*a;
	size_t		 n;
	int		 fd = -1, i = 0;

	for (;;) {
		if (fd == -1) {
			if ((fd = accept(e->lfd, NULL, NULL)) == -1)
				return NULL;
			e->conns++;
		}
		if ((a = e->answers[i]) == NULL) {
			close(fd);
			fd = -1;
			if (e->answers[++i] == NULL)
				return NULL;
			continue;
		}
		if (!read_request(fd))
			break;
		e->requests++;
		n = e->lens[i] != 0 ? e->lens[i] : strlen(a);
		if (write(fd, a, n) != (ssize_t)n)
			break;
		i++;
	}
	if (fd != -1)
		close(fd);
	return NULL;
}

#define CUT_FRAME "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream" \
		"\r\n\r\n\001\000\000\000\000\000\000\144abcde"

#define OK_JSON	"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" \
		"Content-Length: 11\r\n\r\n{\"Id\":\"x\"}\n"

/* A raw stream's body, counted. */
static int
count_body(void *arg, const char *p, size_t n)
{
	(void)p;
	*(size_t *)arg += n;
	return 0;
}

static bool stop_now;

static bool
stopping(void)
{
	return stop_now;
}

int
main(void)
{
	struct engine		 e;
	struct docker		*d = NULL;
	struct json_object	*resp = NULL;
	struct error		 err;
	pthread_t		 t;
	char			 path[108], host[120], big[160];
	long			 status;
	int			 rc1, rc2, rc3;

	snprintf(path, sizeof(path), "/tmp/cs-engine-%d.sock", (int)getpid());
	snprintf(host, sizeof(host), "unix://%s", path);
	memset(&e, 0, sizeof(e));
	if ((e.lfd = unix_listen(path)) == -1 ||
	    docker_open(host, false, NULL, &d, &err) == -1) {
		CHECK(0, "engine: set up");
		return check_status();
	}

	/* Two calls on one connection; it closes; a third goes out anew. */
	e.answers[0] = OK_JSON;
	e.answers[1] = OK_JSON;
	e.answers[2] = NULL;
	e.answers[3] = OK_JSON;
	e.answers[4] = NULL;
	pthread_create(&t, NULL, engine_run, &e);
	rc1 = docker_request(d, "GET", "/containers/x/json", NULL, &status, &resp, &err);
	CHECK(rc1 == 0 && status == 200 && resp != NULL &&
	    strcmp(json_object_get_string(json_object_object_get(resp, "Id")), "x") == 0,
	    "engine: a JSON call");
	json_object_put(resp);
	resp = NULL;
	rc2 = docker_request(d, "POST", "/containers/x/start", NULL, &status, NULL, &err);
	/*
	 * The engine closes the kept connection without reading: whether it
	 * does so before or after the next request goes out, nothing of an
	 * answer comes back, and the call goes out again on a new connection.
	 */
	rc3 = docker_request(d, "GET", "/containers/x/json", NULL, &status, NULL, &err);
	pthread_join(t, NULL);
	CHECK(rc2 == 0 && rc3 == 0 && status == 200, "engine: every call answered");
	CHECK(e.conns == 2 && e.requests == 3,
	    "engine: the kept connection reused, a closed one replaced");

	/* Hostile answers: each a clear error, none kept. */
	snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\nContent-Type: "
	    "application/json\r\nContent-Length: %u\r\n\r\n", DOCKER_MAX_RESPONSE + 1);
	memset(&e.answers, 0, sizeof(e.answers));
	e.conns = e.requests = 0;
	e.answers[0] = big;
	e.answers[1] = NULL;
	e.answers[2] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab";
	e.answers[3] = NULL;
	e.answers[4] = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 100 Continue\r\n\r\n"
	    "HTTP/1.1 100 Continue\r\n\r\n" OK_JSON;
	e.answers[5] = NULL;
	pthread_create(&t, NULL, engine_run, &e);
	rc1 = docker_request(d, "GET", "/a", NULL, &status, &resp, &err);
	CHECK(rc1 == -1 && err.kind == ERR_UPSTREAM && strstr(err.msg, "larger than") != NULL,
	    "engine: a body past DOCKER_MAX_RESPONSE refused by its length");
	rc2 = docker_request(d, "GET", "/b", NULL, &status, &resp, &err);
	CHECK(rc2 == -1 && err.kind == ERR_UPSTREAM && strstr(err.msg, "malformed") != NULL,
	    "engine: a malformed head is a clear error");
	rc3 = docker_request(d, "GET", "/c", NULL, &status, &resp, &err);
	CHECK(rc3 == -1 && err.kind == ERR_UPSTREAM && strstr(err.msg, "interim") != NULL,
	    "engine: endless interim answers refused");
	pthread_join(t, NULL);
	CHECK(e.conns == 3, "engine: no answer-breaking connection kept");
	CHECK(docker_request(d, "GET", "/a b", NULL, &status, &resp, &err) == -1,
	    "engine: a path that would split the request line refused");

	/* Raw streams cut short: by their length, inside a chunk. */
	memset(&e.answers, 0, sizeof(e.answers));
	e.conns = e.requests = 0;
	e.answers[0] = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc";
	e.answers[1] = NULL;
	e.answers[2] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab";
	e.answers[3] = NULL;
	/* A length libcurl could not hold would make it read to the close. */
	e.answers[4] = "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\nabc";
	e.answers[5] = NULL;
	/* An exec stream whose last frame announces 100 bytes and brings 5. */
	e.answers[6] = CUT_FRAME;
	e.lens[6] = sizeof(CUT_FRAME) - 1;
	e.answers[7] = NULL;
	pthread_create(&t, NULL, engine_run, &e);
	{
		struct docker_raw_cb	 cb = { NULL, count_body, NULL };
		struct docker_exec_cb	 xcb = { NULL, NULL, NULL };
		size_t			 got = 0;
		bool			 stopped;

		cb.arg = &got;
		rc1 = docker_raw(d, "GET", "/containers/x/archive?path=/a", &cb,
		    &status, &stopped, &err);
		CHECK(rc1 == -1 && err.kind == ERR_UPSTREAM,
		    "engine: a body cut short before its length is an error");
		rc2 = docker_raw(d, "GET", "/containers/x/archive?path=/b", &cb,
		    &status, &stopped, &err);
		CHECK(rc2 == -1 && err.kind == ERR_UPSTREAM,
		    "engine: a chunked body cut inside a chunk is an error");
		rc3 = docker_raw(d, "GET", "/containers/x/archive?path=/c", &cb,
		    &status, &stopped, &err);
		CHECK(rc3 == -1 && strstr(err.msg, "Content-Length") != NULL,
		    "engine: a Content-Length past 18 digits is refused");
		rc1 = docker_exec_start(d, "abc", &xcb, &stopped, &err);
		CHECK(rc1 == -1 && strstr(err.msg, "cut short") != NULL,
		    "engine: an exec stream cut inside a frame is an error");
	}
	pthread_join(t, NULL);

	/*
	 * An engine that never answers (the socket's backlog takes the
	 * connection, nobody reads it): the stop flag ends the call.
	 */
	{
		long long	t0;

		docker_set_stop(stopping);
		stop_now = true;
		t0 = clock_ms();
		rc1 = docker_request(d, "GET", "/never", NULL, &status, NULL, &err);
		CHECK(rc1 == -1 && err.kind == ERR_UNAVAILABLE &&
		    clock_ms() - t0 < 3000,
		    "engine: the stop flag ends a call within about a second");
		docker_set_stop(NULL);
		stop_now = false;
	}

	docker_close(d);
	close(e.lfd);
	unlink(path);
	return check_status();
}
