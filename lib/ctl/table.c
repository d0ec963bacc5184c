/*
 * table.c: the one table printer of sandboxctl (ctl/extern.h): a heading
 * line, then a line per row, each column printf-aligned, for every list a
 * command shows to people (audit, clients, tokens, links, keys, signins).
 */
#include <stdio.h>

#include "base/js.h"
#include "ctl/ctl.h"
#include "ctl/extern.h"

#define CELL_DEFAULT	160	/* a cell's buffer when its column names none */

/* One cell: the gap before it (none before the first), then its text. */
static void
cell(const struct ctl_table_col *col, bool first, const char *text)
{
	if (!first)
		printf("%*s", col->gap > 0 ? col->gap : 1, "");
	printf("%*s", col->width, text);
}

void
ctl_table_print(struct json_object *arr, const struct ctl_table *t)
{
	const struct ctl_table_col	*col;
	struct json_object		*o;
	char				 buf[512];
	size_t				 i, n;

	for (col = t->cols; col->head != NULL; col++)
		cell(col, col == t->cols, col->head);
	putchar('\n');
	for (i = 0; i < json_object_array_length(arr); i++) {
		o = json_object_array_get_idx(arr, i);
		for (col = t->cols; col->head != NULL; col++) {
			n = col->size > 0 && col->size <= sizeof(buf) ?
			    col->size : CELL_DEFAULT;
			cell(col, col == t->cols, col->cell(o, col->member, buf,
			    n));
		}
		putchar('\n');
		if (t->after != NULL)
			t->after(o);
	}
}

const char *
ctl_table_str(struct json_object *o, const char *member, char *buf, size_t n)
{
	return ctl_show_str(o, member);
}

const char *
ctl_table_esc(struct json_object *o, const char *member, char *buf, size_t n)
{
	return ctl_show_esc(buf, n, js_str(o, member));
}

const char *
ctl_table_int(struct json_object *o, const char *member, char *buf, size_t n)
{
	snprintf(buf, n, "%lld", ctl_show_int(o, member));
	return buf;
}

const char *
ctl_table_when(struct json_object *o, const char *member, char *buf, size_t n)
{
	return ctl_show_when(buf, n, ctl_show_int(o, member));
}

const char *
ctl_table_bytes(struct json_object *o, const char *member, char *buf, size_t n)
{
	ctl_show_bytes(buf, n, ctl_show_int(o, member));
	return buf;
}

const char *
ctl_table_client(struct json_object *o, const char *member, char *buf,
    size_t n)
{
	const char *name = js_str(o, "client_name");

	return ctl_show_esc(buf, n, name != NULL ? name : js_str(o, "client_id"));
}
