/*
 * sandbox/muxin.h: the mux's frames from the supervisor (frames.h, "The
 * mux"), read by the preview program's channel into its streams
 * (sandbox/portconn.c). Hostile bytes: the container's root may write
 * anything on that stdout. Every frame is bounded by supf_feed, and a
 * stream never holds more than SUPF_MUX_WINDOW bytes of it, nor takes
 * credit past SUPF_MUX_WINDOW: a supervisor that tries breaks its own
 * channel, never the server.
 *
 * Not thread-safe: the caller holds the lock that guards the streams.
 */
#ifndef CS_SANDBOX_MUXIN_H
#define CS_SANDBOX_MUXIN_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "supervisor/frames.h"

struct mux_stream {
	struct mux_stream	*next;
	uint32_t		 id;
	int			 answer;	/* 0 until 'N': '+', '-' or 'L' */
	bool			 lane;		/* opened with a key: 'L' allowed */
	bool			 ended;		/* 'Z', or the channel ended */
	bool			 shut;		/* ours: its frames are dropped */
	/*
	 * A ring of qcap bytes, grown as bytes come (never past
	 * SUPF_MUX_WINDOW): an idle stream holds none.
	 */
	unsigned char		*q;
	size_t			 qcap, qoff, qlen;
	bool			 inited;	/* muxin_stream_init ran */
	uint32_t		 credit;	/* bytes we may still send */
	pthread_cond_t		 cond;		/* signalled on every change */
};

struct mux_in {
	struct mux_stream	*streams;
	struct supf		 frames;
	bool			 ready;		/* 'V' came */
};

void	muxin_init(struct mux_in *);
void	muxin_free(struct mux_in *);
/*
 * Feed bytes of the supervisor's stdout (after the engine's frames). 0, or
 * -1 once the channel is broken (malformed, out of order, past a window);
 * the parser then stays failed.
 */
int	muxin_feed(struct mux_in *, const void *buf, size_t len);
/*
 * A stream's new state for id: an empty ring, full credit; 0, or -1 when
 * it cannot be had. Linked in first, unlinked by muxin_unlink.
 */
int	muxin_stream_init(struct mux_stream *, uint32_t id);
void	muxin_link(struct mux_in *, struct mux_stream *);
void	muxin_unlink(struct mux_in *, struct mux_stream *);
void	muxin_stream_free(struct mux_stream *);
/*
 * Take up to len queued bytes into buf. The count (the caller grants it
 * back to the supervisor).
 */
size_t	muxin_take(struct mux_stream *, void *buf, size_t len);

#endif
