/* envfile.c: see envfile.h. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/envfile.h"

#define LINE_MAX_READ	8192		/* a longer line is refused */
#define FILE_MAX_WRITE	(1024 * 1024)	/* envfile_set reads at most this */

/* Bytes [s, s + len) of a line, not NUL-terminated. */
struct span {
	const char	*s;
	size_t		 len;
};

/*
 * Parse the line s[0..len) (envfile.h's grammar) into key and val, both
 * pointing into s. Returns 1 for a pair, 0 for a blank or comment line,
 * -1 for a line that is not KEY=VALUE.
 */
static int
parse_line(const char *s, size_t len, struct span *key, struct span *val)
{
	const char	*end, *eq, *ke, *v, *ve;

	for (end = s; end < s + len && *end != '\r' && *end != '\n' &&
	    *end != '\0'; end++)
		;
	while (s < end && isspace((unsigned char)*s))
		s++;
	if (s == end || *s == '#')
		return 0;
	if (end - s >= 7 && memcmp(s, "export ", 7) == 0)
		s += 7;
	if ((eq = memchr(s, '=', (size_t)(end - s))) == NULL)
		return -1;
	for (ke = eq; ke > s && isspace((unsigned char)ke[-1]); ke--)
		;
	for (v = eq + 1; v < end && isspace((unsigned char)*v); v++)
		;
	for (ve = end; ve > v && isspace((unsigned char)ve[-1]); ve--)
		;
	if (ve - v >= 2 && (*v == '"' || *v == '\'') && ve[-1] == *v) {
		v++;
		ve--;
	}
	key->s = s;
	key->len = (size_t)(ke - s);
	val->s = v;
	val->len = (size_t)(ve - v);
	return 1;
}

/* Append the pair key=val to ef. 0, or -1 when out of memory. */
static int
add_pair(struct envfile *ef, const struct span *key, const struct span *val)
{
	struct envfile_pair *np;

	if ((np = reallocarray(ef->p, ef->n + 1, sizeof(*ef->p))) == NULL)
		return -1;
	ef->p = np;
	ef->p[ef->n].key = strndup(key->s, key->len);
	ef->p[ef->n].val = strndup(val->s, val->len);
	ef->n++;
	if (ef->p[ef->n - 1].key == NULL || ef->p[ef->n - 1].val == NULL)
		return -1;
	return 0;
}

int
envfile_read(const char *path, struct envfile *ef, struct error *err)
{
	struct span	 key, val;
	FILE		*f;
	char		 line[LINE_MAX_READ];
	size_t		 lineno = 0;
	int		 rc = -1, r;

	if ((f = fopen(path, "r")) == NULL) {
		if (errno == ENOENT)
			return 0;
		return error_set(err, "cannot read settings file %s: %s",
		    path, strerror(errno));
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		/* strchr, not the length fgets read: a NUL byte ends a line. */
		if (strchr(line, '\n') == NULL && !feof(f)) {
			error_set(err, "%s:%zu: line too long", path, lineno);
			goto out;
		}
		if ((r = parse_line(line, strlen(line), &key, &val)) == 0)
			continue;
		if (r == -1) {
			error_set(err, "%s:%zu: expected KEY=VALUE", path, lineno);
			goto out;
		}
		if (add_pair(ef, &key, &val) == -1) {
			error_set(err, "out of memory");
			goto out;
		}
	}
	rc = 0;
out:
	explicit_bzero(line, sizeof(line));
	fclose(f);
	return rc;
}

const char *
envfile_get(const struct envfile *ef, const char *name)
{
	size_t i;

	for (i = ef->n; i > 0; i--)
		if (strcmp(ef->p[i - 1].key, name) == 0)
			return ef->p[i - 1].val;
	return NULL;
}

void
envfile_free(struct envfile *ef)
{
	size_t i;

	for (i = 0; i < ef->n; i++) {
		free(ef->p[i].key);
		if (ef->p[i].val != NULL) {
			explicit_bzero(ef->p[i].val, strlen(ef->p[i].val));
			free(ef->p[i].val);
		}
	}
	free(ef->p);
	ef->p = NULL;
	ef->n = 0;
}

/*
 * The whole file at path into *buf (malloc'd, *len bytes; free it wiped):
 * *buf NULL for a missing file. 0, or -1 with the reason in err.
 */
static int
slurp(const char *path, char **buf, size_t *len, struct error *err)
{
	FILE	*in;
	int	 rc = -1;

	*buf = NULL;
	*len = 0;
	if ((in = fopen(path, "r")) == NULL) {
		if (errno == ENOENT)
			return 0;
		return error_set(err, "%s: %s", path, strerror(errno));
	}
	if ((*buf = malloc(FILE_MAX_WRITE + 1)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	*len = fread(*buf, 1, FILE_MAX_WRITE + 1, in);
	if (ferror(in) || *len > FILE_MAX_WRITE) {
		error_set(err, "%s: cannot read it, or larger than 1 MiB", path);
		goto out;
	}
	rc = 0;
out:
	fclose(in);
	return rc;
}

/*
 * A new temporary file beside path, mode 600, owned as st says when it is
 * not NULL (the old file's owner; EPERM is not an error: an unprivileged
 * caller owns the file it makes). *tmp gets its name (malloc'd). Returns
 * the stream, or NULL with the reason in err and nothing left behind.
 */
static FILE *
temp_beside(const char *path, const struct stat *st, char **tmp,
    struct error *err)
{
	FILE	*out = NULL;
	int	 fd;

	if (asprintf(tmp, "%s.XXXXXX", path) == -1) {
		*tmp = NULL;
		error_set(err, "out of memory");
		return NULL;
	}
	if ((fd = mkstemp(*tmp)) == -1) {
		error_set(err, "%s: cannot create a temporary file beside it: %s",
		    path, strerror(errno));
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	if (fchmod(fd, 0600) == -1 || (st != NULL &&
	    fchown(fd, st->st_uid, st->st_gid) == -1 && errno != EPERM) ||
	    (out = fdopen(fd, "w")) == NULL) {
		error_set(err, "%s: %s", *tmp, strerror(errno));
		close(fd);
		unlink(*tmp);
		free(*tmp);
		*tmp = NULL;
		return NULL;
	}
	return out;
}

/* Is the line s[0..len) one that sets name? */
static bool
sets(const char *s, size_t len, const char *name)
{
	struct span key, val;

	return parse_line(s, len, &key, &val) == 1 &&
	    key.len == strlen(name) && memcmp(key.s, name, key.len) == 0;
}

/*
 * The lines of old[0..len) to out with name=value in place of the first
 * one setting name, the later ones dropped; appended when none does.
 */
static void
write_lines(FILE *out, const char *old, size_t len, const char *name,
    const char *value)
{
	size_t	 i, start;
	bool	 replaced = false;

	for (start = 0, i = 0; i <= len; i++) {
		if (i < len && old[i] != '\n')
			continue;
		/* Not the empty piece after a final newline. */
		if (i > start || i < len) {
			if (sets(old + start, i - start, name)) {
				if (!replaced)
					fprintf(out, "%s=%s\n", name, value);
				replaced = true;
			} else {
				fwrite(old + start, 1, i - start, out);
				fputc('\n', out);
			}
		}
		start = i + 1;
	}
	if (!replaced)
		fprintf(out, "%s=%s\n", name, value);
}

/* Flush out to disk and rename tmp over path, durably. 0, or -1 with err. */
static int
commit(FILE *out, const char *tmp, const char *path, struct error *err)
{
	char	*dir, *slash;
	int	 dfd;

	if (fflush(out) != 0 || fsync(fileno(out)) != 0)
		return error_set(err, "%s: %s", tmp, strerror(errno));
	if (rename(tmp, path) == -1)
		return error_set(err, "%s: cannot replace it: %s", path,
		    strerror(errno));
	/* Make the rename itself durable. */
	if ((dir = strdup(path)) != NULL && (slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		if ((dfd = open(*dir != '\0' ? dir : "/", O_RDONLY | O_DIRECTORY)) != -1) {
			fsync(dfd);
			close(dfd);
		}
	}
	free(dir);
	return 0;
}

int
envfile_set(const char *path, const char *name, const char *value,
    struct error *err)
{
	struct stat	 st;
	FILE		*out = NULL;
	char		*old = NULL, *tmp = NULL;
	size_t		 len = 0;
	bool		 have_st;
	int		 rc = -1;

	have_st = stat(path, &st) == 0;
	if (slurp(path, &old, &len, err) == -1)
		goto out;
	if ((out = temp_beside(path, have_st ? &st : NULL, &tmp, err)) == NULL)
		goto out;
	write_lines(out, old, len, name, value);
	if (commit(out, tmp, path, err) == -1)
		goto out;
	free(tmp);
	tmp = NULL;
	rc = 0;
out:
	if (out != NULL)
		fclose(out);
	if (tmp != NULL) {
		unlink(tmp);
		free(tmp);
	}
	if (old != NULL) {
		explicit_bzero(old, len);
		free(old);
	}
	return rc;
}
