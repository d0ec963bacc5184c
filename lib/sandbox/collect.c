/*
 * sandbox/collect.c: a run's result from the record its supervisor keeps in
 * the container (frames.h: the head and tail of each stream, then the
 * result), whichever process started it; see sandbox_collect in sandbox.h.
 * The record is hostile input: every frame is checked, each part comes at
 * most once, and the whole has a deadline.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "base/clock.h"
#include "base/output.h"
#include "engine/docker.h"
#include "sandbox/chan.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/sup.h"
#include "supervisor/frames.h"

#define COLLECT_MS	30000		/* deadline of collecting a record */

int
sandbox_stream_fill(struct exec_stream *s, const struct capture *c)
{
	if ((s->text = capture_text(c, &s->len, &s->cut)) == NULL)
		return -1;
	s->total = capture_total(c);
	return 0;
}

/* A run's record as it arrives from "supervisor collect". */
struct record {
	struct supf		 frames;
	unsigned char		*part[4];	/* H T h t */
	size_t			 len[4];
	struct supf_result	 result;
	bool			 have_result;
	bool			 bad;
	long long		 deadline_ms;
};

static int
record_frame(void *arg, int type, const unsigned char *p, size_t len)
{
	static const char	 types[] = "HTht";
	struct record		*rec = arg;
	const char		*t;
	int			 i;

	if (rec->have_result)
		return -1;	/* R is last */
	if (type == 'R') {
		if (supf_result_decode(p, len, &rec->result) == -1)
			return -1;
		rec->have_result = true;
		return 0;
	}
	if ((t = strchr(types, type)) == NULL || type == '\0')
		return -1;
	i = (int)(t - types);
	if (rec->part[i] != NULL || len == 0)
		return -1;	/* each part at most once, never empty */
	if ((rec->part[i] = malloc(len)) == NULL)
		return -1;
	memcpy(rec->part[i], p, len);
	rec->len[i] = len;
	return 0;
}

static void
record_output(void *arg, int stream, const char *buf, size_t len)
{
	struct record *rec = arg;

	if (stream == 1 && !rec->bad &&
	    supf_feed(&rec->frames, buf, len, record_frame, rec) == -1)
		rec->bad = true;
}

static int
record_tick(void *arg)
{
	struct record *rec = arg;

	return clock_ms() >= rec->deadline_ms;
}

/* A capture holding a record's head and tail of a stream of total bytes. */
static struct capture *
record_capture(size_t max, const unsigned char *head, size_t hlen,
    const unsigned char *tail, size_t tlen, unsigned long long total)
{
	struct capture *c;

	if ((c = capture_new(max)) == NULL)
		return NULL;
	capture_add(c, head, hlen);
	if (total > hlen + tlen)
		capture_skip(c, total - hlen - tlen);
	capture_add(c, tail, tlen);
	return c;
}

/*
 * *res from a whole record: its streams' head and tail, the exit code, the
 * duration it measured (capped), and the verdicts the server draws from
 * them (a timeout by the record's duration, out of memory by its counts).
 * SANDBOX_DONE, or -1 (out of memory).
 */
static int
record_result(struct sandbox *sb, const struct record *rec, long timeout_s,
    struct exec_result *res, struct error *err)
{
	struct capture	*out = NULL, *errc = NULL;
	int		 rc = -1;

	if ((out = record_capture(sb->max_output, rec->part[0], rec->len[0],
	    rec->part[1], rec->len[1], rec->result.out_total)) == NULL ||
	    (errc = record_capture(sb->max_output, rec->part[2], rec->len[2],
	    rec->part[3], rec->len[3], rec->result.err_total)) == NULL ||
	    sandbox_stream_fill(&res->out, out) == -1 ||
	    sandbox_stream_fill(&res->err, errc) == -1) {
		exec_result_free(res);
		error_set(err, "out of memory");
		goto out;
	}
	res->supervised = true;
	res->exit_code = rec->result.how == SUPF_EXITED ? rec->result.code :
	    128 + rec->result.code;
	res->duration_ms = rec->result.duration_ms > (unsigned long long)
	    SANDBOX_TIMEOUT_MAX * 1000 ? SANDBOX_TIMEOUT_MAX * 1000 :
	    (long long)rec->result.duration_ms;
	if (res->exit_code == 137 && res->duration_ms >= timeout_s * 1000)
		res->timed_out = true;
	if (res->exit_code == 137 &&
	    rec->result.oom_after > rec->result.oom_before)
		res->oom_killed = true;
	rc = SANDBOX_DONE;
out:
	capture_free(out);
	capture_free(errc);
	return rc;
}

int
sandbox_collect(struct sandbox *sb, const char *run_id, long timeout_s,
    struct exec_result *res, struct error *err)
{
	struct record		 rec;
	struct docker_exec_cb	 cb = { record_output, record_tick, &rec };
	struct json_object	*cmd = NULL;
	char			 sup[SUP_PATH_MAX];
	const char		*argv[4];
	bool			 stopped;
	int			 code, i, rc = -1;

	memset(res, 0, sizeof(*res));
	res->exit_code = -1;
	memset(&rec, 0, sizeof(rec));
	if (run_id == NULL || !sandbox_valid_run_id(run_id))
		return error_set(err, "invalid run id");
	if (sup_ensure(sb, sup, err) == -1)
		return -1;
	/*
	 * While it runs (a task polled, say), the channel answers without an
	 * exec of its own; the record itself comes through one.
	 */
	switch (sb->channel ? chan_ask(sb, sup, 'q', run_id) : -1) {
	case 3:
		return SANDBOX_RUNNING;
	case 4:
	case 5:
		return SANDBOX_LOST;
	default:
		break;
	}
	/* Each part is at most half the limit; a little slack for others'. */
	supf_init(&rec.frames, (uint32_t)(sb->max_output + 16));
	rec.deadline_ms = clock_ms() + COLLECT_MS;
	argv[0] = sup;
	argv[1] = "collect";
	argv[2] = run_id;
	argv[3] = NULL;
	if ((cmd = sandbox_str_array(argv)) == NULL) {
		error_set(err, "out of memory");
		goto out;
	}
	if (sandbox_run_cmd(sb, cmd, &cb, &stopped, &code, err) == -1)
		goto out;
	if (stopped) {
		error_kind(err, ERR_TIMEOUT, "collecting run %s took longer than %d s",
		    run_id, COLLECT_MS / 1000);
		goto out;
	}
	switch (code) {
	case 3:
		rc = SANDBOX_RUNNING;
		goto out;
	case 4:
	case 5:
		rc = SANDBOX_LOST;
		goto out;
	case 0:
		break;
	default:
		error_kind(err, ERR_UPSTREAM, "collecting run %s: the supervisor "
		    "ended with status %d", run_id, code);
		goto out;
	}
	if (rec.bad || !rec.have_result || !supf_at_boundary(&rec.frames)) {
		/* Its copy replaced? The next collection uploads a fresh one. */
		sup_forget(sup);
		error_kind(err, ERR_UPSTREAM, "run %s: malformed record", run_id);
		goto out;
	}
	rc = record_result(sb, &rec, timeout_s, res, err);
out:
	json_object_put(cmd);
	for (i = 0; i < 4; i++)
		free(rec.part[i]);
	supf_free(&rec.frames);
	return rc;
}
