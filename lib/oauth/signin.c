/*
 * signin.c: the sign-in page of /authorize and its error page.
 *
 * Self-contained HTML and CSS: no scripts, no external assets, readable on a
 * phone. Every interpolated value is HTML-escaped. The page is sent with a
 * Content-Security-Policy that allows only its own style block (by hash),
 * forms posting to this origin and to the client's redirect origin (Chromium
 * applies form-action to the redirect that follows the POST), and no
 * framing; with X-Frame-Options, no referrer and no caching.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/crypto.h"
#include "http/http.h"
#include "oauth/signin.h"

/* The page is small; anything past this is a bug, answered 500. */
#define PAGE_MAX	32768

static const char style[] =
    "body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,"
    "sans-serif;background:#f4f5f7;color:#1d2129}"
    "main{max-width:26rem;margin:2rem auto;padding:1.5rem;background:#fff;"
    "border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.12)}"
    "h1{font-size:1.3rem;margin:0 0 1rem}"
    "p{margin:.5rem 0}"
    ".who{background:#eef2ff;border-radius:8px;padding:.75rem;word-break:break-word}"
    ".muted{color:#5f6b7a;font-size:.9rem}"
    ".err{background:#fdecea;color:#8a1c12;border-radius:8px;padding:.75rem}"
    ".warn{background:#fff4d6;color:#5c4200;border-radius:8px;padding:.75rem}"
    "label{display:block;margin:1rem 0 .25rem;font-weight:600}"
    "input[type=password]{box-sizing:border-box;width:100%;font-size:1rem;"
    "padding:.6rem;border:1px solid #b8c0cc;border-radius:8px}"
    ".row{display:flex;flex-direction:row-reverse;gap:.75rem;margin-top:1.25rem}"
    "button{flex:1;font-size:1rem;padding:.7rem;border-radius:8px;"
    "border:1px solid #2851d6;background:#2851d6;color:#fff}"
    "button.deny{background:#fff;color:#2851d6}"
    "@media (max-width:30rem){main{margin:0;border-radius:0;min-height:100vh}}";

static char		style_hash[64];	/* "sha256-<base64>" for the CSP */
static pthread_once_t	style_once = PTHREAD_ONCE_INIT;

/* CSP hash sources are standard base64 (CSP3 §2.3.1), with padding. */
static void
style_hash_init(void)
{
	uint8_t	md[CRYPTO_SHA256_LEN];
	char	enc[48];
	size_t	n, i;

	crypto_sha256(style, strlen(style), md);
	n = crypto_b64url_encode(md, sizeof(md), enc);
	for (i = 0; i < n; i++)
		if (enc[i] == '-')
			enc[i] = '+';
		else if (enc[i] == '_')
			enc[i] = '/';
	while (n % 4 != 0)
		enc[n++] = '=';
	enc[n] = '\0';
	snprintf(style_hash, sizeof(style_hash), "sha256-%s", enc);
}

/* A page being built, at most PAGE_MAX bytes. */
struct page {
	char	buf[PAGE_MAX];
	size_t	len;
	bool	overflow;
};

static void
add(struct page *p, const char *s)
{
	size_t n = strlen(s);

	if (p->overflow || n > sizeof(p->buf) - p->len) {
		p->overflow = true;
		return;
	}
	memcpy(p->buf + p->len, s, n);
	p->len += n;
}

/* HTML-escape s (text and attribute values alike). */
static void
esc(struct page *p, const char *s)
{
	char one[2] = { 0, 0 };

	for (; s != NULL && *s != '\0'; s++) {
		switch (*s) {
		case '&': add(p, "&amp;"); break;
		case '<': add(p, "&lt;"); break;
		case '>': add(p, "&gt;"); break;
		case '"': add(p, "&quot;"); break;
		case '\'': add(p, "&#39;"); break;
		default:
			if ((unsigned char)*s < 0x20 || *s == 0x7f) {
				add(p, "\xef\xbf\xbd");	/* U+FFFD */
				break;
			}
			one[0] = *s;
			add(p, one);
		}
	}
}

static void
head(struct page *p, const char *title)
{
	add(p, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
	    "<meta name=\"referrer\" content=\"no-referrer\"><title>");
	esc(p, title);
	add(p, "</title><style>");
	add(p, style);
	add(p, "</style></head><body><main>");
}

static void
send_page(struct http_req *r, int status, struct page *p, const char *form_origin)
{
	char csp[1536];

	pthread_once(&style_once, style_hash_init);
	add(p, "</main></body></html>\n");
	if (p->overflow) {
		http_send_error(r, 500, "The page could not be built.");
		return;
	}
	snprintf(csp, sizeof(csp), "default-src 'none'; style-src '%s'; "
	    "img-src 'none'; base-uri 'none'; form-action %s%s; "
	    "frame-ancestors 'none'", style_hash,
	    form_origin != NULL ? "'self' " : "'none'",
	    form_origin != NULL ? form_origin : "");
	http_header_add(r, "Content-Security-Policy", csp);
	http_header_add(r, "X-Frame-Options", "DENY");
	http_header_add(r, "Referrer-Policy", "no-referrer");
	http_header_add(r, "Cache-Control", "no-store");
	http_header_add(r, "Pragma", "no-cache");
	http_header_add(r, "X-Content-Type-Options", "nosniff");
	http_send(r, status, "text/html; charset=utf-8", p->buf, p->len);
}

void
signin_page(struct http_req *r, int status, const struct signin *s)
{
	struct page *p;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		http_send_error(r, 500, "Out of memory.");
		return;
	}
	head(p, "Sign in to code-sandbox");
	add(p, "<h1>Sign in to code-sandbox</h1><div class=\"who\"><p><strong>");
	esc(p, s->client_name != NULL && *s->client_name != '\0' ?
	    s->client_name : "An unnamed application");
	add(p, "</strong> asks to use this sandbox: to run commands and read and "
	    "write its files.</p><p class=\"muted\">You will be sent back to <strong>");
	esc(p, s->redirect_host);
	add(p, "</strong></p><p class=\"muted\">Client: ");
	esc(p, s->client_id);
	add(p, "</p></div>");
	/*
	 * Anyone can register a client under any name with their own https
	 * redirect and send the owner a genuine link: name the host the code
	 * would go to when it is not a known one, before the key field.
	 */
	if (s->unknown_host) {
		add(p, "<p class=\"warn\" role=\"alert\" id=\"unknown-host\">"
		    "<strong>Check the address.</strong> If you allow this, "
		    "access to the sandbox goes to <strong>");
		esc(p, s->redirect_host);
		add(p, "</strong>, which is not one of the hosts this server "
		    "knows. Any site can register an application under any "
		    "name: enter the key only if you started this sign-in "
		    "yourself from an application you trust at that address.</p>");
	}
	if (s->message != NULL) {
		add(p, "<p class=\"err\" role=\"alert\">");
		esc(p, s->message);
		add(p, "</p>");
	}
	add(p, "<form method=\"post\" autocomplete=\"off\">"
	    "<input type=\"hidden\" name=\"request\" value=\"");
	esc(p, s->request_id);
	add(p, "\"><label for=\"key\">Your key</label>"
	    "<input type=\"password\" id=\"key\" name=\"key\" required "
	    "autofocus autocomplete=\"current-password\" maxlength=\"512\">"
	    "<p class=\"muted\">The personal key the operator gave you, or "
	    "SANDBOX_API_KEY in the server's settings file "
	    "(/etc/code-sandbox/env when installed, .env in a source "
	    "tree).</p>"
	    /* Allow comes first so that Enter submits it; CSS shows it right. */
	    "<div class=\"row\"><button type=\"submit\" name=\"action\" "
	    "value=\"allow\">Allow</button><button type=\"submit\" "
	    "name=\"action\" value=\"deny\" class=\"deny\" formnovalidate>"
	    "Cancel</button></div></form>");
	send_page(r, status, p, s->form_origin);
	free(p);
}

void
signin_error(struct http_req *r, int status, const char *title,
    const char *detail)
{
	struct page *p;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		http_send_error(r, 500, "Out of memory.");
		return;
	}
	head(p, title);
	add(p, "<h1>");
	esc(p, title);
	add(p, "</h1><p class=\"err\">");
	esc(p, detail);
	add(p, "</p><p class=\"muted\">Nothing was sent back to the application. "
	    "Start again from the application that sent you here.</p>");
	send_page(r, status, p, NULL);
	free(p);
}
