/* feed.c - the stacks trie built on a thread of its own (feed.h).
 *
 * A stack in a chunk: struct ent, then n + 1 frames (the root first), then
 * the n + 1 path hashes the trie finds its nodes by
 * (kf_stacks_path_hashes), padded to 8 bytes.
 */
#include "feed.h"

#include <stdlib.h>
#include <string.h>

#include "kfold.h"

struct ent {
	uint64_t weight;
	uint32_t n;                   /* frames after the root */
	uint32_t thread;              /* index in the tsums, or
					 KF_FEED_NO_THREAD */
};

_Static_assert(sizeof(struct ent) % 8 == 0 && sizeof(struct kf_frame) % 8 == 0,
	       "a chunk's stacks stay 8-byte aligned");
_Static_assert(sizeof(struct ent) + (KF_FEED_MAX_FRAMES + 1) * (sizeof(struct kf_frame) + 4) + 4 <=
	       KF_CHUNKQ_CHUNK, "the longest stack fits a chunk");

static size_t hashes_size(size_t n)
{
	return ((n + 1) * sizeof(uint32_t) + 7) & ~(size_t)7;
}

static size_t ent_size(size_t n)
{
	return sizeof(struct ent) + (n + 1) * sizeof(struct kf_frame) + hashes_size(n);
}

/* With thread sums, a stack's thread entry is added after the next
 * stack's walk: its slot, asked for before that walk, is then in the
 * cache (a miss of its own each time otherwise).  The last one of a chunk
 * is added at its end: the order of the additions stays the pushes'.
 * Likewise, before this stack's walk, the trie's entry for the stack
 * three further on (kf_stacks_path's recent stacks) is asked for; the
 * stack two further on, whose entry came in meanwhile, has its path's
 * slots asked for when the entry does not hold it; and the next stack,
 * whose slots came in, the nodes they name: its walk then waits for
 * none of the three.  The pusher hashes the frames, which it has at
 * hand: the walking thread is the busier of the two. */

/* The stack at p: its frames (the root first), path hashes and count;
 * returns the one after it. */
static const unsigned char *stack_at(const unsigned char *p, const struct kf_frame **frames,
				     const uint32_t **hashes, struct ent *e)
{
	memcpy(e, p, sizeof(*e));
	/* every size in a chunk is a multiple of 8 and the chunk is
	 * malloc's: the frames and hashes are aligned; memcpy gave them
	 * their types */
	*frames = (const struct kf_frame *)(const void *)(p + sizeof(*e));
	*hashes = (const uint32_t *)(const void *)(p + sizeof(*e) +
						  (e->n + 1) * sizeof(struct kf_frame));
	return p + ent_size(e->n);
}

static void walk_chunk(void *ctx, const unsigned char *p, size_t len)
{
	struct kf_feed *f = ctx;
	const unsigned char *end = p + len;
	uint32_t pend_node = 0, pend_thread = 0;
	uint64_t pend_weight = 0;
	/* read once a chunk, not once a stack: the flag shares its cache
	 * line with what the pushing thread writes for every stack, and
	 * reading it here each time made each of those writes a miss */
	bool failed = atomic_load_explicit(&f->failed, memory_order_relaxed);
	struct ent e, ne;
	const struct kf_frame *frames, *nf;
	const uint32_t *h, *nh;
	const unsigned char *q;
	int k;

	if (failed || p >= end)
		return;
	/* the first three stacks' recent entries, the first two's slots,
	 * the first one's nodes (each as it will be asked for below) */
	for (q = p, k = 0; q < end && k < 3; k++) {
		q = stack_at(q, &nf, &nh, &ne);
		kf_stacks_prefetch(f->stacks, nh, ne.n);
	}
	for (q = p, k = 0; q < end && k < 2; k++) {
		q = stack_at(q, &nf, &nh, &ne);
		kf_stacks_prefetch_path(f->stacks, nh, ne.n);
	}
	stack_at(p, &nf, &nh, &ne);
	kf_stacks_prefetch_nodes(f->stacks, nh, ne.n);
	while (p < end) {
		uint32_t node;

		p = stack_at(p, &frames, &h, &e);
		/* the next stack's nodes, the slots of the one after, the
		 * entry of the one after that */
		for (q = p, k = 0; q < end && k < 3; k++) {
			q = stack_at(q, &nf, &nh, &ne);
			if (k == 0)
				kf_stacks_prefetch_nodes(f->stacks, nh, ne.n);
			else if (k == 1)
				kf_stacks_prefetch_path(f->stacks, nh, ne.n);
			else
				kf_stacks_prefetch(f->stacks, nh, ne.n);
		}
		node = kf_stacks_path_hashed(f->stacks, h, &frames[0], frames + 1, e.n);
		if (!node || !kf_stacks_add(f->stacks, node, e.weight) ||
		    (pend_node && !kf_tsums_add(f->tsums, pend_node, pend_thread, pend_weight))) {
			failed = true;
			break;
		}
		pend_node = 0;
		if (f->tsums && e.thread != KF_FEED_NO_THREAD) {
			kf_tsums_prefetch(f->tsums, node, e.thread);
			pend_node = node;
			pend_thread = e.thread;
			pend_weight = e.weight;
		}
	}
	if (!failed && pend_node && !kf_tsums_add(f->tsums, pend_node, pend_thread, pend_weight))
		failed = true;
	if (failed)
		atomic_store_explicit(&f->failed, true, memory_order_relaxed);
}

int kf_feed_start(struct kf_feed *f, struct kf_stacks *stacks, struct kf_tsums *tsums,
		  struct kf_work_total *work)
{
	f->stacks = stacks;
	f->tsums = tsums;
	f->pushed = 0;
	atomic_init(&f->failed, false);
	return kf_chunkq_start(&f->q, walk_chunk, f, work);
}

bool kf_feed_push(struct kf_feed *f, const struct kf_frame *root,
		  const struct kf_frame *frames, size_t n, uint64_t weight,
		  uint32_t thread)
{
	struct ent e;
	unsigned char *p;
	size_t need = ent_size(n);

	if (n > KF_FEED_MAX_FRAMES) {
		atomic_store_explicit(&f->failed, true, memory_order_relaxed);
		return false;
	}
	if (atomic_load_explicit(&f->failed, memory_order_relaxed))
		return false;
	p = kf_chunkq_space(&f->q, need);
	memset(&e, 0, sizeof(e));
	e.weight = weight;
	e.n = (uint32_t)n;
	e.thread = thread;
	memcpy(p, &e, sizeof(e));
	memcpy(p + sizeof(e), root, sizeof(*root));
	if (n)
		memcpy(p + sizeof(e) + sizeof(*root), frames, n * sizeof(*frames));
	kf_stacks_path_hashes(root, frames, n, (uint32_t *)(void *)(p + sizeof(e) +
					       (n + 1) * sizeof(*frames)));
	kf_chunkq_commit(&f->q, need);
	f->pushed++;
	return true;
}

int kf_feed_finish(struct kf_feed *f)
{
	if (!f->q.started)
		return 0;
	kf_chunkq_finish(&f->q);
	return atomic_load_explicit(&f->failed, memory_order_relaxed) ? KF_ENOMEM : 0;
}
