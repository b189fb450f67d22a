/* feed.h - the stacks trie built on a thread of its own.
 *
 * Folding a sample is two pieces of work: finding its frames (decoding,
 * the address spaces, the unwinder) and walking them into the trie.  The
 * feed moves the second onto a worker thread: the reading thread hands
 * each sample's stack (root frame, frames leaf first, weight) to
 * kf_feed_push, and the worker walks the stacks into the trie in the
 * order they were pushed.  So the trie is exactly the one the reading
 * thread would have built (the same nodes with the same ids, the same
 * weights), whatever the machine and however the two threads interleave:
 * output is the same with the feed as without it.
 *
 * Stacks travel in the chunks of a kf_chunkq (chunkq.h): a push copies
 * the stack into the chunk being filled; the reading thread waits only
 * when every chunk is full or being walked, so memory is bounded.
 *
 * The trie belongs to the worker from kf_feed_start to kf_feed_finish:
 * nothing else may read or change it meanwhile.
 *
 * With a table of thread sums (tsums.h) the worker also adds each
 * stack's sample to its thread's entry, in push order too.
 *
 * May use: util, model (stacks, tsums).
 */
#ifndef KF_FEED_H
#define KF_FEED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "chunkq.h"
#include "stacks.h"
#include "tsums.h"
#include "util.h"

/* the most frames one push can carry (a callchain has at most about
 * 2 x 127 + 2: kernel and user parts, perf's --max-stack each) */
#define KF_FEED_MAX_FRAMES 4096u

/* a push's thread when there is no table of thread sums */
#define KF_FEED_NO_THREAD UINT32_MAX

struct kf_feed {
	struct kf_stacks *stacks;     /* borrowed; the worker's until finish */
	struct kf_tsums *tsums;       /* borrowed, NULL; the worker's too */
	struct kf_chunkq q;
	atomic_bool failed;           /* the worker ran out of memory, or a
					 push was refused */
	uint64_t pushed;              /* stacks pushed (the reading thread's) */
};

/* Starts the worker over `stacks` and `tsums` (borrowed; tsums may be
 * NULL).  0, or KF_ENOMEM when the chunks or the thread could not be had
 * (then f holds nothing and the caller builds the trie itself). */
int kf_feed_start(struct kf_feed *f, struct kf_stacks *stacks, struct kf_tsums *tsums,
		  struct kf_work_total *work);

/* Hands one stack over: root, then frames[0 .. n) leaf first, with this
 * weight, of thread (its index in tsums; KF_FEED_NO_THREAD without);
 * what kf_stacks_path, kf_stacks_add and kf_tsums_add do with it happens
 * on the worker.  May wait for the worker to free a chunk.  False when the
 * worker has failed (out of memory) or n > KF_FEED_MAX_FRAMES: then the
 * trie is incomplete and kf_feed_finish says so. */
bool kf_feed_push(struct kf_feed *f, const struct kf_frame *root,
		  const struct kf_frame *frames, size_t n, uint64_t weight,
		  uint32_t thread);

/* Hands over what is left, waits for the worker to walk it and end, and
 * frees the chunks: the trie is the caller's again.  0, or KF_ENOMEM when
 * some stack could not be added (out of memory, or a push refused).
 * Does nothing (0) on a feed that was not started or is finished. */
int kf_feed_finish(struct kf_feed *f);

#endif
