/*
 * secret.h: the words of a secret the operator defines (sandboxctl secrets,
 * docs/secrets.md) checked, and its value masked in text that reaches the
 * model.
 *
 * A secret has a name, the hosts whose HTTPS requests carry it, an owner
 * (person scope) or none (every sandbox), and a presentation: a header
 * name and a template with one "{}" where the value goes (default
 * "Authorization: Bearer {}"), or HTTP Basic with a user name. Its value
 * is 8 to SECRET_VALUE_MAX bytes of printable ASCII.
 */
#ifndef CS_SECRET_H
#define CS_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"

#define SECRET_NAME_MAX		64	/* with the NUL */
#define SECRET_VALUE_MIN	8
#define SECRET_VALUE_MAX	4096
#define SECRET_HOSTS_MAX	1024	/* the list, with the NUL */
#define SECRET_HOSTS_COUNT	16
#define SECRET_HOST_MAX		254	/* one name, with the NUL */
#define SECRET_HEADER_MAX	64	/* a header's name, with the NUL */
#define SECRET_TEMPLATE_MAX	256	/* a template, with the NUL */
#define SECRET_USER_MAX		128	/* a Basic user, with the NUL */

/* A name: a letter, then letters, digits, '_' or '-'. */
int	secret_name_check(const char *name, struct error *);
/* A value of n bytes: SECRET_VALUE_MIN..MAX bytes, printable ASCII. */
int	secret_value_check(const char *v, size_t n, struct error *);
/*
 * A host name (lower-case letters, digits, '-', labels of 1..63, at least
 * two labels, no address); with wildcard a leading "*." is allowed too.
 */
bool	secret_host_valid(const char *host, bool wildcard);
/*
 * A comma-separated list of hosts (secret_host_valid without wildcards,
 * upper case folded, no repeats) into out, normalised.
 */
int	secret_hosts_check(const char *list, char *out, size_t n,
	    struct error *);
/*
 * A header option "Name: template": the name (an HTTP token) into name,
 * the template (printable ASCII with "{}" exactly once) into tmpl.
 */
int	secret_header_check(const char *opt, char name[SECRET_HEADER_MAX],
	    char tmpl[SECRET_TEMPLATE_MAX], struct error *);
/* A Basic user: printable ASCII without ':', 1..SECRET_USER_MAX - 1 bytes. */
int	secret_user_check(const char *user, struct error *);

/*
 * Masking: a set of values, each with its name; every occurrence of a
 * value, of its Base64 forms (standard and URL-safe, at all three
 * alignments, the characters that depend on the value alone) and of its
 * percent-encoded form is replaced with "[secret NAME]".
 */
struct mask;

struct mask	*mask_new(void);
void		 mask_free(struct mask *);
/* Add a value (n bytes, at least SECRET_VALUE_MIN) under name. 0 or -1. */
int		 mask_add(struct mask *, const char *name, const void *v,
		    size_t n);
/* How many values it holds. */
size_t		 mask_count(const struct mask *);
/*
 * Mask the n bytes of in: a new NUL-terminated buffer (its length in
 * *outlen), or NULL when out of memory. A NULL or empty mask copies.
 * Linear in n for each pattern (memmem).
 */
char		*mask_apply(const struct mask *, const char *in, size_t n,
		    size_t *outlen);
/*
 * The same for text whose middle was cut (base/output.h's capture_text,
 * "[... N bytes cut ...]"): a value the cut split leaves a piece at the end
 * of the head and one at the start of the tail; pieces of at least
 * MASK_PIECE_MIN bytes that begin or end a value there are masked too.
 */
#define MASK_PIECE_MIN	4
char		*mask_apply_cut(const struct mask *, const char *in, size_t n,
		    size_t *outlen);
/* Mask a NUL-terminated string in place of itself: *s replaced. 0 or -1. */
int		 mask_string(const struct mask *, char **s);

/*
 * A stream of reads: a value split across two reads is still masked. The
 * last bytes that could begin a value are held back until the next feed
 * or the end.
 */
struct mask_stream;

struct mask_stream *mask_stream_new(const struct mask *);
/*
 * Feed n bytes; what can be let through is a new buffer in *out (*outlen
 * bytes, possibly 0), to be freed. 0, or -1 out of memory.
 */
int		 mask_stream_feed(struct mask_stream *, const char *in,
		    size_t n, char **out, size_t *outlen);
/* The bytes held back, masked; the stream is then empty. */
int		 mask_stream_end(struct mask_stream *, char **out,
		    size_t *outlen);
void		 mask_stream_free(struct mask_stream *);

#endif
