/*
 * dl_archive.c: /dl for a shared folder (links_create_archive): the folder
 * streamed as one .tar.gz or .zip, made inside the container as the bytes
 * go out (tar czf -, zip -r -), passed from the exec's output stream to the
 * response in constant memory.
 *
 * The archive's length is not known before it is made, so the response
 * has no Content-Length (chunked, or closed at the end), no Range support
 * ("Accept-Ranges: none") and no validators; a folder that changes while
 * it streams is archived as tar or zip see it. The script prints one byte
 * before the archive, after it found the folder, so a missing folder is
 * still a 404 and not a 200 with an empty body. Symbolic links inside are
 * kept as links in a .tar.gz; a .zip holds what they point to (zip cannot
 * store a link when it writes to a pipe).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"
#include "http/http.h"
#include "links/dl.h"
#include "links/links.h"
#include "sandbox/files.h"
#include "sandbox/folder.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "store/db.h"

struct arch {
	struct http_req		*r;
	struct db		*db;
	const struct link_row	*row;
	char			 disp[DL_DISPOSITION_MAX];
	bool			 head;
	bool			 started;	/* the marker was seen */
	bool			 gone;
	long long		 begun;		/* monotonic ms */
	long long		 last;		/* when output last came */
};

/*
 * Server-side deadlines, whatever the container does with its own
 * `timeout 3600`: an archive that sends nothing for ARCHIVE_STALL_S, or
 * still sends after ARCHIVE_MAX_S (one byte now and then would otherwise
 * hold a worker for as long as the client reads), is dropped.
 */
#define ARCHIVE_STALL_S	600
#define ARCHIVE_MAX_S	3600

static void
start(struct arch *a)
{
	http_status(a->r, 200);
	http_header_add(a->r, "Content-Type", strcmp(a->row->archive, "zip") == 0 ?
	    "application/zip" : "application/gzip");
	http_header_add(a->r, "Content-Disposition", a->disp);
	http_header_add(a->r, "Accept-Ranges", "none");
	http_header_add(a->r, "Cache-Control", "private, no-cache");
	http_header_add(a->r, "X-Content-Type-Options", "nosniff");
	http_header_add(a->r, "Referrer-Policy", "no-referrer");
	http_header_add(a->r, "Content-Security-Policy", "sandbox");
	a->started = true;
}

static void
on_output(void *arg, int stream, const char *buf, size_t len)
{
	struct arch *a = arg;

	if (stream != 1 || a->gone || len == 0)
		return;
	a->last = clock_ms();
	if (!a->started) {
		if (buf[0] != 'A') {
			a->gone = true;
			return;
		}
		start(a);
		if (a->head) {
			http_flush(a->r);
			a->gone = true;		/* nothing more to send */
			return;
		}
		links_count_download(a->db, a->row->id, (long long)time(NULL));
		buf++;
		len--;
	}
	if (len > 0 && http_write(a->r, buf, len) == -1)
		a->gone = true;
}

static int
on_tick(void *arg)
{
	struct arch	*a = arg;
	long long	 now = clock_ms();

	return a->gone || http_stopping() || http_gone(a->r) ||
	    now - a->last > ARCHIVE_STALL_S * 1000LL ||
	    now - a->begun > ARCHIVE_MAX_S * 1000LL;
}

void
dl_archive(struct http_req *r, const struct config *cfg, struct db *db,
    const struct link_row *row, bool head)
{
	struct arch		 a;
	struct sandbox		*sb = NULL;
	struct exec_observer	 obs = { on_output, on_tick, NULL };
	struct error		 err;
	char			 name[LINK_NAME_MAX + 1];
	bool			 stopped = false;
	int			 code = -1;

	memset(&a, 0, sizeof(a));
	a.r = r;
	a.db = db;
	a.row = row;
	a.head = head;
	a.begun = a.last = clock_ms();
	obs.arg = &a;
	snprintf(name, sizeof(name), "%s.%s", files_basename(row->path), row->archive);
	if (dl_disposition("attachment", name, a.disp, sizeof(a.disp)) < 0)
		snprintf(a.disp, sizeof(a.disp), "attachment");
	/* Claimed: counted against the cap and idle-stopped (sandboxes.h). */
	if (sandboxes_open(cfg, db, row->owner, &sb, &err) == -1 ||
	    sandbox_ensure(sb, &err) == -1) {
		log_warn("dl: %s", err.msg);
		http_send_error(r, 503, "The sandbox cannot be reached now; try "
		    "again later.");
		goto out;
	}
	if (folder_stream(sb, row->path, row->archive, head, &obs, &stopped,
	    &code, &err) == -1) {
		if (!a.started) {
			log_warn("dl: link %s: %s", row->id, err.msg);
			http_send_error(r, 502, "The folder cannot be read now.");
		}
		goto out;
	}
	if (!a.started) {
		http_send_error(r, 404, "The shared folder is no longer there.");
		goto out;
	}
	if (!stopped && code != 0 && !head)
		/* Mid-body: the client sees the stream end without the archive's end. */
		log_warn("dl: link %s: the archive ended with status %d", row->id, code);
	http_flush(r);
out:
	if (sb != NULL)
		sandboxes_touch(cfg, db, row->owner);
	sandbox_close(sb);
}
