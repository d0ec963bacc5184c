/* url.c: see url.h. */
#include <ctype.h>
#include <string.h>
#include <strings.h>

#include "base/form.h"
#include "base/url.h"

bool
url_char(unsigned char c)
{
	return isalnum(c) || strchr("-._~:/?#[]@!$&'()*+,;=%", c) != NULL;
}

int
url_split(const char *s, struct url *u)
{
	const char	*p, *a, *end;
	size_t		 i, n = strlen(s);

	memset(u, 0, sizeof(*u));
	if (n == 0 || n > URL_MAX)
		return -1;
	for (i = 0; i < n; i++) {
		if (!url_char((unsigned char)s[i]))
			return -1;
		if (s[i] == '%') {
			size_t j = i;

			if (form_decode_char(s, n, &j, false) < 0)
				return -1;
		}
	}
	if (strncmp(s, "https://", 8) == 0) {
		u->https = true;
		a = s + 8;
	} else if (strncmp(s, "http://", 7) == 0)
		a = s + 7;
	else
		return -1;
	end = a + strcspn(a, "/?#");
	if (memchr(a, '@', (size_t)(end - a)) != NULL)
		return -1;	/* user info: RFC 6749 §3.1.2 leaves no room for it */
	if (*a == '[') {
		if ((p = memchr(a, ']', (size_t)(end - a))) == NULL)
			return -1;
		u->host = a + 1;
		u->hostlen = (size_t)(p - a - 1);
		u->bracketed = true;
		for (i = 0; i < u->hostlen; i++)
			if (!isxdigit((unsigned char)u->host[i]) &&
			    u->host[i] != ':' && u->host[i] != '.')
				return -1;
		p++;
	} else {
		u->host = a;
		for (p = a; p < end && *p != ':'; p++)
			if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-')
				return -1;
		u->hostlen = (size_t)(p - a);
	}
	if (u->hostlen == 0)
		return -1;
	if (p < end) {
		long port = 0;

		if (*p != ':')
			return -1;
		u->port = ++p;
		u->portlen = (size_t)(end - p);
		if (u->portlen == 0 || u->portlen > 5)
			return -1;
		for (; p < end; p++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			port = port * 10 + (*p - '0');
		}
		if (port < 1 || port > 65535)
			return -1;
	}
	u->rest = end;
	return 0;
}

int
url_split_origin(const char *s, struct url *u)
{
	if (url_split(s, u) == -1 || *u->rest != '\0')
		return -1;
	return 0;
}

bool
url_host_is_loopback(const struct url *u)
{
	if (u->bracketed)
		return u->hostlen == 3 && strncmp(u->host, "::1", 3) == 0;
	if (u->hostlen == 9 && strncasecmp(u->host, "localhost", 9) == 0)
		return true;
	if (u->hostlen >= 7 && u->hostlen <= 15 && strncmp(u->host, "127.", 4) == 0) {
		size_t i;
		int dots = 0;

		for (i = 0; i < u->hostlen; i++) {
			if (u->host[i] == '.')
				dots++;
			else if (!isdigit((unsigned char)u->host[i]))
				return false;
		}
		return dots == 3;
	}
	return false;
}

bool
url_host_in_list(const struct url *u, const char *list)
{
	const char	*p = list;
	size_t		 n;

	if (list == NULL)
		return false;
	for (;;) {
		p += strspn(p, " \t");
		if (*p == '\0')
			return false;
		n = strcspn(p, " \t");
		if (n == u->hostlen && strncasecmp(p, u->host, n) == 0)
			return true;
		p += n;
	}
}
