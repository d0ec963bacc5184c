/*
 * cgi.c: one plain CGI request, when fd 0 is not a listening socket.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "http/extern.h"
#include "http/http.h"

/*
 * Plain CGI: the request is this process's environment, stdin and stdout.
 * libfcgi's FCGX_Accept does not serve CGI (only its stdio layer does), so
 * the streams here are FCGX_Streams of our own over fds 0 and 1: the public
 * struct with fill and empty procedures, which FCGX_GetStr, FCGX_PutStr and
 * FCGX_FFlush call when a buffer runs out (fcgiapp.h).
 */
struct cgi_stream {
	FCGX_Stream	 s;
	int		 fd;
	unsigned char	 buf[16384];
};

static void
cgi_fill(FCGX_Stream *st)
{
	struct cgi_stream	*c = st->data;
	ssize_t			 n;

	do
		n = read(c->fd, c->buf, sizeof(c->buf));
	while (n == -1 && errno == EINTR);
	if (n <= 0) {
		st->isClosed = 1;
		st->FCGI_errno = n < 0 ? errno : 0;
		n = 0;
	}
	st->rdNext = st->stopUnget = c->buf;
	st->stop = c->buf + n;
}

static void
cgi_empty(FCGX_Stream *st, int do_close)
{
	struct cgi_stream	*c = st->data;
	unsigned char		*p = c->buf;
	ssize_t			 n;

	(void)do_close;
	while (p < st->wrNext) {
		n = write(c->fd, p, (size_t)(st->wrNext - p));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			st->isClosed = 1;
			st->FCGI_errno = errno;
			break;
		}
		p += n;
	}
	st->wrNext = c->buf;
	st->stop = c->buf + sizeof(c->buf);
}

static void
cgi_stream_init(struct cgi_stream *c, int fd, bool reader)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
	c->s.data = c;
	c->s.isReader = reader;
	c->s.fillBuffProc = cgi_fill;
	c->s.emptyBuffProc = cgi_empty;
	c->s.rdNext = c->s.wrNext = c->s.stopUnget = c->buf;
	c->s.stop = reader ? c->buf : c->buf + sizeof(c->buf);
}

int
cgi_serve(http_handler handler, void *arg)
{
	extern char		**environ;
	struct http_req		*r;
	struct cgi_stream	*in = NULL, *out = NULL;
	int			 rc = 1;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (in = malloc(sizeof(*in))) == NULL ||
	    (out = malloc(sizeof(*out))) == NULL)
		goto out;
	cgi_stream_init(in, STDIN_FILENO, true);
	cgi_stream_init(out, STDOUT_FILENO, false);
	signal(SIGPIPE, SIG_IGN);
	r->status = 200;
	r->in = &in->s;
	r->out = &out->s;
	r->envp = environ;
	http_handle(r, handler, arg);
	if (!r->ended)
		FCGX_FFlush(r->out);
	rc = 0;
out:
	free(in);
	free(out);
	free(r);
	return rc;
}
