/* secret.c: see secret.h. */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/crypto.h"
#include "base/secret.h"

#define MASK_PATTERNS	8		/* per value: plain, %, 3 x 2 Base64 */
#define MASK_VALUES	256

int
secret_name_check(const char *name, struct error *err)
{
	size_t	 n = strlen(name);

	if (n == 0 || n >= SECRET_NAME_MAX)
		return error_kind(err, ERR_INVALID, "a secret's name is 1 to %d "
		    "characters", SECRET_NAME_MAX - 1);
	if (!isalpha((unsigned char)name[0]) || !isascii((unsigned char)name[0]) ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_-") != n)
		return error_kind(err, ERR_INVALID, "a secret's name starts with "
		    "a letter, then letters, digits, '_' or '-'");
	return 0;
}

int
secret_value_check(const char *v, size_t n, struct error *err)
{
	size_t	 i;

	if (n < SECRET_VALUE_MIN)
		return error_kind(err, ERR_INVALID, "the value is shorter than "
		    "%d bytes", SECRET_VALUE_MIN);
	if (n > SECRET_VALUE_MAX)
		return error_kind(err, ERR_INVALID, "the value is longer than "
		    "%d bytes", SECRET_VALUE_MAX);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)v[i];

		if (c < 0x20 || c == 0x7f)
			return error_kind(err, ERR_INVALID, "the value has a "
			    "control character (a newline, a tab or another) at "
			    "byte %zu", i + 1);
		if (c > 0x7f)
			return error_kind(err, ERR_INVALID, "the value has a "
			    "byte that is not ASCII at byte %zu",
			    i + 1);
	}
	return 0;
}

bool
secret_host_valid(const char *host, bool wildcard)
{
	const char	*p = host, *dot;
	size_t		 len, labels = 0;
	bool		 alpha = false;

	if (wildcard && strncmp(p, "*.", 2) == 0)
		p += 2;
	if ((len = strlen(p)) == 0 || len >= SECRET_HOST_MAX)
		return false;
	for (;;) {
		dot = strchr(p, '.');
		len = dot != NULL ? (size_t)(dot - p) : strlen(p);
		if (len == 0 || len > 63 || p[0] == '-' || p[len - 1] == '-' ||
		    strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789-") < len)
			return false;
		labels++;
		if (dot == NULL)
			break;
		p = dot + 1;
	}
	/* The last label has a letter: no address. */
	for (; *p != '\0'; p++)
		if (islower((unsigned char)*p))
			alpha = true;
	return labels >= 2 && alpha;
}

int
secret_hosts_check(const char *list, char *out, size_t n, struct error *err)
{
	char		 host[SECRET_HOST_MAX];
	const char	*p = list, *end;
	size_t		 len, i, o = 0, count = 0;

	if (n == 0)
		return error_kind(err, ERR_INVALID, "no room for the hosts");
	out[0] = '\0';
	while (*p != '\0') {
		end = p + strcspn(p, ",");
		len = (size_t)(end - p);
		if (len == 0 || len >= sizeof(host))
			return error_kind(err, ERR_INVALID, "--host: an empty or "
			    "too long name in the list");
		for (i = 0; i < len; i++)
			host[i] = (char)tolower((unsigned char)p[i]);
		host[len] = '\0';
		if (!secret_host_valid(host, false))
			return error_kind(err, ERR_INVALID, "--host: not a host "
			    "name (letters, digits, '-' and dots; no address, no "
			    "port, no wildcard): %.*s", (int)(len > 80 ? 80 : len),
			    strspn(host, "abcdefghijklmnopqrstuvwxyz0123456789-.*:") ==
			    len ? host : "(unprintable)");
		if (++count > SECRET_HOSTS_COUNT)
			return error_kind(err, ERR_INVALID, "--host: more than %d "
			    "hosts", SECRET_HOSTS_COUNT);
		/* No repeats. */
		for (i = 0; i < o; i += strcspn(out + i, ",") + 1)
			if (strncmp(out + i, host, len) == 0 &&
			    (out[i + len] == ',' || out[i + len] == '\0'))
				return error_kind(err, ERR_INVALID, "--host: %s "
				    "given twice", host);
		if (o + (o > 0) + len + 1 > n)
			return error_kind(err, ERR_INVALID, "--host: the list is "
			    "longer than %zu bytes", n - 1);
		if (o > 0)
			out[o++] = ',';
		memcpy(out + o, host, len + 1);
		o += len;
		if (*end == '\0')
			break;
		p = end + 1;
		if (*p == '\0')
			return error_kind(err, ERR_INVALID, "--host: the list ends "
			    "with a comma");
	}
	if (o == 0)
		return error_kind(err, ERR_INVALID, "--host: no host given");
	return 0;
}

/* Printable ASCII, no quote or backslash. */
static bool
printable(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return false;
	return true;
}

int
secret_header_check(const char *opt, char name[SECRET_HEADER_MAX],
    char tmpl[SECRET_TEMPLATE_MAX], struct error *err)
{
	static const char tchar[] = "!#$&'*+-.^_`|~0123456789"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	const char	*colon, *v, *brace;
	size_t		 len;

	if ((colon = strchr(opt, ':')) == NULL)
		return error_kind(err, ERR_INVALID, "--header: write it as "
		    "'Name: template with {}', e.g. 'X-Api-Key: {}'");
	len = (size_t)(colon - opt);
	if (len == 0 || len >= SECRET_HEADER_MAX || strspn(opt, tchar) != len)
		return error_kind(err, ERR_INVALID, "--header: the header's name "
		    "is 1 to %d letters, digits or - _ . and the like, before the "
		    "colon", SECRET_HEADER_MAX - 1);
	if (strncasecmp(opt, "Host", len) == 0 && len == 4)
		return error_kind(err, ERR_INVALID, "--header: Host cannot carry "
		    "a secret");
	for (v = colon + 1; *v == ' '; v++)
		;
	if (!printable(v))
		return error_kind(err, ERR_INVALID, "--header: the template has a "
		    "control character or a byte that is not ASCII");
	if (strlen(v) >= SECRET_TEMPLATE_MAX)
		return error_kind(err, ERR_INVALID, "--header: the template is "
		    "longer than %d bytes", SECRET_TEMPLATE_MAX - 1);
	if ((brace = strstr(v, "{}")) == NULL)
		return error_kind(err, ERR_INVALID, "--header: the template has "
		    "no {} (where the value goes), e.g. 'X-Api-Key: {}'");
	if (strstr(brace + 2, "{}") != NULL)
		return error_kind(err, ERR_INVALID, "--header: the template has "
		    "{} more than once");
	memcpy(name, opt, len);
	name[len] = '\0';
	memcpy(tmpl, v, strlen(v) + 1);
	return 0;
}

int
secret_user_check(const char *user, struct error *err)
{
	size_t	 n = strlen(user);

	if (n == 0 || n >= SECRET_USER_MAX || !printable(user) ||
	    strchr(user, ':') != NULL)
		return error_kind(err, ERR_INVALID, "--basic: the user is 1 to %d "
		    "printable ASCII characters, without ':'",
		    SECRET_USER_MAX - 1);
	return 0;
}

/* Masking. */

struct pattern {
	char	*s;
	size_t	 n;
	size_t	 value;		/* index into names */
};

struct mask {
	char		**names;	/* "[secret NAME]" */
	size_t		  nnames;
	struct pattern	 *pats;
	size_t		  npats;
	size_t		  longest;
};

struct mask *
mask_new(void)
{
	return calloc(1, sizeof(struct mask));
}

void
mask_free(struct mask *m)
{
	size_t	 i;

	if (m == NULL)
		return;
	for (i = 0; i < m->npats; i++) {
		crypto_wipe(m->pats[i].s, m->pats[i].n);
		free(m->pats[i].s);
	}
	for (i = 0; i < m->nnames; i++)
		free(m->names[i]);
	free(m->pats);
	free(m->names);
	free(m);
}

size_t
mask_count(const struct mask *m)
{
	return m == NULL ? 0 : m->nnames;
}

/* Add s (n bytes, taken) as a pattern of value i, unless a repeat. */
static int
pattern_add(struct mask *m, char *s, size_t n, size_t i)
{
	size_t	 k;

	if (n < 4) {
		free(s);
		return 0;
	}
	for (k = 0; k < m->npats; k++)
		if (m->pats[k].n == n && memcmp(m->pats[k].s, s, n) == 0) {
			crypto_wipe(s, n);
			free(s);
			return 0;
		}
	m->pats[m->npats].s = s;
	m->pats[m->npats].n = n;
	m->pats[m->npats].value = i;
	m->npats++;
	if (n > m->longest)
		m->longest = n;
	return 0;
}

int
mask_add(struct mask *m, const char *name, const void *v, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = v;
	struct pattern	*pats;
	char		**names, *s, *b;
	unsigned char	*buf;
	size_t		 i, k, len, start, end, idx;

	if (m == NULL || n < SECRET_VALUE_MIN || n > SECRET_VALUE_MAX ||
	    m->nnames >= MASK_VALUES)
		return -1;
	if ((names = reallocarray(m->names, m->nnames + 1,
	    sizeof(*names))) == NULL)
		return -1;
	m->names = names;
	if ((pats = reallocarray(m->pats, m->npats + MASK_PATTERNS,
	    sizeof(*pats))) == NULL)
		return -1;
	m->pats = pats;
	len = strlen("[secret ]") + strlen(name) + 1;
	if ((s = malloc(len)) == NULL)
		return -1;
	snprintf(s, len, "[secret %s]", name);
	idx = m->nnames;
	m->names[m->nnames++] = s;

	/* The value itself. */
	if ((s = malloc(n)) == NULL)
		return -1;
	memcpy(s, v, n);
	pattern_add(m, s, n, idx);

	/* Percent-encoded: every byte but the unreserved ones. */
	if ((s = malloc(3 * n)) == NULL)
		return -1;
	for (i = 0, len = 0; i < n; i++) {
		if (isalnum(p[i]) || strchr("-._~", p[i]) != NULL)
			s[len++] = (char)p[i];
		else {
			s[len++] = '%';
			s[len++] = hex[p[i] >> 4];
			s[len++] = hex[p[i] & 15];
		}
	}
	pattern_add(m, s, len, idx);

	/*
	 * Base64 at the three alignments: encode k zero bytes then the value,
	 * and keep the characters made of the value's bits alone.
	 */
	if ((buf = malloc(n + 2)) == NULL)
		return -1;
	if ((b = malloc(4 * ((n + 4) / 3) + 1)) == NULL) {
		free(buf);
		return -1;
	}
	for (k = 0; k < 3; k++) {
		memset(buf, 0, k);
		memcpy(buf + k, v, n);
		crypto_b64_encode(buf, n + k, b);
		start = (k * 8 + 5) / 6;
		end = ((k + n) * 8) / 6;
		if ((s = malloc(end - start)) == NULL)
			goto fail;
		memcpy(s, b + start, end - start);
		pattern_add(m, s, end - start, idx);
		/* URL-safe, when it differs. */
		if (memchr(b + start, '+', end - start) != NULL ||
		    memchr(b + start, '/', end - start) != NULL) {
			if ((s = malloc(end - start)) == NULL)
				goto fail;
			for (i = 0; i < end - start; i++) {
				char c = b[start + i];

				s[i] = c == '+' ? '-' : c == '/' ? '_' : c;
			}
			pattern_add(m, s, end - start, idx);
		}
	}
	crypto_wipe(buf, n + 2);
	crypto_wipe(b, 4 * ((n + 4) / 3) + 1);
	free(buf);
	free(b);
	return 0;
fail:
	free(buf);
	free(b);
	return -1;
}

struct span {
	size_t	 s, e;
	size_t	 value;
};

static int
span_cmp(const void *a, const void *b)
{
	const struct span *x = a, *y = b;

	if (x->s != y->s)
		return x->s < y->s ? -1 : 1;
	return x->e > y->e ? -1 : x->e < y->e;
}

/*
 * The matches in in (n bytes), sorted and merged: a new array in *out,
 * its count returned, or -1.
 */
static long
find_spans(const struct mask *m, const char *in, size_t n, struct span **out)
{
	struct span	*sp = NULL, *t;
	const char	*p, *hit;
	size_t		 i, cnt = 0, cap = 0, o;

	*out = NULL;
	for (i = 0; i < m->npats; i++) {
		p = in;
		while ((size_t)(p - in) < n &&
		    (hit = memmem(p, n - (size_t)(p - in), m->pats[i].s,
		    m->pats[i].n)) != NULL) {
			if (cnt == cap) {
				cap = cap == 0 ? 16 : cap * 2;
				if ((t = reallocarray(sp, cap, sizeof(*sp))) ==
				    NULL) {
					free(sp);
					return -1;
				}
				sp = t;
			}
			sp[cnt].s = (size_t)(hit - in);
			sp[cnt].e = sp[cnt].s + m->pats[i].n;
			sp[cnt].value = m->pats[i].value;
			cnt++;
			p = hit + m->pats[i].n;
		}
	}
	if (cnt == 0)
		return 0;
	qsort(sp, cnt, sizeof(*sp), span_cmp);
	for (i = 1, o = 0; i < cnt; i++) {
		if (sp[i].s < sp[o].e) {
			if (sp[i].e > sp[o].e)
				sp[o].e = sp[i].e;
		} else
			sp[++o] = sp[i];
	}
	*out = sp;
	return (long)(o + 1);
}

/* Write in (n bytes) with the spans replaced into a new buffer. */
static char *
replace(const struct mask *m, const char *in, size_t n,
    const struct span *sp, size_t cnt, size_t *outlen)
{
	char	*out;
	size_t	 i, len = n + 1, o = 0, at = 0, k;

	for (i = 0; i < cnt; i++)
		len += strlen(m->names[sp[i].value]);
	if ((out = malloc(len)) == NULL)
		return NULL;
	for (i = 0; i < cnt; i++) {
		memcpy(out + o, in + at, sp[i].s - at);
		o += sp[i].s - at;
		k = strlen(m->names[sp[i].value]);
		memcpy(out + o, m->names[sp[i].value], k);
		o += k;
		at = sp[i].e;
	}
	memcpy(out + o, in + at, n - at);
	o += n - at;
	out[o] = '\0';
	*outlen = o;
	return out;
}

char *
mask_apply(const struct mask *m, const char *in, size_t n, size_t *outlen)
{
	struct span	*sp = NULL;
	char		*out;
	long		 cnt = 0;

	if (m != NULL && m->npats > 0 &&
	    (cnt = find_spans(m, in, n, &sp)) == -1)
		return NULL;
	out = replace(m, in, n, sp, (size_t)cnt, outlen);
	free(sp);
	return out;
}

/*
 * The longest piece of s (n bytes) at its end (at_end) that begins a
 * pattern, or at its start that ends one: its length (0: none), the
 * value's index in *value.
 */
static size_t
piece(const struct mask *m, const char *s, size_t n, bool at_end,
    size_t *value)
{
	size_t	 i, k, best = 0, lim;

	for (i = 0; i < m->npats; i++) {
		lim = m->pats[i].n - 1 < n ? m->pats[i].n - 1 : n;
		for (k = lim; k >= MASK_PIECE_MIN && k > best; k--) {
			if (at_end ? memcmp(s + n - k, m->pats[i].s, k) == 0 :
			    memcmp(s, m->pats[i].s + m->pats[i].n - k, k) == 0) {
				best = k;
				*value = m->pats[i].value;
				break;
			}
		}
	}
	return best;
}

char *
mask_apply_cut(const struct mask *m, const char *in, size_t n, size_t *outlen)
{
	const char	*p = in, *mk = NULL, *d;
	char		*head = NULL, *tail = NULL, *out = NULL;
	size_t		 hn, tn, hl, tl, ms, me, ph, pt, vh = 0, vt = 0, len;

	if (m == NULL || m->npats == 0)
		return mask_apply(m, in, n, outlen);
	/* The marker: "[... DIGITS bytes cut ...]\n". */
	while ((p = memmem(p, n - (size_t)(p - in), "[... ", 5)) != NULL) {
		d = p + 5;
		while ((size_t)(d - in) < n && *d >= '0' && *d <= '9')
			d++;
		if (d > p + 5 && (size_t)(in + n - d) >= 15 &&
		    memcmp(d, " bytes cut ...]", 15) == 0) {
			mk = p;
			break;
		}
		p += 5;
	}
	if (mk == NULL)
		return mask_apply(m, in, n, outlen);
	ms = (size_t)(mk - in);
	me = (size_t)(d + 15 - in);
	if (me < n && in[me] == '\n')
		me++;
	hl = ms > 0 && in[ms - 1] == '\n' ? ms - 1 : ms;
	tl = n - me;
	if ((head = mask_apply(m, in, hl, &hn)) == NULL ||
	    (tail = mask_apply(m, in + me, tl, &tn)) == NULL)
		goto out;
	ph = piece(m, head, hn, true, &vh);
	pt = piece(m, tail, tn, false, &vt);
	len = hn + (ms - hl) + (me - ms) + tn + 1 +
	    (ph > 0 ? strlen(m->names[vh]) : 0) +
	    (pt > 0 ? strlen(m->names[vt]) : 0);
	if ((out = malloc(len)) == NULL)
		goto out;
	len = 0;
	memcpy(out, head, hn - ph);
	len = hn - ph;
	if (ph > 0) {
		memcpy(out + len, m->names[vh], strlen(m->names[vh]));
		len += strlen(m->names[vh]);
	}
	memcpy(out + len, in + hl, me - hl);
	len += me - hl;
	if (pt > 0) {
		memcpy(out + len, m->names[vt], strlen(m->names[vt]));
		len += strlen(m->names[vt]);
	}
	memcpy(out + len, tail + pt, tn - pt);
	len += tn - pt;
	out[len] = '\0';
	*outlen = len;
out:
	free(head);
	free(tail);
	return out;
}

int
mask_string(const struct mask *m, char **s)
{
	char	*out;
	size_t	 n;

	if (m == NULL || m->npats == 0 || *s == NULL)
		return 0;
	if ((out = mask_apply(m, *s, strlen(*s), &n)) == NULL)
		return -1;
	free(*s);
	*s = out;
	return 0;
}

struct mask_stream {
	const struct mask	*m;
	char			*held;
	size_t			 n;
};

struct mask_stream *
mask_stream_new(const struct mask *m)
{
	struct mask_stream *ms;

	if ((ms = calloc(1, sizeof(*ms))) != NULL)
		ms->m = m;
	return ms;
}

void
mask_stream_free(struct mask_stream *ms)
{
	if (ms == NULL)
		return;
	if (ms->held != NULL)
		crypto_wipe(ms->held, ms->n);
	free(ms->held);
	free(ms);
}

int
mask_stream_feed(struct mask_stream *ms, const char *in, size_t n, char **out,
    size_t *outlen)
{
	struct span	*sp = NULL;
	char		*buf;
	size_t		 len, safe, i, keep;
	long		 cnt = 0;

	*out = NULL;
	*outlen = 0;
	if (ms->m == NULL || ms->m->npats == 0) {
		if ((*out = malloc(n + 1)) == NULL)
			return -1;
		memcpy(*out, in, n);
		(*out)[n] = '\0';
		*outlen = n;
		return 0;
	}
	if ((buf = malloc(ms->n + n + 1)) == NULL)
		return -1;
	if (ms->n > 0)
		memcpy(buf, ms->held, ms->n);
	memcpy(buf + ms->n, in, n);
	len = ms->n + n;
	free(ms->held);
	ms->held = NULL;
	ms->n = 0;
	if ((cnt = find_spans(ms->m, buf, len, &sp)) == -1) {
		free(buf);
		return -1;
	}
	/*
	 * Every match that starts before safe is whole in buf; let through
	 * up to safe, or to the end of a match that crosses it.
	 */
	safe = len >= ms->m->longest - 1 ? len - (ms->m->longest - 1) : 0;
	for (i = 0; i < (size_t)cnt; i++)
		if (sp[i].s < safe && sp[i].e > safe)
			safe = sp[i].e;
	for (i = 0; i < (size_t)cnt && sp[i].s < safe; i++)
		;
	keep = len - safe;
	if (keep > 0) {
		if ((ms->held = malloc(keep)) == NULL) {
			free(sp);
			free(buf);
			return -1;
		}
		memcpy(ms->held, buf + safe, keep);
		ms->n = keep;
	}
	*out = replace(ms->m, buf, safe, sp, i, outlen);
	free(sp);
	crypto_wipe(buf, len);
	free(buf);
	return *out == NULL ? -1 : 0;
}

int
mask_stream_end(struct mask_stream *ms, char **out, size_t *outlen)
{
	*out = mask_apply(ms->m, ms->held != NULL ? ms->held : "", ms->n,
	    outlen);
	if (ms->held != NULL)
		crypto_wipe(ms->held, ms->n);
	free(ms->held);
	ms->held = NULL;
	ms->n = 0;
	return *out == NULL ? -1 : 0;
}
