/*
 * The engine's file stat: the X-Docker-Container-Path-Stat header's value
 * (base64 of a JSON object), as files_stat reads it (files_stat_parse,
 * lib/sandbox/files.c). The whole input is the value as sent.
 */
#include "fuzz.h"
#include "sandbox/files.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct file_stat	 st;

	if (files_stat_parse((const char *)data, size, &st) == 0 &&
	    (memchr(st.link_target, '\0', sizeof(st.link_target)) == NULL ||
	    (st.kind != FILE_REGULAR && st.kind != FILE_DIRECTORY &&
	    st.kind != FILE_SYMLINK && st.kind != FILE_OTHER)))
		abort();
	return 0;
}
