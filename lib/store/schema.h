/*
 * schema.h: the SQL files of sql/, compiled in by the Makefile
 * (build/lib/schema.c), in order of version. db.c applies them.
 */
#ifndef CS_SCHEMA_H
#define CS_SCHEMA_H

#include <stddef.h>

struct schema_step {
	int		 version;	/* NNN of sql/NNN-name.sql */
	const char	*file;
	const char	*sql;
};

/* Ends with an entry whose file is NULL. */
extern const struct schema_step schema_steps[];

#endif
