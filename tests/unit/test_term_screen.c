/*
 * test_term_screen.c: a terminal's screen frame (frames.h, 'W') as the
 * server decodes it (supf_screen_decode), and the standard base64 encoder
 * behind execute's stdin_base64 prologue (crypto_b64_encode).
 * Prints "ok - name" or "not ok - name" per check; exits 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/crypto.h"
#include "supervisor/frames.h"

/* A 'W' payload into p; its length. */
static size_t
payload(unsigned char *p, int state, int code, int rows, int cols, int cr,
    int cc, uint32_t sb, const char *text)
{
	size_t n = strlen(text);

	memset(p, 0, SUPF_SCREEN_HEAD);
	p[0] = 2;
	p[1] = (unsigned char)state;
	p[2] = (unsigned char)code;
	p[4] = (unsigned char)(rows >> 8);
	p[5] = (unsigned char)rows;
	p[6] = (unsigned char)(cols >> 8);
	p[7] = (unsigned char)cols;
	p[8] = (unsigned char)(cr >> 8);
	p[9] = (unsigned char)cr;
	p[10] = (unsigned char)(cc >> 8);
	p[11] = (unsigned char)cc;
	supf_put32(p + 12, sb);
	supf_put32(p + 16, 0xfeed0001u);
	memcpy(p + SUPF_SCREEN_HEAD, text, n);
	return SUPF_SCREEN_HEAD + n;
}

int
main(void)
{
	unsigned char		 p[512];
	struct supf_screen	 s;
	char			 b64[64], raw[16];
	size_t			 n;

	n = payload(p, 0, 0, 3, 20, 2, 4, 0, ">>> 6*7\n42\n>>> \n");
	CHECK(supf_screen_decode(p, n, &s) == 0, "a screen decodes");
	CHECK(s.rows == 3 && s.cols == 20 && s.cursor_row == 2 &&
	    s.cursor_col == 4 && s.state == 0, "with its size and cursor");
	CHECK(s.text_len == n - SUPF_SCREEN_HEAD &&
	    memcmp(s.text, ">>> 6*7", 7) == 0, "and its text");
	CHECK(s.gen == 0xfeed0001u, "and its generation");
	/* A version 1 head (a terminal started before generations): 16 bytes. */
	n = payload(p, 0, 0, 2, 20, 1, 0, 0, "");
	p[0] = 1;
	memcpy(p + SUPF_SCREEN_HEAD_V1, "a\nb\n", 4);
	n = SUPF_SCREEN_HEAD_V1 + 4;
	CHECK(supf_screen_decode(p, n, &s) == 0 && s.gen == 0 &&
	    s.text_len == 4 && s.text[0] == 'a', "a version 1 head decodes, "
	    "without a generation");
	n = payload(p, 1, 3, 2, 10, 1, 0, 2, "old\nlines\n$\n\n");
	CHECK(supf_screen_decode(p, n, &s) == 0 && s.scrollback == 2 &&
	    s.state == 1 && s.code == 3, "scrollback and an exit decode");
	n = payload(p, 0, 0, 3, 20, 0, 0, 0, "a\nb\n");
	CHECK(supf_screen_decode(p, n, &s) == -1, "fewer lines than rows are refused");
	n = payload(p, 0, 0, 2, 20, 0, 0, 0, "a\nb\nc\n");
	CHECK(supf_screen_decode(p, n, &s) == -1, "more lines than rows are refused");
	n = payload(p, 0, 0, 2, 20, 0, 0, 0, "a\x1b[1m\nb\n");
	CHECK(supf_screen_decode(p, n, &s) == -1, "an escape code is refused");
	n = payload(p, 0, 0, 2, 20, 2, 0, 0, "a\nb\n");
	CHECK(supf_screen_decode(p, n, &s) == -1, "a cursor below the screen is refused");
	n = payload(p, 0, 0, 0, 20, 0, 0, 0, "");
	CHECK(supf_screen_decode(p, n, &s) == -1, "zero rows are refused");
	n = payload(p, 0, 0, SUPF_TERM_ROWS_MAX + 1, 20, 0, 0, 0, "");
	CHECK(supf_screen_decode(p, n, &s) == -1, "too many rows are refused");
	n = payload(p, 0, 0, 1, 20, 0, 0, SUPF_TERM_SB_MAX + 1, "x\n");
	CHECK(supf_screen_decode(p, n, &s) == -1, "too much scrollback is refused");
	n = payload(p, 0, 5, 1, 20, 0, 0, 0, "x\n");
	CHECK(supf_screen_decode(p, n, &s) == -1, "a code while running is refused");
	n = payload(p, 0, 0, 1, 20, 0, 0, 0, "x\n");
	p[0] = 3;
	CHECK(supf_screen_decode(p, n, &s) == -1, "another version is refused");
	CHECK(supf_screen_decode(p, SUPF_SCREEN_HEAD - 1, &s) == -1, "a short head is refused");

	{
		static const unsigned char good[] = {
		    0, 2,				/* rows */
		    0, 1,  0, 0, 0, 3,  0, 0xe0, 0, 0,	/* row 0: RED */
		    1, 0, 0, 0,  0,
		    0, 0,				/* row 1: none */
		};
		unsigned char	 bad[sizeof(good)];
		struct supf_run	*runs;
		size_t		 nruns;

		CHECK(supf_attrs_decode(good, sizeof(good), 2, 20, &runs,
		    &nruns) == 0 && nruns == 1 && runs[0].col == 0 &&
		    runs[0].len == 3 && runs[0].fg == 0xe00000 &&
		    runs[0].bg == SUPF_COLOR_DEFAULT, "colours decode");
		free(runs);
		CHECK(supf_attrs_decode(good, sizeof(good), 2, 2, &runs,
		    &nruns) == -1, "a run past the row's columns is refused");
		CHECK(supf_attrs_decode(good, sizeof(good), 3, 20, &runs,
		    &nruns) == -1, "another row count is refused");
		CHECK(supf_attrs_decode(good, sizeof(good) - 1, 2, 20, &runs,
		    &nruns) == -1, "a cut payload is refused");
		memcpy(bad, good, sizeof(bad));
		bad[8] = 2;	/* a foreground over 0xffffff, not the default */
		CHECK(supf_attrs_decode(bad, sizeof(bad), 2, 20, &runs,
		    &nruns) == -1, "a colour out of range is refused");
		memcpy(bad, good, sizeof(bad));
		bad[7] = 0;	/* length 0 */
		CHECK(supf_attrs_decode(bad, sizeof(bad), 2, 20, &runs,
		    &nruns) == -1, "an empty run is refused");
	}

	n = crypto_b64_encode("\x00\xff\xfe", 3, b64);
	CHECK(n == 4 && strcmp(b64, "AP/+") == 0, "base64: + and / of the standard alphabet");
	n = crypto_b64_encode("ab", 2, b64);
	CHECK(n == crypto_b64_len(2) && strcmp(b64, "YWI=") == 0, "base64: padded");
	n = crypto_b64_encode("a", 1, b64);
	CHECK(strcmp(b64, "YQ==") == 0 && crypto_b64_decode(b64, n, raw,
	    sizeof(raw)) == 1 && raw[0] == 'a', "base64: round trip");
	n = crypto_b64_encode("", 0, b64);
	CHECK(n == 0 && b64[0] == '\0', "base64: empty");
	return check_status();
}
