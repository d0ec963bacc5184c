/*
 * http.c: requests and responses over libfcgi: the request's parameters
 * and headers, the response's status and headers, whole responses, and
 * http_serve, which serves FastCGI with the pool (pool.c) or one plain
 * CGI request (cgi.c). The body is read in body.c and the response's
 * bytes leave through out.c; extern.h lists the files.
 */
#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcgiapp.h>

#include "base/js.h"
#include "base/log.h"
#include "http/extern.h"
#include "http/http.h"

static atomic_bool	 serving_cgi = true;	/* until http_serve knows */

bool
http_stopping(void)
{
	return pool_stopping();
}

bool
http_serving_cgi(void)
{
	return atomic_load(&serving_cgi);
}

const char *
http_param(struct http_req *r, const char *name)
{
	return FCGX_GetParam(name, r->envp);
}

const char *
http_method(struct http_req *r)
{
	const char *m = http_param(r, "REQUEST_METHOD");

	return m != NULL ? m : "GET";
}

const char *
http_path(struct http_req *r)
{
	const char	*uri;
	size_t		 n;

	if (r->path != NULL)
		return r->path;
	if ((uri = http_param(r, "REQUEST_URI")) == NULL) {
		/* Plain CGI servers may not pass REQUEST_URI. */
		const char *sn = http_param(r, "SCRIPT_NAME");
		const char *pi = http_param(r, "PATH_INFO");
		size_t a = sn ? strlen(sn) : 0, b = pi ? strlen(pi) : 0;

		if ((r->path = malloc(a + b + 1)) == NULL)
			return "/";
		memcpy(r->path, sn ? sn : "", a);
		memcpy(r->path + a, pi ? pi : "", b);
		r->path[a + b] = '\0';
		return r->path;
	}
	n = strcspn(uri, "?#");
	if ((r->path = strndup(uri, n)) == NULL)
		return "/";
	return r->path;
}

const char *
http_query(struct http_req *r)
{
	const char *q = http_param(r, "QUERY_STRING");

	return q != NULL ? q : "";
}

const char *
http_header(struct http_req *r, const char *name)
{
	char	 key[128];
	size_t	 i, o;

	if (strcasecmp(name, "Content-Type") == 0)
		return http_param(r, "CONTENT_TYPE");
	if (strcasecmp(name, "Content-Length") == 0)
		return http_param(r, "CONTENT_LENGTH");
	memcpy(key, "HTTP_", 5);
	for (i = 0, o = 5; name[i] != '\0' && o < sizeof(key) - 1; i++, o++)
		key[o] = name[i] == '-' ? '_' : (char)toupper((unsigned char)name[i]);
	key[o] = '\0';
	return http_param(r, key);
}

const char *
http_remote_addr(struct http_req *r)
{
	const char *a = http_param(r, "REMOTE_ADDR");

	return a != NULL ? a : "";
}

void
http_status(struct http_req *r, int status)
{
	r->status = status;
}

static bool
header_safe(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '\r' || *s == '\n')
			return false;
	return true;
}

void
http_headers_clear(struct http_req *r)
{
	size_t i;

	if (r->started)
		return;
	for (i = 0; i < r->nheaders; i++) {
		free(r->hname[i]);
		free(r->hvalue[i]);
	}
	r->nheaders = 0;
}

void
http_header_add(struct http_req *r, const char *name, const char *value)
{
	if (r->started || r->nheaders >= MAX_HEADERS) {
		log_warn("header %s dropped (%s)", name,
		    r->started ? "already sent" : "too many");
		return;
	}
	if (!header_safe(name) || !header_safe(value)) {
		log_warn("header %s dropped: CR or LF in value", name);
		return;
	}
	r->hname[r->nheaders] = strdup(name);
	r->hvalue[r->nheaders] = strdup(value);
	if (r->hname[r->nheaders] == NULL || r->hvalue[r->nheaders] == NULL) {
		free(r->hname[r->nheaders]);
		free(r->hvalue[r->nheaders]);
		return;
	}
	r->nheaders++;
}

int
http_send(struct http_req *r, int status, const char *ctype, const void *body,
    size_t len)
{
	char n[32];

	http_status(r, status);
	if (ctype != NULL)
		http_header_add(r, "Content-Type", ctype);
	snprintf(n, sizeof(n), "%zu", len);
	http_header_add(r, "Content-Length", n);
	if (strcmp(http_method(r), "HEAD") == 0)
		return out_start(r);
	return http_write(r, body, len);
}

int
http_send_json(struct http_req *r, int status, struct json_object *obj)
{
	const char	*text;
	size_t		 len;

	text = js_text(obj, &len);
	http_header_add(r, "Cache-Control", "no-store");
	return http_send(r, status, "application/json", text, len);
}

int
http_send_error(struct http_req *r, int status, const char *detail)
{
	char	 buf[1024];
	int	 n;

	n = snprintf(buf, sizeof(buf), "%d %s\n%s%s", status, http_reason(status),
	    detail != NULL ? detail : "", detail != NULL ? "\n" : "");
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(buf))
		n = (int)sizeof(buf) - 1;
	http_header_add(r, "Cache-Control", "no-store");
	http_header_add(r, "X-Content-Type-Options", "nosniff");
	return http_send(r, status, "text/plain; charset=utf-8", buf, (size_t)n);
}

const char *
http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 201: return "Created";
	case 202: return "Accepted";
	case 204: return "No Content";
	case 206: return "Partial Content";
	case 302: return "Found";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 406: return "Not Acceptable";
	case 409: return "Conflict";
	case 410: return "Gone";
	case 411: return "Length Required";
	case 412: return "Precondition Failed";
	case 413: return "Content Too Large";
	case 415: return "Unsupported Media Type";
	case 416: return "Range Not Satisfiable";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Unknown";
	}
}

/* Reset per-request state after the handler ran. */
static void
req_reset(struct http_req *r)
{
	r->started = false;
	http_headers_clear(r);
	free(r->body);
	free(r->path);
	r->body = r->path = NULL;
	free(r->bulk);
	r->bulk = NULL;
	r->bulk_len = 0;
	r->status = 200;
	r->started = r->gone = r->ended = r->direct = false;
}

/*
 * What is still buffered is not flushed here: FCGX_Finish_r (FastCGI) or
 * cgi_serve does it, so a response that fits libfcgi's buffer leaves in
 * one write with the end-of-stream and FCGI_END_REQUEST records. The web
 * server has the whole answer at once, and does not close the connection
 * (having read Content-Length bytes) before the end records come.
 */
void
http_handle(struct http_req *r, http_handler handler, void *arg)
{
	handler(r, arg);
	if (!r->ended && !r->started)
		http_send_error(r, 500, "The handler sent no response.");
	if (!r->ended)
		(void)out_flush_held(r);	/* held bytes (http_coalesce) */
	req_reset(r);
}

int
http_serve(http_handler handler, void *arg, int nthreads)
{
	if (FCGX_Init() != 0) {
		log_warn("FCGX_Init failed");
		return 1;
	}
	if (FCGX_IsCGI())
		return cgi_serve(handler, arg);
	atomic_store(&serving_cgi, false);
	return pool_serve(handler, arg, nthreads);
}
