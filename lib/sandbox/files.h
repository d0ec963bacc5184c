/*
 * files.h: one file in the sandbox container, through the Docker archive
 * API (Engine API v1.41 "Get information about files in a container",
 * "Get an archive of a filesystem resource in a container").
 *
 * files_stat is HEAD /containers/N/archive?path=P: the engine's stat of P
 * from the X-Docker-Container-Path-Stat header, without following a final
 * symbolic link. files_stream is GET of the same: a tar of P, from which the
 * one regular file is handed to a sink as it arrives (tar.h), so memory
 * stays constant for any size. Both work on a stopped container too.
 */
#ifndef CS_FILES_H
#define CS_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

struct docker_put_cb;
struct sandbox;
struct tar_sink;

#define FILES_PATH_MAX	4096

enum file_kind {
	FILE_REGULAR,
	FILE_DIRECTORY,
	FILE_SYMLINK,
	FILE_OTHER,	/* device, socket, pipe, ... */
};

struct file_stat {
	enum file_kind		 kind;
	unsigned long long	 size;
	uint32_t		 mode;		/* Go os.FileMode, as the engine sends it */
	long long		 mtime;		/* unix seconds */
	char			 link_target[FILES_PATH_MAX + 1]; /* "" unless a symlink */
};

/*
 * Stat path (absolute) in the sandbox's container. Returns 0 with *st, or -1 with
 * err->kind ERR_NOT_FOUND (no such file, or no such container),
 * ERR_UPSTREAM/ERR_UNAVAILABLE (engine).
 */
int	files_stat(struct sandbox *, const char *path,
	    struct file_stat *st, struct error *err);

/*
 * Stream the regular file at path (absolute) to sink, as the tar stream
 * arrives. Returns 0 when the whole file went to the sink; 1 when a sink
 * callback stopped it (returned -1); -1 with err->kind ERR_NOT_FOUND (missing, or
 * not a regular file), 502 (malformed archive, engine error) or 503
 * (engine unreachable). The sink's begin is called before any data and
 * before anything else is known, so it may still choose the response.
 */
int	files_stream(struct sandbox *, const char *path,
	    const struct tar_sink *sink, struct error *err);

/*
 * Extract a tar archive of length bytes, pulled from cb as the engine takes
 * it (docker_put_stream: constant memory, an inactivity deadline), into the
 * directory dir (absolute) of the sandbox's container: PUT
 * /containers/N/archive?path=DIR (Engine API v1.41 "Extract an archive of
 * files or folders to a directory in a container"). Returns 0 with *status
 * (*aborted when cb stopped it), or -1 when no answer came.
 */
int	files_put(struct sandbox *, const char *dir, unsigned long long length,
	    const struct docker_put_cb *cb, long *status, bool *aborted,
	    struct error *err);

/*
 * Parse an RFC 3339 time as the engine writes it
 * ("2024-05-01T12:34:56.123456789Z", or with a "+02:00" offset) into unix
 * seconds, dropping the fraction. 0, or -1 when malformed.
 */
int	files_parse_time(const char *s, long long *out);

/* The base name of an absolute path (the part after the last '/'). */
const char *files_basename(const char *path);

#endif
