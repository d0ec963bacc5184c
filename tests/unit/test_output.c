/*
 * test_output.c: bounded capture and UTF-8 repair (lib/base/output.c).
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/output.h"
#include "check.h"

/* Repair buf and compare with want. */
static bool
repairs_to(const char *buf, size_t len, const char *want)
{
	size_t	 n;
	char	*s = utf8_repair(buf, len, &n);
	bool	 ok;

	ok = s != NULL && n == strlen(want) && memcmp(s, want, n) == 0 &&
	    s[n] == '\0';
	free(s);
	return ok;
}

/* Capture of max bytes fed with data in chunks of step; text compared. */
static bool
captures_to(size_t max, const char *data, size_t len, size_t step,
    const char *want, unsigned long long want_cut)
{
	struct capture		*c;
	char			*s;
	size_t			 n, i, k;
	unsigned long long	 cut;
	bool			 ok;

	if ((c = capture_new(max)) == NULL)
		return false;
	for (i = 0; i < len; i += k) {
		k = len - i < step ? len - i : step;
		capture_add(c, data + i, k);
	}
	s = capture_text(c, &n, &cut);
	ok = s != NULL && n == strlen(want) && strcmp(s, want) == 0 &&
	    cut == want_cut && capture_total(c) == len;
	if (!ok)
		fprintf(stderr, "  got [%s] cut %llu, want [%s] cut %llu\n",
		    s ? s : "(null)", cut, want, want_cut);
	free(s);
	capture_free(c);
	return ok;
}

static bool
valid_utf8(const char *s, size_t n)
{
	size_t	 m;
	char	*r = utf8_repair(s, n, &m);
	bool	 ok = r != NULL && m == n && memcmp(r, s, n) == 0;

	free(r);
	return ok;
}

int
main(void)
{
	struct capture		*c;
	char			*s, buf[4096];
	size_t			 n, i, step;
	unsigned long long	 cut;
	bool			 ok;

	/* utf8_repair */
	CHECK(repairs_to("", 0, ""), "repair: empty");
	CHECK(repairs_to("hello\n", 6, "hello\n"), "repair: ascii unchanged");
	CHECK(repairs_to("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9,
	    "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"), "repair: 2, 3, 4 byte chars kept");
	CHECK(repairs_to("\xff\xfe", 2, "\xef\xbf\xbd\xef\xbf\xbd"),
	    "repair: each invalid byte becomes U+FFFD");
	CHECK(repairs_to("a\0b", 3, "a\xef\xbf\xbd" "b"), "repair: NUL becomes U+FFFD");
	CHECK(repairs_to("\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd"),
	    "repair: overlong 2-byte rejected");
	CHECK(repairs_to("\xe0\x80\xaf", 3,
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"), "repair: overlong 3-byte rejected");
	CHECK(repairs_to("\xed\xa0\x80", 3,
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"), "repair: surrogate rejected");
	CHECK(repairs_to("\xf4\x90\x80\x80", 4,
	    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd"),
	    "repair: above U+10FFFF rejected");
	CHECK(repairs_to("x\xe2\x82", 3, "x\xef\xbf\xbd\xef\xbf\xbd"),
	    "repair: truncated sequence at end");
	CHECK(repairs_to("\xe2\x82" "a", 3, "\xef\xbf\xbd\xef\xbf\xbd" "a"),
	    "repair: truncated sequence before ascii");
	CHECK(repairs_to("\x80" "a", 2, "\xef\xbf\xbd" "a"),
	    "repair: lone continuation byte");

	/* capture: small outputs are kept whole */
	CHECK(captures_to(16, "", 0, 1, "", 0), "capture: empty");
	CHECK(captures_to(16, "hello world\n", 12, 1, "hello world\n", 0),
	    "capture: short kept whole");
	CHECK(captures_to(10, "0123456789", 10, 3, "0123456789", 0),
	    "capture: exactly max kept whole");
	CHECK(captures_to(10, "0123456789", 10, 10, "0123456789", 0),
	    "capture: exactly max in one add");

	/* head and tail with a marker */
	CHECK(captures_to(10, "0123456789ABCDEF", 16, 1,
	    "01234\n[... 6 bytes cut ...]\nBCDEF", 6), "capture: head+tail, 1-byte adds");
	CHECK(captures_to(10, "0123456789ABCDEF", 16, 16,
	    "01234\n[... 6 bytes cut ...]\nBCDEF", 6), "capture: head+tail, one add");
	CHECK(captures_to(10, "0123456789ABCDEF", 16, 7,
	    "01234\n[... 6 bytes cut ...]\nBCDEF", 6), "capture: head+tail, 7-byte adds");
	CHECK(captures_to(10, "0123\nabcdefghijklmnopqrst", 25, 3,
	    "0123\n[... 15 bytes cut ...]\npqrst", 15),
	    "capture: no extra newline after a head ending in one");
	CHECK(captures_to(11, "0123456789ABCDEF", 16, 5,
	    "01234\n[... 5 bytes cut ...]\nABCDEF", 5), "capture: odd max, tail gets the extra byte");
	CHECK(captures_to(0, "abc", 3, 1, "[... 3 bytes cut ...]\n", 3),
	    "capture: max 0 keeps nothing");

	/* cuts on character boundaries: "é" is c3 a9, "€" is e2 82 ac */
	CHECK(captures_to(8, "ab\xe2\x82\xac" "0123456789" "\xe2\x82\xac" "yz", 20, 1,
	    "ab\n[... 16 bytes cut ...]\nyz", 16),
	    "capture: split characters at both cuts are dropped whole");
	CHECK(captures_to(10, "abc\xc3\xa9" "0123456789zz\xc3\xa9" "yz", 21, 4,
	    "abc\xc3\xa9\n[... 11 bytes cut ...]\nz\xc3\xa9" "yz", 11),
	    "capture: whole characters at the cut are kept");
	CHECK(captures_to(6, "\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80", 12, 5,
	    "[... 12 bytes cut ...]\n", 12),
	    "capture: 4-byte characters wider than each half");
	/* invalid bytes inside the kept parts are repaired, not cut */
	CHECK(captures_to(6, "\xff" "bc0123456789xy\xfe", 16, 2,
	    "\xef\xbf\xbd" "bc\n[... 10 bytes cut ...]\nxy\xef\xbf\xbd", 10),
	    "capture: invalid bytes repaired in head and tail");
	CHECK(captures_to(32, "a\0b", 3, 1, "a\xef\xbf\xbd" "b", 0),
	    "capture: NUL repaired");

	/* Every split of a mixed text: the result is valid UTF-8 and counts add up. */
	ok = true;
	{
		const char *text = "h\xc3\xa9llo w\xc3\xb6rld \xe2\x82\xac\xf0\x9f\x98\x80 "
		    "\xff end \xe2\x82\xac\xe2\x82\xac!";
		size_t tlen = strlen(text), max;

		for (max = 0; max <= tlen + 2 && ok; max++)
			for (step = 1; step <= tlen && ok; step++) {
				if ((c = capture_new(max)) == NULL) {
					ok = false;
					break;
				}
				for (i = 0; i < tlen; i += step)
					capture_add(c, text + i,
					    tlen - i < step ? tlen - i : step);
				s = capture_text(c, &n, &cut);
				if (s == NULL || !valid_utf8(s, n) ||
				    strlen(s) != n || cut > tlen ||
				    (tlen <= max && cut != 0) ||
				    (tlen > max && cut < tlen - max) ||
				    (tlen > max && strstr(s, "bytes cut ...]") == NULL))
					ok = false;
				free(s);
				capture_free(c);
			}
	}
	CHECK(ok, "capture: every max and chunk size gives valid UTF-8 and sane counts");

	/* A gigabyte through a 1 KiB capture: bounded and exact counts. */
	if ((c = capture_new(1024)) == NULL)
		CHECK(false, "capture: huge input");
	else {
		memset(buf, 'x', sizeof(buf));
		for (i = 0; i < (1u << 30) / sizeof(buf); i++)
			capture_add(c, buf, sizeof(buf));
		capture_add(c, "END\n", 4);
		s = capture_text(c, &n, &cut);
		CHECK(capture_total(c) == (1ULL << 30) + 4, "capture: huge input total");
		CHECK(s != NULL && cut == (1ULL << 30) + 4 - 1024,
		    "capture: huge input cut count");
		CHECK(s != NULL && n < 1024 + 64 && n >= 4 &&
		    memcmp(s + n - 4, "END\n", 4) == 0,
		    "capture: huge input keeps the tail and stays bounded");
		free(s);
		capture_free(c);
	}

	capture_free(NULL);
	CHECK(true, "capture: free(NULL) is a no-op");

	return check_status();
}
