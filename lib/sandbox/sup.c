/*
 * sandbox/sup.c: putting the supervisor in the container; see
 * sandbox/sup.h.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <json-c/json.h>

#include "base/crypto.h"
#include "base/js.h"
#include "base/log.h"
#include "engine/docker.h"
#include "engine/tar.h"
#include "sandbox/extern.h"
#include "sandbox/sandbox.h"
#include "sandbox/sup.h"

#define RETRY_S		60	/* after a refused install, try again this late */

#if defined(__x86_64__)
#define BUILD_ARCH	"amd64"
#elif defined(__aarch64__)
#define BUILD_ARCH	"arm64"
#elif defined(__i386__)
#define BUILD_ARCH	"386"
#else
#define BUILD_ARCH	""
#endif

/*
 * One copy per process and container, shared by the process's threads
 * (a process serves several containers with SANDBOX_SCOPE=person).
 */
#define SUP_SLOTS	8

struct slot {
	char	container[128];		/* "" when free */
	char	path[SUP_PATH_MAX];	/* "" when not installed */
	time_t	failed_at;
	char	failure[256];
	char	container_id[72];	/* full Id, at install */
	time_t	used;
};

static pthread_mutex_t	 sup_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot	 slots[SUP_SLOTS];

/* The slot of sb's container, taking the least used one; sup_lock held. */
static struct slot *
slot_of(struct sandbox *sb)
{
	const char	*name = sandbox_container(sb);
	struct slot	*s = NULL;
	int		 i;

	for (i = 0; i < SUP_SLOTS; i++)
		if (strcmp(slots[i].container, name) == 0) {
			s = &slots[i];
			break;
		}
	if (s == NULL) {
		s = &slots[0];
		for (i = 1; i < SUP_SLOTS; i++)
			if (slots[i].used < s->used)
				s = &slots[i];
		memset(s, 0, sizeof(*s));
		snprintf(s->container, sizeof(s->container), "%s", name);
	}
	s->used = time(NULL);
	return s;
}

/* Does the engine run this build's binaries? 0, or -1 with why. */
static int
check_arch(struct sandbox *sb, struct error *err)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*resp = NULL;
	const char		*os, *arch;
	int			 rc = -1;

	if (sandbox_call(sb, "GET", NULL, ok, &resp, "cannot ask the engine's "
	    "version", err, "/version") == -1)
		return -1;
	os = js_str(resp, "Os");
	arch = js_str(resp, "Arch");
	if (os == NULL || strcmp(os, "linux") != 0 || arch == NULL ||
	    BUILD_ARCH[0] == '\0' || strcmp(arch, BUILD_ARCH) != 0)
		error_kind(err, ERR_REFUSED, "the engine runs %.32s/%.32s containers, the "
		    "supervisor is built for linux/%s", os ? os : "?",
		    arch ? arch : "?", BUILD_ARCH[0] ? BUILD_ARCH : "?");
	else
		rc = 0;
	json_object_put(resp);
	return rc;
}

/* A tar holding the binary at path (relative to /), malloc'd. */
static unsigned char *
make_tar(const char *rel, size_t *len)
{
	char		 hdr[TAR_HEADER_MAX];
	long		 h;
	unsigned char	*t;

	/* The one tar header writer (tar.h); the zeroed tail ends the archive. */
	if ((h = tar_header_write(hdr, rel, '0', sup_binary_len,
	    (long long)time(NULL), 0755)) == -1)
		return NULL;
	*len = (size_t)h + sup_binary_len + tar_padding(sup_binary_len) +
	    2 * TAR_BLOCK;
	if ((t = calloc(1, *len)) == NULL)
		return NULL;
	memcpy(t, hdr, (size_t)h);
	memcpy(t + h, sup_binary, sup_binary_len);
	return t;
}

/* Remember the container's full Id (hex), for its host cgroup files. */
static void
container_id(struct sandbox *sb, char *sup_container_id)
{
	static const long	 ok[] = { 200, 0 };
	struct json_object	*resp = NULL;
	struct error		 e;
	const char		*id;

	sup_container_id[0] = '\0';
	if (sandbox_call(sb, "GET", NULL, ok, &resp, "cannot inspect the "
	    "container", &e, "/containers/%s/json", sandbox_container(sb)) == -1)
		return;
	id = js_str(resp, "Id");
	if (id != NULL && strlen(id) == 64 &&
	    strspn(id, "0123456789abcdef") == 64)
		memcpy(sup_container_id, id, 65);
	json_object_put(resp);
}

/* "oom_kill N" from one cgroup file; -1 when unreadable. */
static long long
oom_from(const char *path)
{
	char		 line[128];
	long long	 v = -1;
	FILE		*f;

	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "oom_kill ", 9) == 0)
			v = strtoll(line + 9, NULL, 10);
	fclose(f);
	return v;
}

long long
sup_host_oom_count(struct sandbox *sb)
{
	/* Before and after the Id: cgroup v2 and v1, systemd and cgroupfs. */
	static const char *const where[][2] = {
		{ "/sys/fs/cgroup/system.slice/docker-", ".scope/memory.events" },
		{ "/sys/fs/cgroup/docker/", "/memory.events" },
		{ "/sys/fs/cgroup/memory/docker/", "/memory.oom_control" },
		{ "/sys/fs/cgroup/memory/system.slice/docker-",
		    ".scope/memory.oom_control" },
	};
	static int	 found = -1;	/* the layout that answered last */
	char		 id[72], path[256];
	struct slot	*s;
	long long	 v;
	int		 i, n = (int)(sizeof(where) / sizeof(where[0])), at;

	if (strncmp(docker_host(sandbox_docker(sb)), "unix://", 7) != 0)
		return -1;
	pthread_mutex_lock(&sup_lock);
	s = slot_of(sb);
	memcpy(id, s->container_id, sizeof(id));
	pthread_mutex_unlock(&sup_lock);
	if (id[0] == '\0')
		return -1;
	pthread_mutex_lock(&sup_lock);
	at = found;
	pthread_mutex_unlock(&sup_lock);
	/* The one that answered last first: the others fail in the same way. */
	for (i = at >= 0 ? -1 : 0; i < n; i++) {
		int k = i < 0 ? at : i;

		if (i == at)
			continue;
		snprintf(path, sizeof(path), "%s%s%s", where[k][0], id,
		    where[k][1]);
		if ((v = oom_from(path)) >= 0) {
			pthread_mutex_lock(&sup_lock);
			found = k;
			pthread_mutex_unlock(&sup_lock);
			return v;
		}
	}
	return -1;
}

/* Upload a fresh copy; its absolute path into out. */
static int
install(struct sandbox *sb, char *out, char *sup_container_id,
    struct error *err)
{
	unsigned char	*tar = NULL;
	char		 tok[40], rel[SUP_PATH_MAX - 1], url[300];
	size_t		 len;
	long		 status;
	int		 rc = -1;

	if (check_arch(sb, err) == -1)
		return -1;
	if (crypto_token(tok, sizeof(tok), 12) == -1)
		return error_set(err, "no randomness for the supervisor's path");
	snprintf(rel, sizeof(rel), "run/code-sandbox/sup-%s/supervisor", tok);
	snprintf(url, sizeof(url), "/containers/%s/archive?path=/",
	    sandbox_container(sb));
	if ((tar = make_tar(rel, &len)) == NULL)
		return error_set(err, "out of memory");
	if (docker_upload(sandbox_docker(sb), url, tar, len, &status,
	    err) == -1)
		goto out;
	if (status != 200) {
		/*
		 * err holds the engine's message; 404/409 (no container, not
		 * running) keep their status; any other answer is a refusal.
		 */
		if (status != 404 && status != 409)
			err->kind = ERR_REFUSED;
		goto out;
	}
	container_id(sb, sup_container_id);
	snprintf(out, SUP_PATH_MAX, "/%s", rel);
	log_info("supervisor installed in container %s at %s",
	    sandbox_container(sb), out);
	rc = 0;
out:
	free(tar);
	return rc;
}

int
sup_ensure(struct sandbox *sb, char *path, struct error *err)
{
	struct slot	*s;
	int		 rc = -1;

	pthread_mutex_lock(&sup_lock);
	s = slot_of(sb);
	if (s->path[0] != '\0') {
		memcpy(path, s->path, SUP_PATH_MAX);
		rc = 0;
	} else if (s->failed_at != 0 && time(NULL) - s->failed_at < RETRY_S) {
		error_set(err, "%s", s->failure);
	} else if (install(sb, s->path, s->container_id, err) == 0) {
		memcpy(path, s->path, SUP_PATH_MAX);
		s->failed_at = 0;
		rc = 0;
	} else if (err->kind == ERR_REFUSED) {
		/*
		 * The engine said no (another architecture, the upload
		 * refused): fall back for a while. An engine that did not
		 * answer, or a container that is not there, is no reason to
		 * stop trying at the next call.
		 */
		err->kind = ERR_UPSTREAM;
		log_warn("supervisor not installed, running commands without "
		    "it: %s", err->msg);
		snprintf(s->failure, sizeof(s->failure), "%.200s", err->msg);
		s->failed_at = time(NULL);
	}
	pthread_mutex_unlock(&sup_lock);
	return rc;
}

void
sup_forget(const char *path)
{
	int i;

	pthread_mutex_lock(&sup_lock);
	for (i = 0; i < SUP_SLOTS; i++)
		if (strcmp(slots[i].path, path) == 0)
			slots[i].path[0] = '\0';
	pthread_mutex_unlock(&sup_lock);
}
