/*
 * envfile.h: the settings file (SANDBOX_ENV_FILE), read and written.
 *
 * The one grammar of that file, for the programs (config.c reads it) and
 * for sandboxctl (which writes a new key into it): KEY=VALUE lines, an
 * optional "export " before the key, blank lines and '#' comments, spaces
 * around the key and the value ignored, a value optionally in single or
 * double quotes. A line ends at its first CR, LF or NUL. The same name
 * set twice: the last line wins.
 */
#ifndef CS_ENVFILE_H
#define CS_ENVFILE_H

#include <stddef.h>

#include "base/error.h"

/* One KEY=VALUE pair of the file. */
struct envfile_pair {
	char	*key;
	char	*val;
};

/* The pairs of one file, in the file's order. */
struct envfile {
	struct envfile_pair	*p;
	size_t			 n;
};

/*
 * Read the file at path into ef (zeroed by the caller). A missing file is
 * not an error: ef stays empty (everything may come from the environment).
 * Returns 0, or -1 with the reason in err naming the file and line (a line
 * too long, one that is not KEY=VALUE); ef then holds the lines before it.
 * Free with envfile_free in both cases.
 */
int	envfile_read(const char *path, struct envfile *ef, struct error *err);

/* The value of name in ef (the last line setting it), or NULL. ef owns it. */
const char *envfile_get(const struct envfile *ef, const char *name);

/* Free ef's pairs, wiping the values (they include secrets). */
void	envfile_free(struct envfile *ef);

/*
 * Write the file at path again with name=value in place of the first line
 * setting name (dropping any later ones), or appended when none does; every
 * other line is kept as it was. A missing file is created. The new file
 * goes through a temporary file in the same folder renamed over the old
 * one: readers see the old file or the new one, never half of one. It is
 * mode 600 and keeps the old owner. Returns 0, or -1 with the reason in err
 * (the file unchanged).
 */
int	envfile_set(const char *path, const char *name, const char *value,
	    struct error *err);

#endif
