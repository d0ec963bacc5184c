/* test_envfile.c: the settings file's grammar, read and written (envfile.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/envfile.h"
#include "check.h"

static char path[] = "/tmp/cs-test-envfile-XXXXXX";

static void
write_file(const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	fwrite(text, 1, len, f);
	fclose(f);
}

#define WRITE(s)	write_file((s), sizeof(s) - 1)

/* The file's whole text, malloc'd. */
static char *
slurp(void)
{
	FILE	*f = fopen(path, "r");
	char	*buf = calloc(1, 65536);

	if (f != NULL) {
		if (fread(buf, 1, 65535, f) == 0 && ferror(f))
			buf[0] = '\0';
		fclose(f);
	}
	return buf;
}

int
main(void)
{
	struct envfile	 ef = { NULL, 0 };
	struct error	 e;
	struct stat	 st;
	char		*text, *big;
	int		 fd;

	if ((fd = mkstemp(path)) == -1)
		return 1;
	close(fd);

	WRITE("# comment\n\n  export A = \"quoted value\" \nB='x'\nC=\"\nD = plain  \r\n"
	    "E=1\nE=2\nexport  F=3\nG=\n");
	CHECK(envfile_read(path, &ef, &e) == 0, "a file of every kind of line reads");
	CHECK(envfile_get(&ef, "A") != NULL && strcmp(envfile_get(&ef, "A"),
	    "quoted value") == 0, "export, spaces and double quotes");
	CHECK(strcmp(envfile_get(&ef, "B"), "x") == 0, "single quotes");
	CHECK(strcmp(envfile_get(&ef, "C"), "\"") == 0, "a lone quote is kept");
	CHECK(strcmp(envfile_get(&ef, "D"), "plain") == 0, "CR LF line, spaces trimmed");
	CHECK(strcmp(envfile_get(&ef, "E"), "2") == 0, "the last line wins");
	CHECK(envfile_get(&ef, "F") == NULL && envfile_get(&ef, " F") != NULL,
	    "one space after export: the next is the key's");
	CHECK(strcmp(envfile_get(&ef, "G"), "") == 0, "an empty value");
	CHECK(envfile_get(&ef, "comment") == NULL && envfile_get(&ef, "H") == NULL,
	    "comments and absent names");
	envfile_free(&ef);

	WRITE("A=1\nnot a pair\n");
	CHECK(envfile_read(path, &ef, &e) == -1 && strstr(e.msg, ":2: expected KEY=VALUE")
	    != NULL, "a line that is not KEY=VALUE is named");
	envfile_free(&ef);
	big = malloc(9000);
	memset(big, 'x', 9000);
	memcpy(big, "A=", 2);
	big[8999] = '\n';
	write_file(big, 9000);
	free(big);
	CHECK(envfile_read(path, &ef, &e) == -1 && strstr(e.msg, ":1: line too long")
	    != NULL, "a line over 8 KiB is refused");
	envfile_free(&ef);

	unlink(path);
	CHECK(envfile_read(path, &ef, &e) == 0 && ef.n == 0, "a missing file is empty");

	/* envfile_set: the first line setting the name replaced, the others dropped. */
	WRITE("# keep\n  export KEY = \"old\"\nOTHER=1\r\nKEY=older\n#KEY=comment\nKEYX=2\n\n");
	chmod(path, 0644);
	CHECK(envfile_set(path, "KEY", "new", &e) == 0, "set replaces");
	text = slurp();
	CHECK(strcmp(text, "# keep\nKEY=new\nOTHER=1\r\n#KEY=comment\nKEYX=2\n\n") == 0,
	    "the other lines kept as they were, byte for byte");
	free(text);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "the new file is mode 600");

	WRITE("A=1");
	CHECK(envfile_set(path, "KEY", "v", &e) == 0, "set appends");
	text = slurp();
	CHECK(strcmp(text, "A=1\nKEY=v\n") == 0, "appended after a last line without newline");
	free(text);

	unlink(path);
	CHECK(envfile_set(path, "KEY", "v", &e) == 0, "set creates a missing file");
	text = slurp();
	CHECK(strcmp(text, "KEY=v\n") == 0, "the new file holds the one line");
	free(text);
	CHECK(envfile_read(path, &ef, &e) == 0 && strcmp(envfile_get(&ef, "KEY"), "v") == 0,
	    "what set writes, read reads");
	envfile_free(&ef);

	CHECK(envfile_set("/nonexistent-cs/env", "KEY", "v", &e) == -1 &&
	    strstr(e.msg, "temporary file") != NULL, "set in a missing folder fails, named");

	unlink(path);
	return check_status();
}
