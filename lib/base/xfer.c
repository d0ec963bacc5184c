/*
 * xfer.c: outbound HTTP over libcurl; see xfer.h.
 */
#include <pthread.h>
#include <string.h>

#include "base/log.h"
#include "base/xfer.h"

static pthread_once_t	 once = PTHREAD_ONCE_INIT;
static CURLcode		 init_rc = CURLE_FAILED_INIT;

static void
init_once(void)
{
	const curl_version_info_data *v;

	if ((init_rc = curl_global_init(CURL_GLOBAL_DEFAULT)) != CURLE_OK)
		return;
	/* TLS must be OpenSSL's (Debian's libcurl4-openssl-dev), as the rest. */
	v = curl_version_info(CURLVERSION_NOW);
	if (v->ssl_version == NULL || strncmp(v->ssl_version, "OpenSSL", 7) != 0)
		log_warn("libcurl %s does TLS with %s, not OpenSSL: install "
		    "the OpenSSL flavour of libcurl", v->version,
		    v->ssl_version != NULL ? v->ssl_version : "nothing");
}

int
xfer_global_init(void)
{
	pthread_once(&once, init_once);
	return init_rc == CURLE_OK ? 0 : -1;
}

void
xfer_global_cleanup(void)
{
	if (init_rc == CURLE_OK)
		curl_global_cleanup();
	init_rc = CURLE_FAILED_INIT;
}

int
xfer_defaults(CURL *e, char *errbuf)
{
	if (errbuf != NULL)
		errbuf[0] = '\0';
	if (curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_PROXY, "") != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_NOPROXY, "*") != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https") != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_HTTP_VERSION,
	    (long)CURL_HTTP_VERSION_1_1) != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_USERAGENT, "code-sandbox") != CURLE_OK ||
	    curl_easy_setopt(e, CURLOPT_ERRORBUFFER, errbuf) != CURLE_OK)
		return -1;
	return 0;
}

enum xfer_end
xfer_run(CURLM *m, CURL *e, int (*slice)(void *arg), void *arg, CURLcode *res)
{
	CURLMsg		*msg;
	enum xfer_end	 end = XFER_FAILED;
	int		 running, left, wait;

	*res = CURLE_OK;
	if (curl_multi_add_handle(m, e) != CURLM_OK)
		return XFER_FAILED;
	for (;;) {
		if (curl_multi_perform(m, &running) != CURLM_OK)
			break;
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			if (msg->msg == CURLMSG_DONE && msg->easy_handle == e) {
				*res = msg->data.result;
				end = XFER_DONE;
				goto out;
			}
		}
		if ((wait = slice(arg)) < 0) {
			end = XFER_STOPPED;
			break;
		}
		if (curl_multi_poll(m, NULL, 0, wait, NULL) != CURLM_OK)
			break;
	}
out:
	curl_multi_remove_handle(m, e);
	return end;
}

const char *
xfer_reason(CURLcode rc, const char *errbuf)
{
	return errbuf != NULL && errbuf[0] != '\0' ? errbuf :
	    curl_easy_strerror(rc);
}
