/*
 * files.h: one file in the sandbox container, through the Docker archive
 * API (Engine API v1.41 "Get information about files in a container",
 * "Get an archive of a filesystem resource in a container", "Extract an
 * archive of files or folders to a directory in a container").
 *
 * files_stat is HEAD /containers/N/archive?path=P: the engine's stat of P
 * from the X-Docker-Container-Path-Stat header, without following a final
 * symbolic link. files_stream is GET of the same: a tar of P, from which the
 * one regular file is handed to a sink as it arrives (engine/tar.h), so
 * memory stays constant for any size. Both work on a stopped container too.
 * files_put is the way in: one file, in a new folder, as a tar stream made
 * as the engine takes it. Callers see only the types here: the archive's
 * format and the engine's client stay inside the sandbox area.
 */
#ifndef CS_FILES_H
#define CS_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

struct sandbox;

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
 * The X-Docker-Container-Path-Stat header's value as the engine sent it
 * (len bytes, blanks and line end around it allowed): base64 of a JSON
 * object with size, mode, mtime and linkTarget. 0 with *st, or -1 when it
 * is malformed (files_stat's parser; its fuzz target calls it).
 */
int	files_stat_parse(const char *value, size_t len, struct file_stat *st);

/* The file being streamed, as the archive's headers describe it. */
struct file_entry {
	const char		*name;	/* as found, NUL-terminated */
	unsigned long long	 size;	/* bytes of data that follow */
	long long		 mtime;	/* unix seconds */
};

/*
 * What to do with a streamed file (files_stream). begin is called once,
 * before any data; data with each piece of its content (never with len 0).
 * Either may return -1 to stop the stream.
 */
struct file_sink {
	int	(*begin)(void *arg, const struct file_entry *);
	int	(*data)(void *arg, const void *buf, size_t len);
	void	*arg;
};

/* How files_stream ended. */
enum stream_end {
	STREAM_FAILED = -1,	/* err says why */
	STREAM_DONE = 0,	/* the whole file went to the sink */
	STREAM_STOPPED = 1,	/* a sink callback returned -1 */
};

/*
 * Stream the regular file at path (absolute) to sink, as the tar stream
 * arrives. Returns STREAM_DONE when the whole file went to the sink;
 * STREAM_STOPPED when a sink callback stopped it (returned -1);
 * STREAM_FAILED with err->kind ERR_NOT_FOUND (missing, or not a regular
 * file), ERR_UPSTREAM (malformed archive, engine error) or ERR_UNAVAILABLE
 * (engine unreachable). The sink's begin is called before any data and
 * before anything else is known, so it may still choose the response.
 */
enum stream_end files_stream(struct sandbox *, const char *path,
	    const struct file_sink *sink, struct error *err);

/*
 * Where the content of a file to store comes from (files_put): read fills
 * at most len bytes and returns how many (more than 0), or -1 to abort the
 * transfer (the engine then sees a cut archive and extracts nothing more).
 */
struct file_source {
	long	(*read)(void *arg, char *buf, size_t len);
	void	*arg;
};

/*
 * Store a file of size bytes, pulled from src as the engine takes them
 * (constant memory, an inactivity deadline), as DIR/FOLDER/NAME in the
 * sandbox's container: one tar stream holding the new folder FOLDER (mode
 * 0700) and the file NAME in it (mode 0644), extracted into the directory
 * dir (absolute) by PUT /containers/N/archive?path=DIR. Returns 0 with
 * *status, the engine's HTTP status (err holds its message when not 2xx),
 * and *aborted when src stopped it; or -1 with err when no answer came, or
 * err->kind ERR_INTERNAL when the names cannot go in an archive (empty,
 * too long, a newline).
 */
int	files_put(struct sandbox *, const char *dir, const char *folder,
	    const char *name, unsigned long long size,
	    const struct file_source *src, long *status, bool *aborted,
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
