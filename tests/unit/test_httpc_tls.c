/*
 * test_httpc_tls.c: lib/base/httpc.c's HTTPS origin (httpc_new_https, what a
 * Client ID Metadata Document fetch uses) against a real TLS server on
 * loopback: `openssl s_server -www` with a certificate for cimd.test from a
 * CA made here. The system's CA store is taken from SSL_CERT_FILE (OpenSSL's
 * default verify paths), so the test CA stands in for it. Checked: the
 * answer arrives when the name matches and the CA is trusted; a wrong name
 * and an untrusted CA are refused before any request is sent.
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/httpc.h"
#include "check.h"

static char	dir[] = "/tmp/cs-tls.XXXXXX";

/* A port free now on 127.0.0.1. */
static int
free_port(void)
{
	struct sockaddr_in	sa;
	socklen_t		len = sizeof(sa);
	int			fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
		port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

/* Does something accept connections on 127.0.0.1:port? */
static bool
listening(int port)
{
	struct sockaddr_in	sa;
	int			fd;
	bool			ok;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return false;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	ok = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	close(fd);
	return ok;
}

/*
 * GET / from host at 127.0.0.1:port over TLS: the HTTP status, or -1 when
 * no answer came (e->msg says why).
 */
static int
get(const char *host, const char *port, char *body, size_t bodysz,
    struct error *e)
{
	struct httpc		*ep = NULL;
	struct httpc_conn	*c = NULL;
	struct httpc_head	 h;
	struct httpc_body	 b;
	const char		*p;
	char			 req[256];
	long long		 deadline = clock_ms() + 10000;
	size_t			 off = 0, n, got = 0;
	long			 w;
	bool			 reused, empty;
	int			 k, status = -1;

	body[0] = '\0';
	if (httpc_new_https(host, "127.0.0.1", port, &ep, e) == -1)
		return -1;
	k = snprintf(req, sizeof(req), "GET / HTTP/1.1\r\nHost: %s\r\n"
	    "Connection: close\r\n\r\n", httpc_authority(ep));
	if ((c = httpc_conn_get(ep, false, 0, deadline, &reused, e)) == NULL)
		goto out;
	while (off < (size_t)k && clock_ms() < deadline) {
		if ((w = httpc_write(c, req + off, (size_t)k - off, 1000,
		    NULL)) < 0)
			goto out;
		off += (size_t)w;
	}
	while ((k = httpc_read_head(c, &h, false, NULL, NULL, 1000, &empty,
	    e)) == 0 && clock_ms() < deadline)
		;
	if (k != 1)
		goto out;
	httpc_body_init(&b, c, &h);
	while ((k = httpc_body_next(&b, &p, &n, 1000, e)) != 2 &&
	    clock_ms() < deadline) {
		if (k == -1)
			goto out;
		if (k == 1 && got + n < bodysz) {
			memcpy(body + got, p, n);
			got += n;
			body[got] = '\0';
		}
	}
	status = h.status;
out:
	httpc_conn_close(c);
	httpc_free(ep);
	return status;
}

int
main(void)
{
	struct error	 e;
	char		 port[16], path[256], body[8192], cmd[2048];
	pid_t		 srv = -1;
	int		 p, i, st;

	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(dir) == NULL) {
		CHECK(0, "a scratch folder");
		return check_status();
	}
	/* A CA, and a server certificate for cimd.test signed by it. */
	snprintf(cmd, sizeof(cmd), "cd %s && openssl req -x509 -newkey ec -pkeyopt "
	    "ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -days 1 "
	    "-subj /CN=code-sandbox-test-ca >/dev/null 2>&1 && "
	    "openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes "
	    "-keyout leaf.key -out leaf.csr -subj /CN=cimd.test >/dev/null 2>&1 && "
	    "printf 'subjectAltName=DNS:cimd.test\\n' > ext && "
	    "openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key "
	    "-CAcreateserial -out leaf.pem -days 1 -extfile ext >/dev/null 2>&1",
	    dir);
	CHECK(system(cmd) == 0, "openssl makes a CA and a certificate for "
	    "cimd.test");
	if ((p = free_port()) == -1) {
		CHECK(0, "a free port");
		goto out;
	}
	snprintf(port, sizeof(port), "%d", p);
	if ((srv = fork()) == 0) {
		char	acc[64], cert[300], key[300];

		snprintf(acc, sizeof(acc), "127.0.0.1:%d", p);
		snprintf(cert, sizeof(cert), "%s/leaf.pem", dir);
		snprintf(key, sizeof(key), "%s/leaf.key", dir);
		execlp("openssl", "openssl", "s_server", "-accept", acc,
		    "-cert", cert, "-key", key, "-www", "-quiet", (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "%s/ca.pem", dir);

	/* Untrusted first: the system store does not hold the test CA. */
	setenv("SSL_CERT_FILE", "/nonexistent/ca.pem", 1);
	/* Until s_server listens (at most 10 s). */
	for (i = 0; i < 100 && !listening(p); i++)
		usleep(100000);
	CHECK(listening(p), "openssl s_server listens");
	CHECK(get("cimd.test", port, body, sizeof(body), &e) == -1,
	    "an untrusted CA: refused");
	CHECK(strstr(e.msg, "certificate") != NULL ||
	    strstr(e.msg, "verify") != NULL, e.msg);

	setenv("SSL_CERT_FILE", path, 1);
	st = get("cimd.test", port, body, sizeof(body), &e);
	CHECK(st == 200, "the trusted CA and the right name: 200");
	CHECK(strstr(body, "s_server") != NULL || strstr(body, "HTML") != NULL,
	    "the body arrives");
	CHECK(get("other.test", port, body, sizeof(body), &e) == -1,
	    "a certificate for another name: refused");
	CHECK(strstr(e.msg, "hostname") != NULL ||
	    strstr(e.msg, "verify") != NULL ||
	    strstr(e.msg, "certificate") != NULL, e.msg);
out:
	if (srv > 0) {
		kill(srv, SIGTERM);
		waitpid(srv, NULL, 0);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		CHECK(0, "the scratch folder removed");
	return check_status();
}
