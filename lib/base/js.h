/*
 * js.h: bounded JSON parsing and typed getters over json-c.
 *
 * Getters return NULL (or -1) when the key is missing or has another type,
 * so callers validate and read in one step.
 */
#ifndef CS_JS_H
#define CS_JS_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

#include "base/error.h"

#define JS_MAX_DEPTH	32

/*
 * Parse exactly one JSON value from buf[0..len): no trailing garbage, no
 * embedded NUL, nesting at most max_depth. Returns a new reference or NULL
 * with err set ("parse error at ...").
 */
struct json_object *js_parse(const char *buf, size_t len, int max_depth,
	    struct error *err);

/* Member key of obj when it has the given type; else NULL. */
struct json_object *js_get(struct json_object *obj, const char *key,
	    enum json_type type);
/* String member (NULL if missing or not a string). */
const char	*js_str(struct json_object *obj, const char *key);
/* Integer member: 0 and *out set, or -1 if missing, not an integer or out of int64. */
int		 js_int(struct json_object *obj, const char *key, long long *out);
/* Boolean member: 0 and *out set, or -1. */
int		 js_bool(struct json_object *obj, const char *key, bool *out);
/* String member with no NUL and length <= max; else NULL. */
const char	*js_str_max(struct json_object *obj, const char *key, size_t max);

/* Add members; they take ownership of nothing the caller keeps. */
void	js_set_str(struct json_object *obj, const char *key, const char *val);
void	js_set_strn(struct json_object *obj, const char *key, const char *val, size_t n);
void	js_set_int(struct json_object *obj, const char *key, long long val);
void	js_set_bool(struct json_object *obj, const char *key, bool val);
/* Adds val (taking its reference) under key. */
void	js_set(struct json_object *obj, const char *key, struct json_object *val);

/* Serialize compactly, without escaping '/'. Pointer valid while obj lives. */
const char *js_text(struct json_object *obj, size_t *len);

#endif
