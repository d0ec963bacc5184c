/*
 * folder.h: a folder of the sandbox container as one archive (.tar.gz or
 * .zip), made inside the container as the bytes go out (tar czf -, zip -r -)
 * and passed on as they arrive, in constant memory (the folder links of
 * /dl, links/dl_archive.c).
 */
#ifndef CS_FOLDER_H
#define CS_FOLDER_H

#include <stdbool.h>

#include "base/error.h"

struct exec_observer;
struct sandbox;

/*
 * Stream the folder at path (absolute) as an archive of format ("tar.gz"
 * or "zip") from the running container: obs->output gets stdout (stream 1)
 * and stderr (stream 2) as they arrive, the stdout beginning with one byte
 * "A" once the folder was found, before the archive (with head, nothing
 * follows it); obs->tick is asked about once a second and non-zero stops
 * reading (*stopped set; the archiver goes on in the container until its
 * own limit). Returns 0 with *exit_code (-1 when stopped; non-zero when the
 * folder is missing or the archiver failed), or -1 when it could not run
 * (err->kind ERR_NOT_FOUND/ERR_CONFLICT: the container is missing or not
 * running).
 */
int	folder_stream(struct sandbox *, const char *path, const char *format,
	    bool head, const struct exec_observer *obs, bool *stopped,
	    int *exit_code, struct error *);

#endif
