/* form.c: see form.h. */
#include <stdlib.h>
#include <string.h>

#include "base/form.h"

struct field {
	char	*name;
	char	*value;
};

struct form {
	struct field	 f[FORM_MAX_FIELDS];
	size_t		 n;
};

int
form_hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
form_decode_char(const char *s, size_t len, size_t *i, bool plus_is_space)
{
	unsigned char	 c = (unsigned char)s[*i];
	int		 hi, lo;

	if (c == '%') {
		if (len - *i < 3 ||
		    (hi = form_hexval((unsigned char)s[*i + 1])) < 0 ||
		    (lo = form_hexval((unsigned char)s[*i + 2])) < 0)
			return -1;
		*i += 3;
		return hi << 4 | lo;
	}
	(*i)++;
	return c == '+' && plus_is_space ? ' ' : c;
}

long
form_decode(const char *s, size_t len, bool plus_is_space, char *out,
    size_t outsz)
{
	size_t	 i = 0, o = 0;
	int	 c;

	while (i < len) {
		if ((c = form_decode_char(s, len, &i, plus_is_space)) <= 0 ||
		    o + 1 >= outsz)
			return -1;
		out[o++] = (char)c;
	}
	if (o >= outsz)
		return -1;
	out[o] = '\0';
	return (long)o;
}

/* A malloc'd decoded copy of s[0..len) ('+' is a space); NULL if malformed. */
static char *
decode(const char *s, size_t len)
{
	char *out;

	if ((out = malloc(len + 1)) == NULL)
		return NULL;
	if (form_decode(s, len, true, out, len + 1) == -1) {
		free(out);
		return NULL;
	}
	return out;
}

struct form *
form_parse(const char *s, size_t len, struct error *err)
{
	struct form	*f;
	size_t		 i = 0;

	if ((f = calloc(1, sizeof(*f))) == NULL) {
		error_set(err, "out of memory");
		return NULL;
	}
	while (i < len) {
		size_t	 end = i, eq;
		char	*name, *value;

		while (end < len && s[end] != '&')
			end++;
		if (end == i) {
			i = end + 1;
			continue;
		}
		for (eq = i; eq < end && s[eq] != '='; eq++)
			;
		name = decode(s + i, eq - i);
		value = eq < end ? decode(s + eq + 1, end - eq - 1) : strdup("");
		if (name == NULL || value == NULL) {
			free(name);
			free(value);
			error_set(err, "malformed form encoding");
			goto fail;
		}
		if (form_get(f, name) != NULL) {
			error_set(err, "parameter '%.64s' given more than once", name);
			free(name);
			free(value);
			goto fail;
		}
		if (f->n == FORM_MAX_FIELDS) {
			free(name);
			free(value);
			error_set(err, "too many parameters");
			goto fail;
		}
		f->f[f->n].name = name;
		f->f[f->n].value = value;
		f->n++;
		i = end + 1;
	}
	return f;
fail:
	form_free(f);
	return NULL;
}

void
form_free(struct form *f)
{
	size_t i;

	if (f == NULL)
		return;
	for (i = 0; i < f->n; i++) {
		free(f->f[i].name);
		free(f->f[i].value);
	}
	free(f);
}

const char *
form_get(const struct form *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (strcmp(f->f[i].name, name) == 0)
			return f->f[i].value;
	return NULL;
}

long
form_encode_keep(const char *s, const char *keep, char *out, size_t outsz)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t o = 0;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		    (c >= '0' && c <= '9') || strchr(keep, c) != NULL) {
			if (o + 1 >= outsz)
				return -1;
			out[o++] = (char)c;
		} else {
			if (o + 3 >= outsz)
				return -1;
			out[o++] = '%';
			out[o++] = hex[c >> 4];
			out[o++] = hex[c & 15];
		}
	}
	if (o >= outsz)
		return -1;
	out[o] = '\0';
	return (long)o;
}

long
form_encode(const char *s, char *out, size_t outsz)
{
	/* RFC 3986 §2.3 unreserved. */
	return form_encode_keep(s, "-._~", out, outsz);
}

int
form_cookie(const char *h, const char *name, char *out, size_t outsz)
{
	const char	*p;
	size_t		 n = strlen(name), vlen;

	if (h == NULL || n == 0 || strlen(h) > 8192)
		return -1;
	for (p = h; *p != '\0'; ) {
		while (*p == ' ' || *p == ';')
			p++;
		if (strncmp(p, name, n) == 0 && p[n] == '=') {
			p += n + 1;
			vlen = strcspn(p, ";");
			while (vlen > 0 && p[vlen - 1] == ' ')
				vlen--;
			if (vlen >= outsz)
				return -1;
			memcpy(out, p, vlen);
			out[vlen] = '\0';
			return 0;
		}
		p += strcspn(p, ";");
	}
	return -1;
}
