/*
 * extern.h: what the files of lib/http share; not for use outside it.
 *
 *   http.c   the request, the response's head, whole responses, http_serve
 *   body.c   reading the request body, and the connection's read deadline
 *   out.c    the response's bytes to the web server: records written
 *            straight, coalescing, the end of a request
 *   pool.c   the worker threads, the accept turn, the watch and the stop
 *   cgi.c    one plain CGI request over fds 0 and 1
 *   sse.c    Server-Sent Events over the public API only (sse.h)
 *
 * It includes no header of this folder (a handler is spelled out below
 * rather than named by http.h's http_handler), so that the files meet
 * here only.
 */
#ifndef CS_HTTP_EXTERN_H
#define CS_HTTP_EXTERN_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <fcgiapp.h>

#define MAX_HEADERS	32

struct http_req;
struct serve_ctx;

/* http.h's http_handler. */
typedef void	(*http_handler_fn)(struct http_req *, void *arg);

/*
 * A worker's place: the connection whose records it is reading (-1 none).
 * On SIGTERM the worker is woken from its read (SIG_WAKE), so that a web
 * server that sends nothing, or keeps an idle connection, does not hold
 * the stop back. The thread is signalled, never the descriptor shut down:
 * libfcgi may have closed it, and the number be another connection's.
 */
struct slot {
	struct serve_ctx	*ctx;
	int			 fd;
	atomic_bool		 writing;	/* in a write of libfcgi's */
};

struct http_req {
	FCGX_Request	 fcgx;
	struct slot	*slot;		/* its worker's (NULL: plain CGI) */
	size_t		 out_bytes;	/* through libfcgi's buffer */
	bool		 sndtimeo;	/* DIRECT_STALL_S set as send timeout */
	FCGX_Stream	*in, *out;
	FCGX_ParamArray	 envp;
	int		 status;
	char		*hname[MAX_HEADERS];
	char		*hvalue[MAX_HEADERS];
	size_t		 nheaders;
	bool		 started;
	bool		 gone;
	bool		 ended;		/* handed back early (http_end) */
	bool		 direct;	/* large writes began (put_direct) */
	long		 rcvtimeo_ms;	/* SO_RCVTIMEO set on the connection; 0 none */
	char		*bulk;		/* held body bytes (http_coalesce) */
	size_t		 bulk_len;
	char		*body;
	char		*path;
};

/*
 * Run the handler on r (pool.c's workers, cgi.c): a handler that sent
 * nothing gets a 500 answer, held bytes leave, and r is reset for the
 * next request (its headers, body and path freed).
 */
void	http_handle(struct http_req *r, http_handler_fn, void *arg);

/* The request body's deadline, in milliseconds. */
long	body_deadline_ms(void);
/* Set fd's read deadline (SO_RCVTIMEO) to ms (0: none). 0, or -1. */
int	body_set_rcvtimeo(int fd, long ms);
/*
 * r's connection's read deadline, a system call only when it changes.
 * FastCGI only: in plain CGI there is no socket, and nothing is done.
 */
void	body_rcvtimeo(struct http_req *r, long ms);

/* Send the status line and headers, once: 0, or -1 once the client is gone. */
int	out_start(struct http_req *r);
/* Send the bytes held by http_coalesce: 0, or -1 with r gone. */
int	out_flush_held(struct http_req *r);
/*
 * End r's FastCGI request (its end records), closing the connection
 * unless the web server keeps it; a no-op after http_end.
 */
void	out_finish(struct http_req *r);

/* True once the stop began (a signal, or accept() failed for good). */
bool	pool_stopping(void);
/*
 * Serve FastCGI requests from fd 0 with up to nthreads threads until a
 * stop. 0 on a clean stop, 1 on a start-up failure or when accept()
 * failed for good (reported on stderr).
 */
int	pool_serve(http_handler_fn, void *arg, int nthreads);

/* Serve the one plain CGI request of this process: 0, or 1 out of memory. */
int	cgi_serve(http_handler_fn, void *arg);

#endif
