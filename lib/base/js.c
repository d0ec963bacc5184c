/* js.c: see js.h. */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "base/js.h"

struct json_object *
js_parse(const char *buf, size_t len, int max_depth, struct error *err)
{
	struct json_tokener	*tok;
	struct json_object	*obj = NULL;
	enum json_tokener_error	 jerr;
	size_t			 end;

	if (len > INT32_MAX) {
		error_set(err, "JSON text too large");
		return NULL;
	}
	if (memchr(buf, '\0', len) != NULL) {
		error_set(err, "JSON text contains a NUL byte");
		return NULL;
	}
	if ((tok = json_tokener_new_ex(max_depth)) == NULL) {
		error_set(err, "out of memory");
		return NULL;
	}
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
	obj = json_tokener_parse_ex(tok, buf, (int)len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	if (jerr == json_tokener_continue && obj == NULL) {
		/* A bare number at the end may go on: a space ends it. */
		obj = json_tokener_parse_ex(tok, " ", 1);
		jerr = json_tokener_get_error(tok);
		end = len;
	}
	if (jerr == json_tokener_continue) {
		error_set(err, "JSON text ends early");
		goto fail;
	}
	if (jerr != json_tokener_success) {
		error_set(err, "JSON parse error at byte %zu: %s", end,
		    json_tokener_error_desc(jerr));
		goto fail;
	}
	/* Only whitespace may follow the value. */
	for (size_t i = end; i < len; i++)
		if (strchr(" \t\r\n", buf[i]) == NULL) {
			error_set(err, "JSON parse error: data after the value");
			goto fail;
		}
	json_tokener_free(tok);
	return obj;
fail:
	json_object_put(obj);
	json_tokener_free(tok);
	return NULL;
}

struct json_object *
js_get(struct json_object *obj, const char *key, enum json_type type)
{
	struct json_object *v;

	if (obj == NULL || !json_object_is_type(obj, json_type_object))
		return NULL;
	if (!json_object_object_get_ex(obj, key, &v))
		return NULL;
	if (!json_object_is_type(v, type))
		return NULL;
	return v;
}

const char *
js_str(struct json_object *obj, const char *key)
{
	struct json_object *v = js_get(obj, key, json_type_string);

	return v == NULL ? NULL : json_object_get_string(v);
}

const char *
js_str_max(struct json_object *obj, const char *key, size_t max)
{
	struct json_object	*v = js_get(obj, key, json_type_string);
	const char		*s;
	size_t			 len;

	if (v == NULL)
		return NULL;
	s = json_object_get_string(v);
	len = (size_t)json_object_get_string_len(v);
	if (len > max || strlen(s) != len)
		return NULL;
	return s;
}

int
js_int(struct json_object *obj, const char *key, long long *out)
{
	struct json_object *v = js_get(obj, key, json_type_int);

	if (v == NULL)
		return -1;
	errno = 0;
	*out = json_object_get_int64(v);
	if (errno != 0)
		return -1;
	/* json-c clamps out-of-range numbers: refuse the clamped extremes. */
	if (*out == INT64_MAX || *out == INT64_MIN)
		return -1;
	return 0;
}

int
js_bool(struct json_object *obj, const char *key, bool *out)
{
	struct json_object *v = js_get(obj, key, json_type_boolean);

	if (v == NULL)
		return -1;
	*out = json_object_get_boolean(v);
	return 0;
}

void
js_set(struct json_object *obj, const char *key, struct json_object *val)
{
	json_object_object_add(obj, key, val);
}

void
js_set_str(struct json_object *obj, const char *key, const char *val)
{
	json_object_object_add(obj, key, json_object_new_string(val));
}

void
js_set_strn(struct json_object *obj, const char *key, const char *val, size_t n)
{
	json_object_object_add(obj, key, json_object_new_string_len(val, (int)n));
}

void
js_set_int(struct json_object *obj, const char *key, long long val)
{
	json_object_object_add(obj, key, json_object_new_int64(val));
}

void
js_set_bool(struct json_object *obj, const char *key, bool val)
{
	json_object_object_add(obj, key, json_object_new_boolean(val));
}

const char *
js_text(struct json_object *obj, size_t *len)
{
	return json_object_to_json_string_length(obj,
	    JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len);
}
