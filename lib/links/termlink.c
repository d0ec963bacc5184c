/*
 * termlink.c: the terminal link's cookie, page, screen stream and
 * keystrokes; see links/termlink.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/crypto.h"
#include "base/form.h"
#include "base/log.h"
#include "http/http.h"
#include "links/links.h"
#include "links/termlink.h"
#include "sandbox/files.h"
#include "sandbox/sandbox.h"
#include "sandbox/term.h"
#include "store/db.h"
#include "store/db_terms.h"

#define PREFIX		"/dl/t/"
#define COOKIE		"cs_term"
#define WATCH_MS	1000	/* one wait for a changed screen, at most */
#define RETRY_MS	250	/* after a failed read */
#define CHECK_MS	1000	/* the link and the terminal checked this often */
#define PING_MS		10000
#define KEYS_MAX	4096	/* bytes of keystrokes in one POST */
#define FAILS_MAX	20	/* reads in a row that fail: the stream ends */

static const char page_js[] =
    "'use strict';\n"
    "const scr = document.getElementById('s');\n"
    "const st = document.getElementById('st');\n"
    "let queue = '';\n"
    "let busy = false;\n"
    "async function pump() {\n"
    "  if (busy || queue === '') return;\n"
    "  busy = true;\n"
    "  const body = queue;\n"
    "  queue = '';\n"
    "  try {\n"
    "    const r = await fetch('keys', { method: 'POST', body, headers: { 'Content-Type': 'text/plain;charset=utf-8' }, credentials: 'same-origin', cache: 'no-store' });\n"
    "    if (!r.ok) st.textContent = 'Keystrokes refused (' + r.status + ').';\n"
    "  } catch (e) {\n"
    "    st.textContent = 'Keystrokes not sent.';\n"
    "  }\n"
    "  busy = false;\n"
    "  pump();\n"
    "}\n"
    "function send(seq) {\n"
    "  queue += seq;\n"
    "  pump();\n"
    "}\n"
    "const keys = { Enter: '\\r', Backspace: '\\x7f', Tab: '\\t', Escape: '\\x1b', ArrowUp: '\\x1b[A', ArrowDown: '\\x1b[B',\n"
    "  ArrowRight: '\\x1b[C', ArrowLeft: '\\x1b[D', Home: '\\x1b[H', End: '\\x1b[F', Delete: '\\x1b[3~', PageUp: '\\x1b[5~', PageDown: '\\x1b[6~' };\n"
    "document.addEventListener('keydown', (e) => {\n"
    "  let seq = null;\n"
    "  if (e.ctrlKey && !e.altKey && !e.metaKey && e.key.length === 1) {\n"
    "    const c = e.key.toUpperCase().charCodeAt(0);\n"
    "    if (c >= 64 && c < 96) seq = String.fromCharCode(c - 64);\n"
    "  } else if (keys[e.key] !== undefined) seq = keys[e.key];\n"
    "  else if (e.key.length === 1 && !e.metaKey && !e.ctrlKey) seq = (e.altKey ? '\\x1b' : '') + e.key;\n"
    "  if (seq !== null) {\n"
    "    e.preventDefault();\n"
    "    send(seq);\n"
    "  }\n"
    "});\n"
    "document.addEventListener('paste', (e) => {\n"
    "  const t = e.clipboardData.getData('text');\n"
    "  if (t) {\n"
    "    e.preventDefault();\n"
    "    send(t.replace(/\\r?\\n/g, '\\r'));\n"
    "  }\n"
    "});\n"
    "const hex = (c) => '#' + c.toString(16).padStart(6, '0');\n"
    "/* A row's columns: what each shows ({ t, w }), null for the right half of a wide character. */\n"
    "function columns(l, cells) {\n"
    "  const cp = Array.from(l);\n"
    "  const out = [];\n"
    "  let k = 0;\n"
    "  let ci = 0;\n"
    "  while (k < cp.length) {\n"
    "    while (ci < cells.length && cells[ci][1] < out.length) ci++;\n"
    "    const c = cells[ci];\n"
    "    if (c !== undefined && c[1] === out.length) {\n"
    "      out.push({ t: cp.slice(k, k + c[3]).join(''), w: c[2] });\n"
    "      for (let i = 1; i < c[2]; i++) out.push(null);\n"
    "      k += c[3];\n"
    "      ci++;\n"
    "    } else out.push({ t: cp[k++], w: 1 });\n"
    "  }\n"
    "  return out;\n"
    "}\n"
    "/* One row: its text, in spans where its colours or attributes are not the default; a wide character in a span two columns wide. */\n"
    "function row(l, runs, cells, cursor) {\n"
    "  const col = columns(l, cells);\n"
    "  const width = Math.max(col.length, cursor >= 0 ? cursor + 1 : 0, ...runs.map((r) => r[1] + r[2]));\n"
    "  while (col.length < width) col.push({ t: ' ', w: 1 });\n"
    "  const style = col.map(() => null);\n"
    "  for (const r of runs) for (let i = r[1]; i < r[1] + r[2] && i < width; i++) style[i] = r;\n"
    "  const out = [];\n"
    "  let i = 0;\n"
    "  while (i < width) {\n"
    "    const r = style[i];\n"
    "    let j = i + 1;\n"
    "    while (j < width && style[j] === r && j !== cursor && i !== cursor) j++;\n"
    "    const parts = [];\n"
    "    let text = '';\n"
    "    for (const c of col.slice(i, j)) {\n"
    "      if (c === null) continue;\n"
    "      if (c.w === 1) {\n"
    "        text += c.t;\n"
    "        continue;\n"
    "      }\n"
    "      if (text !== '') parts.push(text);\n"
    "      text = '';\n"
    "      const w = document.createElement('span');\n"
    "      w.className = 'w';\n"
    "      w.textContent = c.t;\n"
    "      parts.push(w);\n"
    "    }\n"
    "    if (text !== '') parts.push(text);\n"
    "    if (r === null && i !== cursor) out.push(...parts);\n"
    "    else {\n"
    "      const sp = document.createElement('span');\n"
    "      sp.append(...parts);\n"
    "      if (r !== null) {\n"
    "        let fg = r[3] === null ? null : hex(r[3]);\n"
    "        let bg = r[4] === null ? null : hex(r[4]);\n"
    "        if (r[5] & 8) [fg, bg] = [bg ?? '#111111', fg ?? '#dddddd'];\n"
    "        if (fg !== null) sp.style.color = fg;\n"
    "        if (bg !== null) sp.style.backgroundColor = bg;\n"
    "        if (r[5] & 1) sp.style.fontWeight = 'bold';\n"
    "        if (r[5] & 2) sp.style.textDecoration = 'underline';\n"
    "        if (r[5] & 4) sp.style.fontStyle = 'italic';\n"
    "      }\n"
    "      if (i === cursor) sp.className = 'c';\n"
    "      out.push(sp);\n"
    "    }\n"
    "    i = j;\n"
    "  }\n"
    "  out.push('\\n');\n"
    "  return out;\n"
    "}\n"
    "function draw(s) {\n"
    "  scr.replaceChildren();\n"
    "  s.lines.forEach((l, i) => {\n"
    "    const runs = (s.runs || []).filter((r) => r[0] === i);\n"
    "    const cells = (s.cells || []).filter((c) => c[0] === i);\n"
    "    scr.append(...row(l, runs, cells, i === s.cursor_row && !s.exited ? s.cursor_col : -1));\n"
    "  });\n"
    "  st.textContent = s.exited ? 'The program exited with code ' + s.exit_code + '.' :\n"
    "    'Connected: type here. The model sees this screen, never your keystrokes.';\n"
    "}\n"
    "const es = new EventSource('events');\n"
    "es.onmessage = (e) => draw(JSON.parse(e.data));\n"
    "es.addEventListener('end', (e) => {\n"
    "  st.textContent = 'This link has ended (' + e.data + ').';\n"
    "  es.close();\n"
    "});\n"
    "es.onerror = () => {\n"
    "  st.textContent = 'Reconnecting...';\n"
    "};\n";

static const char page_css[] =
    "body { margin: 0; background: #111; color: #ddd; font: 14px/1.25 ui-monospace, 'DejaVu Sans Mono', monospace; }\n"
    "header { padding: 6px 10px; background: #222; color: #aaa; font-family: system-ui, sans-serif; font-size: 13px; }\n"
    "pre { margin: 0; padding: 8px 10px; white-space: pre; outline: none; }\n"
    ".c { background: #ddd; color: #111; }\n"
    ".w { display: inline-block; width: 2ch; }\n";

static void
no_cache(struct http_req *r)
{
	http_header_add(r, "Cache-Control", "no-store");
	http_header_add(r, "Referrer-Policy", "no-referrer");
	http_header_add(r, "X-Content-Type-Options", "nosniff");
	http_header_add(r, "X-Frame-Options", "DENY");
}

void
termlink_open(struct http_req *r, const struct config *cfg,
    const struct link_row *row, const char *reqpath)
{
	struct link_url	 u;
	struct error	 err;
	char		 cookie[512], loc[64];
	const char	*tid = files_basename(row->path);
	long long	 age = row->expires - (long long)time(NULL);

	if (links_parse(reqpath, &u, &err) == -1) {
		http_send_error(r, 400, err.msg);
		return;
	}
	snprintf(cookie, sizeof(cookie), COOKIE "=%lld.%s.%s; Path=" PREFIX
	    "%s/; Max-Age=%lld; HttpOnly; SameSite=Strict%s", u.expires,
	    u.sig, tid, row->id, age > 0 ? age : 0,
	    strncmp(cfg->public_url, "https:", 6) == 0 ? "; Secure" : "");
	crypto_wipe(&u, sizeof(u));
	snprintf(loc, sizeof(loc), PREFIX "%s/", row->id);
	no_cache(r);
	http_header_add(r, "Set-Cookie", cookie);
	crypto_wipe(cookie, sizeof(cookie));
	http_header_add(r, "Location", loc);
	http_send(r, 303, "text/plain; charset=utf-8", "See the terminal.\n",
	    18);
}

/* The link of this request, by its cookie, checked as the link itself. */
static int
check(struct http_req *r, const struct config *cfg, struct db *db,
    const char *id, struct link_row *row, char *tid, size_t tidsz,
    struct error *err)
{
	struct db_term	 t;
	char		 c[256], path[512], *dot1, *dot2;
	int		 rc;

	if (form_cookie(http_header(r, "Cookie"), COOKIE, c, sizeof(c)) == -1)
		return error_kind(err, ERR_DENIED, "Open the terminal link "
		    "itself (its cookie is missing).");
	if ((dot1 = strchr(c, '.')) == NULL ||
	    (dot2 = strchr(dot1 + 1, '.')) == NULL || !term_valid_id(dot2 + 1)) {
		crypto_wipe(c, sizeof(c));
		return error_kind(err, ERR_DENIED, "The terminal link's cookie "
		    "is malformed: open the link again.");
	}
	*dot1 = *dot2 = '\0';
	snprintf(tid, tidsz, "%s", dot2 + 1);
	snprintf(path, sizeof(path), "/dl/%s/%s/%s/%s.%s", id, c, dot1 + 1,
	    tid, LINK_KIND_TERMINAL);
	crypto_wipe(c, sizeof(c));
	rc = links_check(db, cfg->api_key, path, (long long)time(NULL), row,
	    err);
	crypto_wipe(path, sizeof(path));
	if (rc == -1)
		return -1;
	if (strcmp(row->archive, LINK_KIND_TERMINAL) != 0)
		return error_kind(err, ERR_DENIED, "Not a terminal link.");
	if (db_term_get(db, tid, &t) != LOOKUP_FOUND ||
	    strcmp(t.owner, row->owner) != 0 || t.closed)
		return error_kind(err, ERR_GONE, "The terminal has been closed.");
	return 0;
}

static void
page(struct http_req *r)
{
	char	nonce[32], csp[256], *html;
	size_t	n;

	if (crypto_token(nonce, sizeof(nonce), 16) == -1) {
		http_send_error(r, 500, "No randomness.");
		return;
	}
	snprintf(csp, sizeof(csp), "default-src 'none'; script-src 'nonce-%s'; "
	    "style-src 'nonce-%s'; connect-src 'self'; base-uri 'none'; "
	    "form-action 'none'; frame-ancestors 'none'", nonce, nonce);
	n = sizeof(page_js) + sizeof(page_css) + 1024;
	if ((html = malloc(n)) == NULL) {
		http_send_error(r, 500, "Out of memory.");
		return;
	}
	snprintf(html, n, "<!doctype html>\n<html lang=\"en\"><head>"
	    "<meta charset=\"utf-8\"><title>Terminal</title>"
	    "<meta name=\"viewport\" content=\"width=device-width\">"
	    "<style nonce=\"%s\">\n%s</style></head><body>"
	    "<header id=\"st\">Connecting...</header>"
	    "<pre id=\"s\" tabindex=\"0\" aria-label=\"terminal\"></pre>"
	    "<script nonce=\"%s\">\n%s</script></body></html>\n", nonce,
	    page_css, nonce, page_js);
	no_cache(r);
	http_header_add(r, "Content-Security-Policy", csp);
	http_send(r, 200, "text/html; charset=utf-8", html, strlen(html));
	free(html);
}

/* The screen as the page draws it. */
static char *
screen_json(const struct term_screen *s)
{
	struct json_object	*o = json_object_new_object(), *lines, *runs, *cells;
	size_t			 i;
	const char		*p = s->text, *nl, *end = s->text + s->text_len;
	char			*out;

	lines = json_object_new_array();
	for (; p < end && (nl = memchr(p, '\n', (size_t)(end - p))) != NULL;
	    p = nl + 1)
		json_object_array_add(lines, json_object_new_string_len(p,
		    (int)(nl - p)));
	json_object_object_add(o, "rows", json_object_new_int(s->rows));
	json_object_object_add(o, "cols", json_object_new_int(s->cols));
	json_object_object_add(o, "cursor_row", json_object_new_int(s->cursor_row));
	json_object_object_add(o, "cursor_col", json_object_new_int(s->cursor_col));
	json_object_object_add(o, "lines", lines);
	runs = json_object_new_array();
	for (i = 0; i < s->nruns; i++) {
		struct json_object *a = json_object_new_array();

		json_object_array_add(a, json_object_new_int(s->runs[i].row));
		json_object_array_add(a, json_object_new_int(s->runs[i].col));
		json_object_array_add(a, json_object_new_int(s->runs[i].len));
		json_object_array_add(a, s->runs[i].fg == TERM_COLOR_DEFAULT ?
		    NULL : json_object_new_int64((int64_t)s->runs[i].fg));
		json_object_array_add(a, s->runs[i].bg == TERM_COLOR_DEFAULT ?
		    NULL : json_object_new_int64((int64_t)s->runs[i].bg));
		json_object_array_add(a, json_object_new_int(s->runs[i].attrs));
		json_object_array_add(runs, a);
	}
	json_object_object_add(o, "runs", runs);
	cells = json_object_new_array();
	for (i = 0; i < s->ncells; i++) {
		struct json_object *a = json_object_new_array();

		json_object_array_add(a, json_object_new_int(s->cells[i].row));
		json_object_array_add(a, json_object_new_int(s->cells[i].col));
		json_object_array_add(a, json_object_new_int(s->cells[i].width));
		json_object_array_add(a, json_object_new_int(s->cells[i].chars));
		json_object_array_add(cells, a);
	}
	json_object_object_add(o, "cells", cells);
	json_object_object_add(o, "exited", json_object_new_boolean(s->state != 0));
	json_object_object_add(o, "exit_code", s->state == 0 ? NULL :
	    json_object_new_int(s->state == 1 ? s->code : 128 + s->code));
	out = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	return out;
}

static void
pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * The screen stream: the screen now, then each new one as soon as the
 * terminal has it. term_watch is a long poll over the channel that the
 * supervisor answers when the screen changes (after a coalescing window
 * of a few ms), so a keystroke's echo is pushed, not found by polling.
 * The link and the terminal are checked again every CHECK_MS or so, and
 * a ping goes every PING_MS. A terminal started before screens had a
 * generation (gen 0) is read every OLD_POLL_MS instead.
 */
#define OLD_POLL_MS	50

static void
events(struct http_req *r, const struct config *cfg, struct db *db,
    const char *id, struct link_row *row, const char *tid)
{
	struct sandbox		*sb;
	struct term_screen	 s;
	struct error		 err;
	char			*last = NULL, *j, tid2[80];
	const char		*why = NULL;
	long long		 now, checked, wrote;
	unsigned long		 gen = 0;
	int			 fails = 0, rc;

	if (sandbox_open(cfg, row->owner, &sb, &err) == -1) {
		http_send_error(r, 503, err.msg);
		return;
	}
	no_cache(r);
	http_status(r, 200);
	http_header_add(r, "Content-Type", "text/event-stream");
	http_header_add(r, "X-Accel-Buffering", "no");
	http_puts(r, ": screen\n\n");
	http_flush(r);
	checked = wrote = clock_ms();
	while (why == NULL && !http_stopping() && !http_gone(r)) {
		now = clock_ms();
		if (now - checked >= CHECK_MS) {
			checked = now;
			if (check(r, cfg, db, id, row, tid2, sizeof(tid2),
			    &err) == -1) {
				why = err.kind == ERR_GONE ? "closed or revoked" :
				    "refused";
				break;
			}
		}
		if (gen != 0)
			rc = term_watch(sb, tid, gen, WATCH_MS, TERM_ATTRS, &s,
			    &err);
		else
			rc = term_send(sb, tid, "", 0, NULL, 0, 0, 0,
			    TERM_ATTRS, &s, &err);
		if (rc == -1) {
			if (err.kind == ERR_NOT_FOUND || ++fails >= FAILS_MAX)
				why = "the terminal has ended";
			pause_ms(RETRY_MS);
			continue;
		}
		fails = 0;
		gen = s.gen;
		j = screen_json(&s);
		term_screen_free(&s);
		if (j != NULL && (last == NULL || strcmp(j, last) != 0)) {
			if (http_puts(r, "data: ") == -1 || http_puts(r, j) == -1 ||
			    http_puts(r, "\n\n") == -1 || http_flush(r) == -1) {
				free(j);
				break;
			}
			free(last);
			last = j;
			wrote = clock_ms();
		} else
			free(j);
		if (clock_ms() - wrote >= PING_MS) {
			if (http_puts(r, ": ping\n\n") == -1 || http_flush(r) == -1)
				break;
			wrote = clock_ms();
		}
		if (gen == 0)
			pause_ms(OLD_POLL_MS);
	}
	if (why != NULL && !http_gone(r)) {
		http_puts(r, "event: end\ndata: ");
		http_puts(r, why);
		http_puts(r, "\n\n");
		http_flush(r);
	}
	free(last);
	sandbox_close(sb);
}

/* Keystrokes: same origin only (the cookie is SameSite=Strict too). */
static void
keys(struct http_req *r, const struct config *cfg, const struct link_row *row,
    const char *tid)
{
	struct sandbox		*sb;
	struct term_screen	 s;
	struct error		 err;
	const char		*origin = http_header(r, "Origin");
	const char		*site = http_header(r, "Sec-Fetch-Site");
	const char		*body;
	size_t			 len;
	int			 status;

	if ((origin != NULL && !config_origin_allowed(cfg, origin)) ||
	    (site != NULL && strcmp(site, "same-origin") != 0)) {
		http_send_error(r, 403, "Keystrokes come from the terminal's "
		    "own page only.");
		return;
	}
	if (http_body(r, KEYS_MAX, &body, &len, &status) == -1) {
		http_send_error(r, status, "Keystrokes: at most 4096 bytes at "
		    "once.");
		return;
	}
	if (len == 0) {
		http_send(r, 204, NULL, NULL, 0);
		return;
	}
	if (sandbox_open(cfg, row->owner, &sb, &err) == -1) {
		http_send_error(r, 503, err.msg);
		return;
	}
	if (term_send(sb, tid, body, len, NULL, 0, 0, 0, 0, &s,
	    &err) == -1)
		http_send_error(r, err.kind == ERR_NOT_FOUND ? 410 : 502,
		    err.kind == ERR_NOT_FOUND ? "The terminal has ended." :
		    "The terminal could not be reached.");
	else {
		term_screen_free(&s);
		no_cache(r);
		http_send(r, 204, NULL, NULL, 0);
	}
	sandbox_close(sb);
}

bool
termlink_route(struct http_req *r, const struct config *cfg, struct db *db)
{
	const char	*p = http_path(r), *method = http_method(r), *rest;
	char		 id[LINK_ID_LEN + 1], tid[80];
	struct link_row	 row;
	struct error	 err;

	if (strncmp(p, PREFIX, strlen(PREFIX)) != 0)
		return false;
	p += strlen(PREFIX);
	if (strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789-_") != LINK_ID_LEN || p[LINK_ID_LEN] != '/') {
		http_send_error(r, 404, "No such terminal link.");
		return true;
	}
	memcpy(id, p, LINK_ID_LEN);
	id[LINK_ID_LEN] = '\0';
	rest = p + LINK_ID_LEN + 1;
	if (strcmp(rest, "") != 0 && strcmp(rest, "events") != 0 &&
	    strcmp(rest, "keys") != 0) {
		http_send_error(r, 404, "No such page of a terminal link.");
		return true;
	}
	if (strcmp(method, strcmp(rest, "keys") == 0 ? "POST" : "GET") != 0) {
		http_header_add(r, "Allow", strcmp(rest, "keys") == 0 ? "POST" :
		    "GET");
		http_send_error(r, 405, "Method not allowed here.");
		return true;
	}
	if (check(r, cfg, db, id, &row, tid, sizeof(tid), &err) == -1) {
		no_cache(r);
		http_send_error(r, error_http_status(err.kind), err.msg);
		return true;
	}
	if (rest[0] == '\0')
		page(r);
	else if (strcmp(rest, "events") == 0)
		events(r, cfg, db, id, &row, tid);
	else
		keys(r, cfg, &row, tid);
	return true;
}
