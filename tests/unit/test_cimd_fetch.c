/*
 * test_cimd_fetch.c: the Client ID Metadata Document fetch over libcurl
 * (cimd_fetch_at, lib/oauth/cimd.c) against a real TLS server on loopback:
 * `openssl s_server -WWW` serving files of a folder, with a certificate for
 * cimd.test from a CA made here. The system's CA store is taken from
 * SSL_CERT_FILE, so the test CA stands in for it. Checked: a document
 * arrives from the pinned address (cimd.test is never looked up: it
 * resolves nowhere); an untrusted CA, a wrong name, another pinned address
 * are refused; proxy variables change nothing; a document past 16 KiB is a
 * clear error; a body cut short (its length not reached, a chunked body
 * without its last chunk, with or without TLS's close_notify) is an error,
 * never a shorter document.
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

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "base/xfer.h"
#include "check.h"
#include "oauth/cimd.h"

static char	dir[] = "/tmp/cs-cimd.XXXXXX";

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

static int
write_file(const char *name, size_t size)
{
	char	 path[300];
	FILE	*f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fputs("{\"client_id\":\"x\"}", f);
	for (size_t i = 17; i < size; i++)
		fputc(' ', f);
	return fclose(f);
}

/*
 * A TLS server of one connection on 127.0.0.1:port that answers any
 * request with head and body, then ends the connection: with TLS's
 * close_notify first if notify, else by closing the socket. Forked;
 * returns the child's pid.
 */
static pid_t
cut_server(int port, const char *head, const char *body, bool notify)
{
	struct sockaddr_in	 sa;
	SSL_CTX			*ctx;
	SSL			*ssl;
	char			 crt[300], key[300], buf[4096];
	int			 ls, fd, one = 1;
	pid_t			 pid;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons((uint16_t)port);
	if ((ls = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    listen(ls, 1) == -1) {
		close(ls);
		return -1;
	}
	if ((pid = fork()) != 0) {
		close(ls);
		return pid;
	}
	snprintf(crt, sizeof(crt), "%s/leaf.pem", dir);
	snprintf(key, sizeof(key), "%s/leaf.key", dir);
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL ||
	    SSL_CTX_use_certificate_chain_file(ctx, crt) != 1 ||
	    SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    (fd = accept(ls, NULL, NULL)) == -1 ||
	    (ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, fd) != 1 ||
	    SSL_accept(ssl) != 1)
		_exit(1);
	/* The request's head: one read is enough for curl's small GET. */
	if (SSL_read(ssl, buf, sizeof(buf)) <= 0)
		_exit(1);
	SSL_write(ssl, head, (int)strlen(head));
	SSL_write(ssl, body, (int)strlen(body));
	if (notify)
		SSL_shutdown(ssl);
	close(fd);
	_exit(0);
}

static void
check_cut(const char *head, const char *body, bool notify, const char *name)
{
	static struct cimd_doc	doc;
	struct error		e;
	char			port[16], what[300];
	pid_t			pid;
	int			p = free_port();

	snprintf(port, sizeof(port), "%d", p);
	memset(&doc, 0, sizeof(doc));
	if ((pid = cut_server(p, head, body, notify)) <= 0) {
		CHECK(0, "a TLS server that cuts its body short");
		return;
	}
	snprintf(what, sizeof(what), "%s: an error, not a shorter document "
	    "(security review item 12)", name);
	CHECK(cimd_fetch_at("cimd.test", "127.0.0.1", port, "/doc.json", NULL,
	    &doc, &e) == -1, what);
	kill(pid, SIGTERM);
	waitpid(pid, NULL, 0);
}

int
main(void)
{
	static struct cimd_doc	 doc;
	struct error		 e;
	char			 port[16], path[256], cmd[2048];
	pid_t			 srv = -1;
	int			 p, i;

	signal(SIGPIPE, SIG_IGN);
	if (mkdtemp(dir) == NULL || xfer_global_init() == -1) {
		CHECK(0, "a scratch folder, libcurl set up");
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
	    "-CAcreateserial -out leaf.pem -days 1 -extfile ext >/dev/null 2>&1 && "
	    "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
	    "-nodes -keyout other.key -out other.pem -days 1 "
	    "-subj /CN=another-ca >/dev/null 2>&1", dir);
	CHECK(system(cmd) == 0, "openssl makes a CA and a certificate for "
	    "cimd.test");
	CHECK(write_file("doc.json", 100) == 0 &&
	    write_file("big.json", CIMD_MAX_BYTES + 1) == 0, "the documents");
	if ((p = free_port()) == -1) {
		CHECK(0, "a free port");
		goto out;
	}
	snprintf(port, sizeof(port), "%d", p);
	if ((srv = fork()) == 0) {
		char	acc[64];

		if (chdir(dir) == -1)
			_exit(127);
		snprintf(acc, sizeof(acc), "127.0.0.1:%d", p);
		execlp("openssl", "openssl", "s_server", "-accept", acc,
		    "-cert", "leaf.pem", "-key", "leaf.key", "-WWW", "-quiet",
		    (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && !listening(p); i++)
		usleep(100000);
	CHECK(listening(p), "openssl s_server listens");

	/* Untrusted first: the store holds another CA, not the test one. */
	snprintf(path, sizeof(path), "%s/other.pem", dir);
	setenv("SSL_CERT_FILE", path, 1);
	CHECK(cimd_fetch_at("cimd.test", "127.0.0.1", port, "/doc.json", NULL, &doc,
	    &e) == -1, "an untrusted CA: refused");
	CHECK(strstr(e.msg, "certificate") == NULL &&
	    strcmp(e.msg, "The client metadata document could not be "
	    "fetched.") == 0, "CIMD fetch errors do not name the TLS "
	    "failure to the caller (security review item 12)");
	{
		char closed[8];

		snprintf(closed, sizeof(closed), "%d", free_port());
		CHECK(cimd_fetch_at("cimd.test", "127.0.0.1", closed,
		    "/doc.json", NULL, &doc, &e) == -1 && strstr(e.msg, "refused") ==
		    NULL && strstr(e.msg, "onnect") == NULL,
		    "CIMD fetch errors do not name a refused connection "
		    "(security review item 12)");
	}

	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	setenv("SSL_CERT_FILE", path, 1);
	/* Proxies of every kind named: none is used. */
	setenv("https_proxy", "http://127.0.0.1:9", 1);
	setenv("HTTPS_PROXY", "http://127.0.0.1:9", 1);
	setenv("ALL_PROXY", "http://127.0.0.1:9", 1);
	memset(&doc, 0, sizeof(doc));
	CHECK(cimd_fetch_at("cimd.test", "127.0.0.1", port, "/doc.json", NULL, &doc,
	    &e) == 0 && doc.len == 100 && strncmp(doc.buf, "{\"client_id\"", 12) == 0,
	    "the trusted CA and the right name: the document, from the pinned "
	    "address, past the proxy variables");
	/* A CA file named for the fetch replaces the store, either way. */
	snprintf(path, sizeof(path), "%s/other.pem", dir);
	memset(&doc, 0, sizeof(doc));
	CHECK(cimd_fetch_at("cimd.test", "127.0.0.1", port, "/doc.json", path,
	    &doc, &e) == -1, "the fetch's own CA file, not the store's: refused "
	    "when it is another CA");
	snprintf(path, sizeof(path), "%s/ca.pem", dir);
	setenv("SSL_CERT_FILE", "/nonexistent", 1);
	memset(&doc, 0, sizeof(doc));
	CHECK(cimd_fetch_at("cimd.test", "127.0.0.1", port, "/doc.json", path,
	    &doc, &e) == 0 && doc.len == 100, "the fetch's own CA file: "
	    "trusted without the store");
	setenv("SSL_CERT_FILE", path, 1);
	memset(&doc, 0, sizeof(doc));
	CHECK(cimd_fetch_at("other.test", "127.0.0.1", port, "/doc.json", NULL, &doc,
	    &e) == -1, "a certificate for another name: refused");
	memset(&doc, 0, sizeof(doc));
	CHECK(cimd_fetch_at("cimd.test", "127.0.0.2", port, "/doc.json", NULL, &doc,
	    &e) == -1, "pinned to another address: that one is connected to");
	memset(&doc, 0, sizeof(doc));
	CHECK(cimd_fetch_at("cimd.test", "127.0.0.1", port, "/big.json", NULL, &doc,
	    &e) == -1 && strstr(e.msg, "too large") != NULL,
	    "a document past 16 KiB: refused");

	/* Bodies cut short, through libcurl's TLS. */
	check_cut("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 100\r\n\r\n", "{\"client_id\":\"x\"}", false,
	    "a body short of its length, the socket closed");
	check_cut("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 100\r\n\r\n", "{\"client_id\":\"x\"}", true,
	    "a body short of its length, after close_notify");
	check_cut("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", "11\r\n{\"client_id\":\"x\"}"
	    "\r\n", false, "a chunked body without its last chunk, the socket "
	    "closed");
	check_cut("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	    "Transfer-Encoding: chunked\r\n\r\n", "11\r\n{\"client_id\":\"x\"}"
	    "\r\n", true, "a chunked body without its last chunk, after "
	    "close_notify");
out:
	if (srv > 0) {
		kill(srv, SIGTERM);
		waitpid(srv, NULL, 0);
	}
	xfer_global_cleanup();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		CHECK(0, "the scratch folder removed");
	return check_status();
}
