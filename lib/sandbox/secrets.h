/*
 * secrets.h: the operator's secrets (base/secret.h, sql/022-secrets.sql),
 * sealed at rest under the installation's key (SANDBOX_SECRETS_KEY) and
 * opened only to write the egress proxy's configuration (sandbox/proxy.h)
 * and to mask values in what reaches the model.
 */
#ifndef CS_SECRETS_H
#define CS_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/secret.h"

struct config;
struct db;
struct mask;

/* One secret; value is NULL unless asked for (then value_len bytes, NUL). */
struct secret {
	char		 name[SECRET_NAME_MAX];
	char		 hosts[SECRET_HOSTS_MAX];
	char		 owner[128];	/* "" for every sandbox */
	char		 header[SECRET_HEADER_MAX];
	char		 tmpl[SECRET_TEMPLATE_MAX];
	char		 basic_user[SECRET_USER_MAX];	/* "" unless Basic */
	long long	 created;
	char		*value;
	size_t		 value_len;
	/*
	 * For an owner's secret in person scope, the owner's sandbox's fixed
	 * address (owneraddr.h) that the proxy adds it for; "" when there is
	 * none: then it is not added at all. Filled by proxy_write.
	 */
	char		 addr[16];
};

struct secrets {
	struct secret	*v;
	size_t		 n;
};

/*
 * Add one: s's words checked again, the value sealed under the key (made
 * when missing and create). ERR_CONFLICT when the name is taken.
 */
int	secrets_add(const struct config *, struct db *, const struct secret *s,
	    const char *value, size_t n, struct error *);
/* Remove one by name. */
enum lookup_result secrets_remove(struct db *, const char *name,
	    struct error *);
/*
 * The secrets, all of them (owner NULL) or those an owner's sandbox has
 * (owner's own and those of every sandbox); with values, opened (a row
 * the key does not open is an error). Free with secrets_free.
 */
int	secrets_load(const struct config *, struct db *, const char *owner,
	    bool values, struct secrets *out, struct error *);
void	secrets_free(struct secrets *);
/* Does the secret s apply to owner's sandbox (NULL: shared scope)? */
bool	secrets_for(const struct secret *s, const char *owner);
/*
 * The mask of every secret's value, for what reaches the model: *out is
 * NULL when there is no secret. -1 when the values cannot be opened (the
 * caller then withholds the text).
 */
int	secrets_mask_load(const struct config *, struct db *, struct mask **out,
	    struct error *);
/* A mask of the values (secrets_load with values), or NULL. */
struct mask *secrets_mask(const struct secrets *);
/*
 * The header's value for s (with its value): the template with "{}"
 * replaced, Basic as base64 of user:value. A new string, or NULL.
 */
char	*secrets_header_value(const struct secret *s);

#endif
