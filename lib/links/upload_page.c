/*
 * upload_page.c: the pages of /up (links/extern.h): the upload page and
 * the answer to its form.
 *
 * Self-contained HTML: its style and script inline, allowed by a nonce made
 * fresh for each response (CSP3 "nonce-source"), nothing else: no external
 * assets, no other script, requests to this origin only, no framing. Every
 * interpolated value is HTML-escaped. Without JavaScript the page is a
 * plain form; with it, a drop zone that PUTs each file with a progress bar.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/crypto.h"
#include "http/http.h"
#include "links/extern.h"
#include "links/uplinks.h"

#define PAGE_NONCE_BYTES	16

static const char page_style[] =
    "body{margin:0;font:16px/1.5 system-ui,-apple-system,Segoe UI,Roboto,"
    "sans-serif;background:#f4f5f7;color:#1d2129}"
    "main{max-width:34rem;margin:2rem auto;padding:1.5rem;background:#fff;"
    "border-radius:12px;box-shadow:0 1px 4px rgba(0,0,0,.12)}"
    "h1{font-size:1.3rem;margin:0 0 1rem}"
    ".muted{color:#5f6b7a;font-size:.9rem}"
    "#drop{border:2px dashed #b8c0cc;border-radius:12px;padding:1.5rem;"
    "text-align:center;margin:1rem 0}"
    "#drop.over{border-color:#2851d6;background:#eef2ff}"
    "button{font-size:1rem;padding:.6rem 1.2rem;border-radius:8px;"
    "border:1px solid #2851d6;background:#2851d6;color:#fff}"
    "ul{padding-left:1.2rem}li{margin:.4rem 0;word-break:break-word}"
    "progress{width:100%}.ok{color:#1a7f37}.bad{color:#8a1c12}"
    "@media (max-width:36rem){main{margin:0;border-radius:0;min-height:100vh}}";

/*
 * With JavaScript: the form is replaced by a drop zone; each file is PUT
 * to the link plus its name, with a progress bar, and the server's answer
 * (the stored path) shown beside it.
 */
static const char page_script[] =
    "(function(){var f=document.getElementById('form'),d=document.getElementById('drop'),"
    "i=document.getElementById('files'),l=document.getElementById('list'),"
    "done=document.getElementById('done'),busy=0;"
    "d.hidden=false;f.querySelector('button').hidden=true;"
    "function size(b){var u=['bytes','KiB','MiB','GiB','TiB'],k=0;"
    "while(b>=1024&&k<4){b/=1024;k++;}"
    "return (k&&b<10&&b%1?b.toFixed(1):Math.round(b))+' '+u[k];}"
    "function put(file){var li=document.createElement('li'),p=document.createElement('progress'),"
    "s=document.createElement('span');li.textContent=file.name+' ('+size(file.size)+') ';"
    "p.max=file.size||1;p.value=0;li.appendChild(s);li.appendChild(p);l.appendChild(li);busy++;"
    "var x=new XMLHttpRequest();x.open('PUT',location.pathname.replace(/\\/?$/,'/')+"
    "encodeURIComponent(file.name));"
    "x.upload.onprogress=function(e){if(e.lengthComputable){p.max=e.total;p.value=e.loaded;}};"
    "x.onloadend=function(){busy--;p.remove();s.className=x.status==201?'ok':'bad';"
    "s.textContent=x.status==201?x.responseText:('failed: '+(x.responseText||x.status));"
    "if(!busy)done.hidden=false;};x.send(file);}"
    "function all(fl){for(var k=0;k<fl.length;k++)put(fl[k]);}"
    "i.addEventListener('change',function(){all(i.files);i.value='';});"
    "d.addEventListener('dragover',function(e){e.preventDefault();d.className='over';});"
    "d.addEventListener('dragleave',function(){d.className='';});"
    "d.addEventListener('drop',function(e){e.preventDefault();d.className='';all(e.dataTransfer.files);});"
    "})();";

void
upload_page_size(char *buf, size_t n, long long b)
{
	static const char *const unit[] = { "bytes", "KiB", "MiB", "GiB",
	    "TiB" };
	double	v = (double)b;
	int	k = 0;

	if (b < 0)
		b = 0, v = 0;
	while (v >= 1024 && k < 4) {
		v /= 1024;
		k++;
	}
	/* One decimal below 10 when not whole (1.5 GiB), else whole (2 GiB). */
	if (k > 0 && v < 10 && v != (double)(long long)v)
		snprintf(buf, n, "%.1f %s", v, unit[k]);
	else
		snprintf(buf, n, "%.0f %s", v, unit[k]);
}

static void
esc(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			if ((unsigned char)*s < 0x20 || *s == 0x7f)
				fputs("\xef\xbf\xbd", f);
			else
				fputc(*s, f);
		}
	}
}

void
upload_page(struct http_req *r, const struct uplink_row *row, int status,
    const struct upload_result *res, size_t n)
{
	char	 nonce[40], csp[512], left[64], exp[40], sz[64];
	char	*html = NULL;
	size_t	 len = 0, i;
	FILE	*f;
	time_t	 t = (time_t)row->expires;
	struct tm tm;

	if (crypto_token(nonce, sizeof(nonce), PAGE_NONCE_BYTES) == -1 ||
	    (f = open_memstream(&html, &len)) == NULL) {
		http_send_error(r, 500, "The page could not be built.");
		return;
	}
	gmtime_r(&t, &tm);
	strftime(exp, sizeof(exp), "%Y-%m-%d %H:%M UTC", &tm);
	upload_page_size(left, sizeof(left), row->max_bytes - row->used_bytes);
	fprintf(f, "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
	    "<meta name=\"referrer\" content=\"no-referrer\">"
	    "<title>Upload files to the sandbox</title><style nonce=\"%s\">%s</style>"
	    "</head><body><main>", nonce, page_style);
	if (res == NULL) {
		fputs("<h1>Upload files to the sandbox</h1><p>Files go to <code>", f);
		esc(f, row->dir);
		fprintf(f, "</code>. This link takes up to %s more until %s.</p>",
		    left, exp);
		fputs("<form id=\"form\" method=\"post\" enctype=\"multipart/form-data\">"
		    "<div id=\"drop\" hidden>Drop files here, or choose them:</div>"
		    "<p><input id=\"files\" type=\"file\" name=\"files\" multiple></p>"
		    "<p><button type=\"submit\">Upload</button></p></form>"
		    "<ul id=\"list\"></ul><p id=\"done\" hidden class=\"ok\">Done. "
		    "Return to Claude and say the files are uploaded.</p>", f);
		fprintf(f, "<script nonce=\"%s\">%s</script>", nonce, page_script);
	} else if (n == 0) {
		fputs("<h1>No file was chosen</h1><p>Go back and choose one or more "
		    "files.</p>", f);
	} else {
		fputs("<h1>Upload finished</h1><ul>", f);
		for (i = 0; i < n; i++) {
			fputs("<li>", f);
			esc(f, res[i].sent);
			upload_page_size(sz, sizeof(sz), (long long)res[i].size);
			fprintf(f, " (%s): ", sz);
			if (res[i].ok) {
				fputs("<span class=\"ok\">stored as <code>", f);
				esc(f, res[i].stored);
				fputs("</code></span>", f);
			} else
				fputs("<span class=\"bad\">not stored</span>", f);
			fputs("</li>", f);
		}
		fputs("</ul><p>Return to Claude and say the files are uploaded.</p>", f);
	}
	fputs("</main></body></html>\n", f);
	if (fclose(f) != 0) {
		free(html);
		http_send_error(r, 500, "The page could not be built.");
		return;
	}
	snprintf(csp, sizeof(csp), "default-src 'none'; style-src 'nonce-%s'; "
	    "script-src 'nonce-%s'; connect-src 'self'; img-src 'none'; "
	    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
	    nonce, nonce);
	http_header_add(r, "Content-Security-Policy", csp);
	http_header_add(r, "X-Frame-Options", "DENY");
	http_header_add(r, "Referrer-Policy", "no-referrer");
	http_header_add(r, "X-Content-Type-Options", "nosniff");
	http_header_add(r, "Cache-Control", "no-store");
	http_send(r, status, "text/html; charset=utf-8", html, len);
	free(html);
}

