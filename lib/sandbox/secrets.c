/* secrets.c: see secrets.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/config.h"
#include "base/crypto.h"
#include "base/secret.h"
#include "sandbox/secrets.h"
#include "store/db.h"
#include "store/db_secrets.h"

/*
 * The key: CRYPTO_SEAL_KEY bytes in SANDBOX_SECRETS_KEY, mode 600, made
 * once with O_EXCL when create (two makers race: one wins, the other
 * reads its key).
 */
static int
key_read(const struct config *cfg, bool create, uint8_t key[CRYPTO_SEAL_KEY],
    struct error *err)
{
	struct stat	 st;
	ssize_t		 r;
	size_t		 got = 0;
	int		 fd;

	if ((fd = open(cfg->secrets_key, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) ==
	    -1 && errno == ENOENT && create) {
		if (crypto_random(key, CRYPTO_SEAL_KEY) == -1)
			return error_set(err, "secrets: no random bytes");
		fd = open(cfg->secrets_key, O_WRONLY | O_CREAT | O_EXCL |
		    O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd != -1) {
			struct stat dbst;

			/*
			 * Made by root (sandboxctl): the programs, which run as
			 * the owner of the database, read it too.
			 */
			if (geteuid() == 0 && cfg->db_path != NULL &&
			    stat(cfg->db_path, &dbst) == 0 &&
			    fchown(fd, dbst.st_uid, dbst.st_gid) == -1) {
				close(fd);
				unlink(cfg->secrets_key);
				return error_set(err, "secrets: cannot give the "
				    "key file to the database's owner");
			}
			if (write(fd, key, CRYPTO_SEAL_KEY) != CRYPTO_SEAL_KEY ||
			    fsync(fd) == -1) {
				close(fd);
				unlink(cfg->secrets_key);
				crypto_wipe(key, CRYPTO_SEAL_KEY);
				return error_set(err, "secrets: cannot write the "
				    "key file %s", cfg->secrets_key);
			}
			close(fd);
			return 0;
		}
		if (errno == EEXIST)
			fd = open(cfg->secrets_key, O_RDONLY | O_CLOEXEC |
			    O_NOFOLLOW);
	}
	if (fd == -1)
		return error_set(err, "secrets: cannot read the key file %s: %s",
		    cfg->secrets_key, errno == ENOENT ? "missing (no secret "
		    "was ever added with this file)" : strerror(errno));
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_mode & 077) != 0) {
		close(fd);
		return error_set(err, "secrets: the key file %s is not a file of "
		    "mode 600", cfg->secrets_key);
	}
	while (got < CRYPTO_SEAL_KEY) {
		if ((r = read(fd, key + got, CRYPTO_SEAL_KEY - got)) <= 0) {
			if (r == -1 && errno == EINTR)
				continue;
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (got != CRYPTO_SEAL_KEY || st.st_size != CRYPTO_SEAL_KEY) {
		crypto_wipe(key, CRYPTO_SEAL_KEY);
		return error_set(err, "secrets: the key file %s is not %d bytes",
		    cfg->secrets_key, CRYPTO_SEAL_KEY);
	}
	return 0;
}

int
secrets_add(const struct config *cfg, struct db *db, const struct secret *s,
    const char *value, size_t n, struct error *err)
{
	uint8_t		 key[CRYPTO_SEAL_KEY];
	unsigned char	 sealed[SECRET_VALUE_MAX + CRYPTO_SEAL_OVERHEAD];
	char		 hosts[SECRET_HOSTS_MAX], hn[SECRET_HEADER_MAX];
	char		 tmpl[SECRET_TEMPLATE_MAX], opt[SECRET_HEADER_MAX +
			    SECRET_TEMPLATE_MAX + 2];
	long		 len, rc;

	if (secret_name_check(s->name, err) == -1 ||
	    secret_value_check(value, n, err) == -1 ||
	    secret_hosts_check(s->hosts, hosts, sizeof(hosts), err) == -1)
		return -1;
	snprintf(opt, sizeof(opt), "%s: %s", s->header, s->tmpl);
	if (secret_header_check(opt, hn, tmpl, err) == -1)
		return -1;
	if (s->basic_user[0] != '\0' &&
	    secret_user_check(s->basic_user, err) == -1)
		return -1;
	if (key_read(cfg, true, key, err) == -1)
		return -1;
	len = crypto_seal(key, s->name, strlen(s->name), value, n, sealed,
	    sizeof(sealed));
	crypto_wipe(key, sizeof(key));
	if (len == -1)
		return error_set(err, "secrets: cannot seal the value");
	rc = db_exec(db, STMT_SECRET_ADD, "ttttttbi", s->name, hosts,
	    s->owner[0] != '\0' ? s->owner : NULL, hn, tmpl,
	    s->basic_user[0] != '\0' ? s->basic_user : NULL,
	    (const void *)sealed, (size_t)len, (long long)time(NULL));
	crypto_wipe(sealed, sizeof(sealed));
	if (rc == -1)
		return error_kind(err, ERR_CONFLICT, "a secret named %s exists "
		    "(remove it first), or the database refused it", s->name);
	return 0;
}

enum lookup_result
secrets_remove(struct db *db, const char *name, struct error *err)
{
	long	 n;

	if ((n = db_exec(db, STMT_SECRET_DELETE, "t", name)) == -1) {
		error_set(err, "secrets: the database refused the removal");
		return LOOKUP_ERROR;
	}
	return n > 0 ? LOOKUP_FOUND : LOOKUP_NONE;
}

bool
secrets_for(const struct secret *s, const char *owner)
{
	return s->owner[0] == '\0' ||
	    (owner != NULL && strcmp(s->owner, owner) == 0);
}

/* Copy src into dst (n bytes): -1 when it does not fit. */
static int
put(char *dst, size_t n, const char *src)
{
	if (src == NULL) {
		dst[0] = '\0';
		return 0;
	}
	return snprintf(dst, n, "%s", src) >= (int)n ? -1 : 0;
}

int
secrets_load(const struct config *cfg, struct db *db, const char *owner,
    bool values, struct secrets *out, struct error *err)
{
	struct db_q	*q;
	struct db_secret row;
	struct secret	*s, *t;
	uint8_t		 key[CRYPTO_SEAL_KEY];
	enum db_step	 st;
	long		 len;
	bool		 keyed = false;
	int		 rc = -1;

	memset(out, 0, sizeof(*out));
	if ((q = db_query(db, STMT_SECRET_LIST, "")) == NULL)
		return error_set(err, "secrets: cannot read the database");
	while ((st = db_secret_next(q, &row)) == DB_ROW) {
		if ((t = reallocarray(out->v, out->n + 1, sizeof(*t))) == NULL) {
			error_set(err, "secrets: out of memory");
			goto out;
		}
		out->v = t;
		s = &out->v[out->n];
		memset(s, 0, sizeof(*s));
		if (put(s->name, sizeof(s->name), row.name) == -1 ||
		    put(s->hosts, sizeof(s->hosts), row.hosts) == -1 ||
		    put(s->owner, sizeof(s->owner), row.owner) == -1 ||
		    put(s->header, sizeof(s->header), row.header) == -1 ||
		    put(s->tmpl, sizeof(s->tmpl), row.tmpl) == -1 ||
		    put(s->basic_user, sizeof(s->basic_user),
		    row.basic_user) == -1) {
			error_set(err, "secrets: a row is longer than allowed");
			goto out;
		}
		s->created = row.created;
		if (owner != NULL && !secrets_for(s, owner))
			continue;
		out->n++;
		if (!values)
			continue;
		if (!keyed) {
			if (key_read(cfg, false, key, err) == -1)
				goto out;
			keyed = true;
		}
		if ((s->value = malloc(row.sealed_len + 1)) == NULL) {
			error_set(err, "secrets: out of memory");
			goto out;
		}
		len = crypto_open(key, s->name, strlen(s->name), row.sealed,
		    row.sealed_len, s->value, row.sealed_len);
		if (len < SECRET_VALUE_MIN) {
			error_set(err, "secrets: the key in %s does not open "
			    "the secret %s (another installation's key?)",
			    cfg->secrets_key, s->name);
			goto out;
		}
		s->value[len] = '\0';
		s->value_len = (size_t)len;
	}
	if (st == DB_ERROR)
		error_set(err, "secrets: cannot read the database");
	else
		rc = 0;
out:
	db_done(q);
	if (keyed)
		crypto_wipe(key, sizeof(key));
	if (rc == -1)
		secrets_free(out);
	return rc;
}

void
secrets_free(struct secrets *ss)
{
	size_t	 i;

	for (i = 0; i < ss->n; i++)
		if (ss->v[i].value != NULL) {
			crypto_wipe(ss->v[i].value, ss->v[i].value_len);
			free(ss->v[i].value);
		}
	/* Those counted out by owner never had a value. */
	free(ss->v);
	ss->v = NULL;
	ss->n = 0;
}

struct mask *
secrets_mask(const struct secrets *ss)
{
	struct mask	*m;
	size_t		 i;
	char		*hv;

	if ((m = mask_new()) == NULL)
		return NULL;
	for (i = 0; i < ss->n; i++) {
		if (ss->v[i].value == NULL)
			continue;
		if (mask_add(m, ss->v[i].name, ss->v[i].value,
		    ss->v[i].value_len) == -1)
			goto fail;
		/* Basic's user:value, Base64 in the header. */
		if (ss->v[i].basic_user[0] != '\0') {
			if ((hv = secrets_header_value(&ss->v[i])) == NULL)
				goto fail;
			if (strlen(hv) > 6 + SECRET_VALUE_MIN)
				mask_add(m, ss->v[i].name, hv + 6,
				    strlen(hv + 6));
			crypto_wipe(hv, strlen(hv));
			free(hv);
		}
	}
	return m;
fail:
	mask_free(m);
	return NULL;
}

char *
secrets_header_value(const struct secret *s)
{
	char		*out, *pair, *b;
	const char	*brace;
	size_t		 n;

	if (s->value == NULL)
		return NULL;
	if (s->basic_user[0] != '\0') {
		n = strlen(s->basic_user) + 1 + s->value_len;
		if ((pair = malloc(n + 1)) == NULL)
			return NULL;
		snprintf(pair, n + 1, "%s:%s", s->basic_user, s->value);
		if ((b = malloc(6 + 4 * ((n + 2) / 3) + 1)) == NULL) {
			crypto_wipe(pair, n);
			free(pair);
			return NULL;
		}
		memcpy(b, "Basic ", 6);
		crypto_b64_encode(pair, n, b + 6);
		crypto_wipe(pair, n);
		free(pair);
		return b;
	}
	if ((brace = strstr(s->tmpl, "{}")) == NULL)
		return NULL;
	n = strlen(s->tmpl) - 2 + s->value_len;
	if ((out = malloc(n + 1)) == NULL)
		return NULL;
	snprintf(out, n + 1, "%.*s%s%s", (int)(brace - s->tmpl), s->tmpl,
	    s->value, brace + 2);
	return out;
}

int
secrets_mask_load(const struct config *cfg, struct db *db, struct mask **out,
    struct error *err)
{
	struct secrets	 ss;

	*out = NULL;
	if (secrets_load(cfg, db, NULL, true, &ss, err) == -1)
		return -1;
	if (ss.n > 0 && (*out = secrets_mask(&ss)) == NULL) {
		secrets_free(&ss);
		return error_set(err, "secrets: out of memory");
	}
	secrets_free(&ss);
	return 0;
}
