/*
 * test_chan_owner: a channel to one container's supervisor never carries
 * another container's frame. chan_get returns a channel unlocked; while
 * every other channel is busy, a call for a second container takes the
 * first one's idle channel over, and the first caller, resuming, must be
 * refused (it then runs its command without the channel) rather than send
 * its command to the second container.
 *
 * The engine is stubbed below (this file includes sandbox/chan.c, and its
 * definitions come first at link time: see the Makefile).
 */
#include <unistd.h>

#include "check.h"
#include "../../lib/sandbox/chan.c"

struct docker_conn {
	char	container[64];
	bool	sent_v, down;
};

static const char	*attaching;	/* container of the exec being attached */
static char		 sent_to[64];	/* where the last 'r' frame went */

const char *
sandbox_container(const struct sandbox *sb)
{
	return sb->container;
}

struct docker *
sandbox_docker(struct sandbox *sb)
{
	(void)sb;
	return NULL;
}

int
sandbox_exec_create(struct sandbox *sb, struct json_object *cmd, int how,
    char **id, struct error *err)
{
	(void)cmd;
	(void)how;
	(void)err;
	attaching = sb->container;
	*id = strdup("exec");
	return 0;
}

int
docker_exec_attach(struct docker *d, const char *id, struct docker_conn **out,
    struct error *err)
{
	(void)d;
	(void)id;
	if ((*out = calloc(1, sizeof(**out))) == NULL)
		return error_set(err, "out of memory");
	snprintf((*out)->container, sizeof((*out)->container), "%s", attaching);
	return 0;
}

long
docker_conn_recv(struct docker_conn *dc, void *buf, size_t len, int wait_ms)
{
	/* An engine frame (stream 1) holding the supervisor's 'V' frame. */
	static const unsigned char v[] = { 1, 0, 0, 0, 0, 0, 0, 12,
	    'V', 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 1 };

	(void)len;
	(void)wait_ms;
	if (dc->down)
		return -1;
	if (!dc->sent_v) {
		dc->sent_v = true;
		memcpy(buf, v, sizeof(v));
		return sizeof(v);
	}
	usleep(20000);
	return 0;
}

int
docker_conn_send(struct docker_conn *dc, const void *buf, size_t len,
    long long deadline_ms, struct error *err)
{
	const unsigned char *p = buf;

	(void)deadline_ms;
	if (dc->down)
		return error_set(err, "down");
	if (len > 0 && p[0] == 'r')
		snprintf(sent_to, sizeof(sent_to), "%s", dc->container);
	return 0;
}

void
docker_conn_shutdown(struct docker_conn *dc)
{
	if (dc != NULL)
		dc->down = true;
}

void
docker_conn_close(struct docker_conn *dc)
{
	free(dc);
}

bool
docker_stopping(void)
{
	return false;
}

void
guard_stale(const char *container)
{
	(void)container;
}

void
sup_forget(const char *path)
{
	(void)path;
}

int
sup_ensure(struct sandbox *sb, char *path, struct error *err)
{
	(void)sb;
	(void)path;
	return error_set(err, "no supervisor here");
}

int
main(void)
{
	struct sandbox	 bob = { .container = "cs-bob" };
	struct sandbox	 alice = { .container = "cs-alice" };
	struct sandbox	 o[3] = { { .container = "cs-o1" },
	    { .container = "cs-o2" }, { .container = "cs-o3" } };
	unsigned char	 head[SUPF_HEADER + 1 + SUPF_ID_MAX + 8];
	struct waiter	 busy, w;
	struct chan	*c, *c2;
	struct error	 e;
	size_t		 hlen;
	int		 i;

	memset(&busy, 0, sizeof(busy));
	/* Three channels held by runs in other containers. */
	for (i = 0; i < 3; i++)
		CHECK(chan_get(&o[i], "/sup") != NULL, "a channel each");
	for (i = 0; i < CHAN_MAX; i++)
		if (chans[i].container[0] != '\0')
			chans[i].waiters = &busy;

	/* Bob's call gets his channel, and is preempted before its waiter. */
	c = chan_get(&bob, "/sup");
	CHECK(c != NULL && strcmp(c->container, "cs-bob") == 0,
	    "bob's call gets bob's channel");
	if (c == NULL)
		return check_status();
	/* Alice's call takes the idle channel over. */
	c2 = chan_get(&alice, "/sup");
	CHECK(c2 == c && strcmp(c->container, "cs-alice") == 0,
	    "alice's call takes the idle channel over");

	/* Bob's call resumes: refused, so nothing of his reaches alice. */
	CHECK(waiter_add(c, &bob, &w, "run-of-bob", 'r') == -1,
	    "a waiter for another container's channel is refused");
	/* Alice's own call goes through, to her container. */
	if (waiter_add(c, &alice, &w, "run-of-alice", 'r') == 0) {
		hlen = supf_tag_header('r', "run-of-alice", 8 + 5, head);
		CHECK(send_frame(c, head, hlen + 8, "id -u", 5, &e) == 0 &&
		    strcmp(sent_to, "cs-alice") == 0,
		    "alice's frame reaches alice's supervisor");
		waiter_remove(c, &w);
	} else
		CHECK(0, "alice's waiter is taken");
	return check_status();
}
