/*
 * xfer.h: outbound HTTP over libcurl (Debian's OpenSSL flavour, so TLS is
 * the OpenSSL the programs already load): the process-wide set-up, the
 * options every transfer of ours carries, and the loop that drives one
 * transfer in slices of time its caller chooses.
 *
 * Users: the Docker Engine API client (lib/engine/) and the Client ID
 * Metadata Document fetch (lib/oauth/cimd.c). libcurl parses HTTP/1.1 and
 * its framing; what a user still checks itself (a strict status line, a
 * repeated Content-Length, endless interim answers) it checks in its header
 * callback.
 *
 * Threads: libcurl is set up once per process, before any thread starts
 * (xfer_global_init); an easy or multi handle belongs to one thread.
 */
#ifndef CS_XFER_H
#define CS_XFER_H

#include <curl/curl.h>

/*
 * curl_global_init, once per process before threads start (later calls do
 * nothing). 0, or -1 when libcurl cannot be set up.
 */
int	xfer_global_init(void);
void	xfer_global_cleanup(void);

/*
 * The options every transfer carries, on a new or reset handle: no
 * signals (threads), no proxy from the environment (http_proxy and
 * friends would bypass a pinned address or leak the engine's traffic),
 * http and https only, no redirects followed, no cookies, HTTP/1.1, our
 * User-Agent, errors into errbuf (CURL_ERROR_SIZE bytes, may be NULL).
 * 0, or -1 when libcurl refused an option (out of memory).
 */
int	xfer_defaults(CURL *, char *errbuf);

/* How xfer_run ended. */
enum xfer_end {
	XFER_DONE,		/* the transfer ended: *res says how */
	XFER_STOPPED,		/* slice asked to stop; the transfer is dropped */
	XFER_FAILED,		/* the multi interface failed (out of memory) */
};

/*
 * Drive e on m until it ends: between turns, slice(arg) gives the next wait
 * in milliseconds (at least 1), or -1 to end the transfer now. e is added to
 * m here and removed before returning (m keeps its connection for reuse when
 * e's options allow it).
 */
enum xfer_end xfer_run(CURLM *m, CURL *e, int (*slice)(void *arg), void *arg,
	    CURLcode *res);

/* The reason for a transfer's result: errbuf when libcurl wrote one, else its name. */
const char *xfer_reason(CURLcode, const char *errbuf);

#endif
