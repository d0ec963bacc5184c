/*
 * cleanup.c: the FILE_TTL clean-up pass; see cleanup.h.
 *
 * The work inside the container is one exec of SCRIPT_CLEANUP below, so a pass
 * costs one exec however many entries /sandbox holds, and works the same
 * with a remote engine. For each top-level entry (dot entries included) it
 * asks find whether anything inside was modified after now - FILE_TTL,
 * stopping at the first hit:
 *   - find runs with -P (the default): a symlink is judged by its own
 *     mtime and removed as a link, never followed;
 *   - -xdev, and an entry on another file system than /sandbox itself (a
 *     mount point) is kept untouched; rm runs with --one-file-system;
 *   - a find that fails (unreadable folder, entry vanishing) keeps the entry.
 * Names travel back shell-quoted by printf %q in the C locale, so a name
 * with spaces, newlines or bytes that are not UTF-8 stays on one ASCII line.
 *
 * Coordination: the pass starts with a conditional UPDATE of the single
 * cleanup_lease row (due and not leased), which SQLite serialises between
 * processes; the winner holds the lease for LEASE_S seconds at most, so a
 * holder that died frees it by itself.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "base/config.h"
#include "base/js.h"
#include "base/log.h"
#include "base/thread.h"
#include "http/http.h"
#include "ops/cleanup.h"
#include "runs/runs.h"
#include "sandbox/sandbox.h"
#include "sandbox/sandboxes.h"
#include "sandbox/scripts.h"
#include "sandbox/terms.h"
#include "store/db.h"
#include "store/db_ops.h"
#include "store/db_sandbox.h"

#define LEASE_S		3600		/* a pass longer than this loses the lease */
#define CHECK_EVERY_S	60		/* per process: how often to look at the DB */
#define RESULT_KEEP_S	86400		/* stored command results: a day */
#define OUT_MAX		(64 * 1024)
#define SCRIPT_DEADLINE_S 600		/* the pass's exec into the container */
#define NAME_SHOWN_MAX	300		/* quoted name bytes printed per entry */

static atomic_bool	stop_flag;

static bool
should_stop(void *arg)
{
	(void)arg;
	return atomic_load(&stop_flag);
}

void
cleanup_report_free(struct cleanup_report *r)
{
	if (r == NULL)
		return;
	free(r->names);
	r->names = NULL;
}

static long long
next_number(const char **p)
{
	char		*end;
	long long	 v;

	while (**p == ' ')
		(*p)++;
	/* strtoll would skip a newline too and read the next line's number. */
	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	v = strtoll(*p, &end, 10);
	if (end == *p || errno != 0 || v < 0)
		return -1;
	*p = end;
	return v;
}

int
cleanup_parse(const char *out, struct cleanup_report *r)
{
	struct json_object	*names;
	const char		*line, *nl, *p;
	char			 esc[NAME_SHOWN_MAX + 64];
	bool			 total = false;
	long long		 v[4];
	int			 i;

	names = json_object_new_array();
	for (line = out; *line != '\0'; line = *nl ? nl + 1 : nl) {
		nl = line + strcspn(line, "\n");
		p = line + 2;
		if (nl - line < 2 || line[1] != ' ')
			continue;
		switch (line[0]) {
		case 'R':
			if (next_number(&p) < 0 || *p != ' ')
				break;
			p++;
			log_escape(esc, sizeof(esc), p, (size_t)(nl - p));
			log_info("cleanup: removed /sandbox/%s", esc);
			if (names != NULL)
				json_object_array_add(names,
				    json_object_new_string_len(p, (int)(nl - p)));
			break;
		case 'F':
			log_escape(esc, sizeof(esc), p, (size_t)(nl - p));
			log_warn("cleanup: could not remove /sandbox/%s", esc);
			break;
		case 'T':
			for (i = 0; i < 4; i++)
				if ((v[i] = next_number(&p)) < 0)
					break;
			if (i < 4)
				break;
			r->removed = (long)v[0];
			r->kept = (long)v[1];
			r->failed = (long)v[2];
			r->bytes = v[3];
			total = true;
			break;
		default:
			break;
		}
	}
	if (names != NULL && (r->names = strdup(js_text(names, NULL))) == NULL)
		log_warn("cleanup: out of memory for the names");
	json_object_put(names);
	return total ? 0 : -1;
}

/*
 * Remove old entries of /sandbox in owner's sandbox (NULL: the shared
 * one); fills r->state and the counts.
 */
static void
sweep(const struct config *cfg, const char *owner, struct cleanup_report *r)
{
	struct sandbox	*sb = NULL;
	struct error	 e;
	const char	*args[2];
	char		 ttl[32], *out = NULL;
	int		 code;

	snprintf(ttl, sizeof(ttl), "%ld", cfg->file_ttl);
	args[0] = ttl;
	args[1] = NULL;
	if ((out = malloc(OUT_MAX)) == NULL) {
		snprintf(r->state, sizeof(r->state), "error");
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	if (sandbox_open(cfg, owner, &sb, &e) == -1)
		goto fail;
	if (sandbox_script(sb, SCRIPT_CLEANUP, args, out, OUT_MAX, should_stop, NULL,
	    SCRIPT_DEADLINE_S, &code, &e) == -1) {
		if (e.kind == ERR_NOT_FOUND || e.kind == ERR_CONFLICT) {
			/* Nothing changes in a stopped container; next time. */
			snprintf(r->state, sizeof(r->state), "skipped");
			snprintf(r->message, sizeof(r->message),
			    "the sandbox container is not running");
			goto out;
		}
		goto fail;
	}
	if (code != 0) {
		snprintf(e.msg, sizeof(e.msg), "the clean-up script exited with "
		    "status %d", code);
		goto fail;
	}
	if (cleanup_parse(out, r) == -1) {
		snprintf(e.msg, sizeof(e.msg), "the clean-up script gave no summary");
		goto fail;
	}
	snprintf(r->state, sizeof(r->state), r->failed > 0 ? "error" : "ok");
	if (r->failed > 0)
		snprintf(r->message, sizeof(r->message), "%ld entries could not "
		    "be removed", r->failed);
	goto out;
fail:
	snprintf(r->state, sizeof(r->state), "error");
	snprintf(r->message, sizeof(r->message), "%.200s", e.msg);
out:
	sandbox_close(sb);
	free(out);
}

/*
 * SANDBOX_SCOPE=person: sweep every running sandbox (a stopped one changes
 * nothing; it is swept once it runs again) and add up the counts; the
 * first sandbox's removed names are kept. First the sandbox table is
 * reconciled with the engine and idle sandboxes are stopped.
 */
static void
sweep_each(const struct config *cfg, struct db *db, struct cleanup_report *r)
{
	struct cleanup_report	 one;
	struct json_object	*owners = json_object_new_array();
	struct db_q		*q;
	const char		*owner;
	size_t			 i, n;
	long			 errors = 0;

	/* Bring the server's view in line with the engine's, then stop idle ones. */
	json_object_put(sandboxes_list(cfg, db));
	sandboxes_stop_idle(cfg, db);
	if ((q = db_query(db, STMT_SANDBOX_RUNNING, NULL)) != NULL) {
		while (db_sandbox_running_next(q, &owner) == DB_ROW)
			if (owner != NULL)
				json_object_array_add(owners,
				    json_object_new_string(owner));
		db_done(q);
	}
	snprintf(r->state, sizeof(r->state), "ok");
	n = json_object_array_length(owners);
	for (i = 0; i < n; i++) {
		memset(&one, 0, sizeof(one));
		sweep(cfg, json_object_get_string(json_object_array_get_idx(
		    owners, i)), &one);
		if (strcmp(one.state, "skipped") == 0) {
			free(one.names);
			continue;
		}
		r->removed += one.removed;
		r->kept += one.kept;
		r->failed += one.failed;
		r->bytes += one.bytes;
		if (r->names == NULL) {
			r->names = one.names;
			one.names = NULL;
		}
		if (strcmp(one.state, "error") == 0 && errors++ == 0)
			snprintf(r->message, sizeof(r->message), "%s: %.200s",
			    json_object_get_string(json_object_array_get_idx(
			    owners, i)), one.message);
		free(one.names);
	}
	if (errors > 0)
		snprintf(r->state, sizeof(r->state), "error");
	else if (n == 0) {
		snprintf(r->state, sizeof(r->state), "skipped");
		snprintf(r->message, sizeof(r->message), "no sandbox is running");
	}
	json_object_put(owners);
}

int
cleanup_run(const struct config *cfg, const char *trigger, bool force,
    struct cleanup_report *r, struct error *err)
{
	struct db	*db = NULL;
	char		 holder[64];
	long long	 now = (long long)time(NULL);
	long		 n;
	int		 rc = -1;

	memset(r, 0, sizeof(*r));
	if (db_open(cfg->db_path, &db, err) == -1)
		return -1;
	snprintf(holder, sizeof(holder), "%ld/%lx", (long)getpid(),
	    (unsigned long)pthread_self());
	n = db_exec(db, STMT_CLEANUP_LEASE_TAKE, "iitii", now, now + LEASE_S,
	    holder, (long long)force, (long long)cfg->cleanup_interval);
	if (n == -1) {
		error_set(err, "%s: cannot take the clean-up lease", cfg->db_path);
		goto out;
	}
	if (n == 0) {
		rc = 0;		/* not due, or another pass holds the lease */
		goto out;
	}
	r->ran = true;
	if (db_exec(db, STMT_CLEANUP_INSERT, "iti", now, trigger,
	    (long long)cfg->file_ttl) == -1) {
		error_set(err, "%s: cannot record the clean-up", cfg->db_path);
		goto release;
	}
	r->id = db_last_id(db);
	db_exec(db, STMT_CLEANUP_STALE, "ii", now, r->id);

	/* The audit log first: it needs no container. */
	n = db_exec(db, STMT_RUN_PRUNE, "i", now - cfg->audit_retention);
	r->runs_pruned = n > 0 ? n : 0;
	n = db_exec(db, STMT_RUN_CLEAR_RESULTS, "i", now - RESULT_KEEP_S);
	r->results_cleared = n > 0 ? n : 0;
	db_exec(db, STMT_CLEANUP_PRUNE, "i", now - cfg->audit_retention);
	db_exec(db, STMT_SIGNIN_PRUNE, "i", now - cfg->audit_retention);

	if (cfg->per_person)
		sweep_each(cfg, db, r);
	else
		sweep(cfg, NULL, r);
	/* Terminals that closed themselves when idle: their rows too. */
	terms_reconcile(cfg, db, NULL, NULL);
	log_info("cleanup (%s): %s: removed %ld entries (%lld bytes), kept %ld, "
	    "failed %ld; pruned %ld audit rows, cleared %ld results%s%s",
	    trigger, r->state, r->removed, r->bytes, r->kept, r->failed,
	    r->runs_pruned, r->results_cleared, r->message[0] ? ": " : "",
	    r->message);
	if (db_exec(db, STMT_CLEANUP_FINISH, "itiiiiiitti",
	    (long long)time(NULL), r->state, (long long)r->removed,
	    (long long)r->kept, (long long)r->failed, r->bytes,
	    (long long)r->runs_pruned, (long long)r->results_cleared, r->names,
	    r->message[0] ? r->message : NULL, r->id) == -1)
		log_warn("cleanup: cannot record the end of pass %lld", r->id);
	rc = 0;
release:
	db_exec(db, STMT_CLEANUP_LEASE_RELEASE, "t", holder);
out:
	db_close(db);
	return rc;
}

/* The background pass of this process. */
static pthread_mutex_t	 bg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_t	 bg_thread;
static bool		 bg_started;	/* bg_thread needs a join */
static atomic_bool	 bg_running;
static atomic_llong	 next_check;

static void *
background(void *arg)
{
	const struct config	*cfg = arg;
	struct cleanup_report	 r;
	struct error		 e;
	struct db		*db = NULL;
	struct db_cleanup_lease	 lease;
	long long		 now = (long long)time(NULL);
	bool			 due = false;

	/* Runs whose worker is gone, about once a minute (runs.h). */
	runs_reconcile(cfg);
	/* Read first (no write lock in WAL): most looks find nothing due. */
	if (db_open(cfg->db_path, &db, &e) == -1) {
		log_warn("cleanup: %s", e.msg);
		goto out;
	}
	if (db_cleanup_lease_get(db, &lease) == LOOKUP_FOUND)
		due = lease.last_run <= now - cfg->cleanup_interval &&
		    lease.lease_until <= now;
	db_close(db);
	if (due && cleanup_run(cfg, "auto", false, &r, &e) == -1)
		log_warn("cleanup: %s", e.msg);
	else if (due)
		cleanup_report_free(&r);
out:
	atomic_store(&bg_running, false);
	return NULL;
}

void
cleanup_maybe(const struct config *cfg)
{
	long long	now = (long long)time(NULL), when;
	pthread_attr_t	attr;

	when = atomic_load(&next_check);
	if (now < when || !atomic_compare_exchange_strong(&next_check, &when,
	    now + CHECK_EVERY_S))
		return;
	/* Plain CGI (or not serving at all): the process ends with the request. */
	if (atomic_load(&stop_flag) || http_serving_cgi())
		return;
	pthread_mutex_lock(&bg_lock);
	if (atomic_load(&bg_running))
		goto out;
	if (bg_started) {
		pthread_join(bg_thread, NULL);
		bg_started = false;
	}
	atomic_store(&bg_running, true);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 512 * 1024);
	if (thread_start(&bg_thread, &attr, background, (void *)cfg,
	    "cs-cleanup") != 0) {
		atomic_store(&bg_running, false);
		log_warn("cleanup: cannot start a thread");
	} else
		bg_started = true;
	pthread_attr_destroy(&attr);
out:
	pthread_mutex_unlock(&bg_lock);
}

void
cleanup_shutdown(void)
{
	atomic_store(&stop_flag, true);
	pthread_mutex_lock(&bg_lock);
	if (bg_started) {
		pthread_join(bg_thread, NULL);
		bg_started = false;
	}
	pthread_mutex_unlock(&bg_lock);
}
