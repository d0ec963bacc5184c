/* clientaddr.c: see clientaddr.h. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/clientaddr.h"

/* A parsed address: family AF_INET or AF_INET6, 4 or 16 bytes. */
struct ip {
	int		family;
	unsigned char	b[16];
};

/* Parse a bare literal of at most CLIENTADDR_MAX - 1 bytes. -1 if not one. */
static int
ip_parse(const char *s, size_t len, struct ip *ip)
{
	char buf[CLIENTADDR_MAX];

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(ip, 0, sizeof(*ip));
	if (inet_pton(AF_INET, buf, ip->b) == 1) {
		ip->family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, buf, ip->b) == 1) {
		/* ::ffff:a.b.c.d is the IPv4 client of a dual-stack socket. */
		if (memcmp(ip->b, "\0\0\0\0\0\0\0\0\0\0\xff\xff", 12) == 0) {
			memmove(ip->b, ip->b + 12, 4);
			memset(ip->b + 4, 0, 12);
			ip->family = AF_INET;
		} else
			ip->family = AF_INET6;
		return 0;
	}
	return -1;
}

/*
 * One entry of a forwarding header: "addr", "a.b.c.d:port", "[v6]",
 * "[v6]:port". Surrounding blanks are the caller's to strip.
 */
static int
entry_parse(const char *s, size_t len, struct ip *ip)
{
	const char *rb, *colon;

	if (len > 0 && s[0] == '[') {
		if ((rb = memchr(s, ']', len)) == NULL)
			return -1;
		if ((size_t)(rb - s) + 1 != len && rb[1] != ':')
			return -1;
		if (ip_parse(s + 1, (size_t)(rb - s - 1), ip) == -1 ||
		    ip->family != AF_INET6)
			return -1;
		return 0;
	}
	if (ip_parse(s, len, ip) == 0)
		return 0;
	/* IPv4 with a port: exactly one colon. */
	if ((colon = memchr(s, ':', len)) != NULL &&
	    memchr(colon + 1, ':', len - (size_t)(colon - s) - 1) == NULL &&
	    ip_parse(s, (size_t)(colon - s), ip) == 0 && ip->family == AF_INET)
		return 0;
	return -1;
}

/* Does ip fall in the block "addr[/bits]" s[0..len)? */
static bool
block_match(const char *s, size_t len, const struct ip *ip, bool *valid)
{
	struct ip	 net;
	const char	*slash = memchr(s, '/', len);
	long		 bits, max;
	size_t		 i;
	char		 num[4], *end;

	*valid = false;
	if (ip_parse(s, slash != NULL ? (size_t)(slash - s) : len, &net) == -1)
		return false;
	max = net.family == AF_INET ? 32 : 128;
	bits = max;
	if (slash != NULL) {
		size_t n = len - (size_t)(slash - s) - 1;

		if (n == 0 || n >= sizeof(num))
			return false;
		memcpy(num, slash + 1, n);
		num[n] = '\0';
		if (num[0] < '0' || num[0] > '9')
			return false;
		bits = strtol(num, &end, 10);
		if (*end != '\0' || bits < 0 || bits > max)
			return false;
	}
	*valid = true;
	if (net.family != ip->family)
		return false;
	for (i = 0; bits > 0; i++, bits -= 8) {
		unsigned char mask = bits >= 8 ? 0xff :
		    (unsigned char)(0xff << (8 - bits));

		if ((net.b[i] & mask) != (ip->b[i] & mask))
			return false;
	}
	return true;
}

/* Walk the entries of list; cb returns true to stop. */
static bool
list_any(const char *list, const struct ip *ip, const char **bad, size_t *badlen)
{
	const char	*p = list;
	size_t		 n;
	bool		 valid;

	if (list == NULL)
		return false;
	for (;;) {
		p += strspn(p, " ,\t");
		if (*p == '\0')
			return false;
		n = strcspn(p, " ,\t");
		if (ip != NULL && block_match(p, n, ip, &valid))
			return true;
		if (ip == NULL) {
			struct ip any;

			memset(&any, 0, sizeof(any));
			(void)block_match(p, n, &any, &valid);
			if (!valid) {
				*bad = p;
				*badlen = n;
				return true;
			}
		}
		p += n;
	}
}

bool
clientaddr_in_list(const char *addr, const char *list)
{
	struct ip ip;

	if (addr == NULL || ip_parse(addr, strlen(addr), &ip) == -1)
		return false;
	return list_any(list, &ip, NULL, NULL);
}

bool
clientaddr_list_valid(const char *list, char *why, size_t whysz)
{
	const char	*bad = NULL;
	size_t		 badlen = 0;

	if (!list_any(list, NULL, &bad, &badlen))
		return true;
	snprintf(why, whysz, "not an address or CIDR block: %.*s",
	    badlen > 64 ? 64 : (int)badlen, bad);
	return false;
}

static void
ip_format(const struct ip *ip, char out[CLIENTADDR_MAX])
{
	if (inet_ntop(ip->family, ip->b, out, CLIENTADDR_MAX) == NULL)
		out[0] = '\0';
}

int
clientaddr_resolve(const char *peer, const char *fwd, const char *trusted,
    char out[CLIENTADDR_MAX])
{
	struct ip	 cur, next;
	size_t		 end, start;

	if (peer == NULL || ip_parse(peer, strlen(peer), &cur) == -1) {
		snprintf(out, CLIENTADDR_MAX, "%s", peer != NULL ? peer : "");
		return -1;
	}
	if (fwd != NULL) {
		/* From the right: each hop trusted so far vouches for the next. */
		end = strlen(fwd);
		while (list_any(trusted, &cur, NULL, NULL)) {
			while (end > 0 && (fwd[end - 1] == ' ' ||
			    fwd[end - 1] == '\t' || fwd[end - 1] == ','))
				end--;
			if (end == 0)
				break;
			start = end;
			while (start > 0 && fwd[start - 1] != ',')
				start--;
			while (start < end && (fwd[start] == ' ' || fwd[start] == '\t'))
				start++;
			if (entry_parse(fwd + start, end - start, &next) == -1)
				break;
			cur = next;
			end = start;
		}
	}
	ip_format(&cur, out);
	return 0;
}

void
clientaddr_key(const char *addr, char out[CLIENTADDR_MAX])
{
	struct ip	ip;
	char		buf[CLIENTADDR_MAX];

	if (addr == NULL || ip_parse(addr, strlen(addr), &ip) == -1) {
		snprintf(out, CLIENTADDR_MAX, "%s", addr != NULL ? addr : "");
		return;
	}
	if (ip.family == AF_INET6) {
		memset(ip.b + 8, 0, 8);
		ip_format(&ip, buf);
		snprintf(out, CLIENTADDR_MAX, "%s/64", buf);
		return;
	}
	ip_format(&ip, out);
}
