/*
 * Tar streams from the engine's archive API (lib/engine/tar.c): the first byte
 * sets the size of each piece fed, the rest is the stream; the wanted
 * entry is "f".
 */
#include "engine/tar.h"
#include "fuzz.h"

static int
begin(void *arg, const struct tar_entry *e)
{
	(void)arg;
	return e->name[0] == '\0' ? -1 : 0;
}

static unsigned char last;

static int
data_cb(void *arg, const void *buf, size_t len)
{
	(void)arg;
	if (len > 0)
		last = ((const unsigned char *)buf)[len - 1];
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tar_sink		 sink = { begin, data_cb, NULL };
	struct tar_extract	*t;
	struct error		 err;
	size_t			 step, off;
	enum tar_rc		 rc = TAR_MORE;

	if (size < 1 || (t = tar_extract_new("f", &sink)) == NULL)
		return 0;
	step = 1 + (size_t)data[0] * 13;
	for (off = 1; off < size && rc == TAR_MORE; off += step)
		rc = tar_extract_feed(t, data + off, size - off < step ?
		    size - off : step, &err);
	(void)tar_extract_end(t, &err);
	tar_extract_free(t);
	return 0;
}
