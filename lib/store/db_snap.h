/*
 * store/db_snap.h: the rows of snapshots (sql/023-snapshots.sql,
 * STMT_SNAP_*), read in store/db_snap.c beside their SQL.
 */
#ifndef CS_STORE_DB_SNAP_H
#define CS_STORE_DB_SNAP_H

#include <stdbool.h>

#include "store/db.h"

#define DB_SNAP_ID_MAX		32	/* "snap-" + 16 hex digits, with NUL */
#define DB_SNAP_IMAGE_MAX	160	/* an image reference, with NUL */
#define DB_SNAP_NOTE_MAX	512	/* a note, with NUL */

#define DB_SNAP_FORM_MAX	8	/* "engine", "full", "diff", with NUL */

/* One snapshot, as STMT_SNAP_GET reads it. */
struct db_snap {
	char		image[DB_SNAP_IMAGE_MAX];
	long long	archive_bytes;
	long long	created;
	char		note[DB_SNAP_NOTE_MAX];
	char		form[DB_SNAP_FORM_MAX];	/* sql/027-snapshot-forms.sql */
	char		base[DB_SNAP_ID_MAX];	/* a 'diff': its 'full' one */
	bool		hidden;		/* a deleted base kept for its diffs */
};

/* The newest GNU tar snapshot of a sandbox's volume (STMT_SNAP_NEWEST). */
struct db_snap_newest {
	char		id[DB_SNAP_ID_MAX];
	char		form[DB_SNAP_FORM_MAX];
	char		base[DB_SNAP_ID_MAX];
	long long	bytes, base_bytes;
};

/* Snapshot id of the sandbox container: LOOKUP_FOUND with *s, NONE, ERROR. */
enum lookup_result db_snap_get(struct db *, const char *id,
		    const char *container, struct db_snap *s);

/*
 * The newest 'full' or 'diff' snapshot of container taken of volume:
 * LOOKUP_FOUND with *n, NONE, ERROR.
 */
enum lookup_result db_snap_newest(struct db *, const char *container,
		    const char *volume, struct db_snap_newest *n);

/*
 * Count (hidden ones not) and bytes (archive and layer, hidden ones too)
 * of container's snapshots. 0 or -1.
 */
int		db_snap_total(struct db *, const char *container,
		    long long *count, long long *bytes);

/*
 * The next row of STMT_SNAP_IDS (started by the caller): id and image,
 * copied. DB_ROW, DB_DONE or DB_ERROR.
 */
enum db_step	db_snap_ids_next(struct db_q *, char id[DB_SNAP_ID_MAX],
		    char image[DB_SNAP_IMAGE_MAX]);

/* The next row of STMT_RUN_ACTIVE_IN: the run's id (at most 64 bytes). */
enum db_step	db_snap_run_next(struct db_q *, char id[72]);

#endif
