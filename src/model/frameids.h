/* frameids.h - the distinct frames of a trie's nodes, numbered.
 *
 * Naming works per distinct frame, but a trie's nodes repeat their
 * frames: the bench capture's 1.7 million nodes hold 211,000 distinct
 * ones.  Looking every node's frame up in the namer's cache costs a
 * cache miss or three per node, one after the other, on the thread that
 * names.  This numbers the frames of the nodes but the roots in the
 * order they first appear (id order), so a caller
 * that walks the nodes in id order meets each number first at the node
 * where it would have named that frame first, names it there, and
 * elsewhere reads a small array indexed by the number.
 *
 * With jobs > 1 the numbering runs on a thread of its own, ahead of the
 * caller: kf_frameids_get waits until the node asked for is numbered.
 * With jobs 1 kf_frameids_start numbers every node before it returns.
 * The work counted (KF_WORK) is the same either way.  The trie must not
 * change from kf_frameids_start to kf_frameids_finish.
 *
 * May use: util, model (stacks).
 */
#ifndef KF_FRAMEIDS_H
#define KF_FRAMEIDS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacks.h"
#include "util.h"

struct kf_frameids {
	const struct kf_stacks *st;   /* borrowed */
	uint32_t *id;                 /* per node: its frame's number */
	bool own_id;                  /* id is ours to free */
	struct kf_frame *frames;      /* per number: the frame */
	size_t n, cap;                /* numbers given */
	uint64_t *slots;              /* hash << 32 | number + 1; 0: empty */
	size_t nslots;
	_Atomic size_t done;          /* id[1 .. done) are set */
	_Atomic bool failed;          /* out of memory: done stops */
	struct kf_work_total *work;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;            /* done moved, or failed */
	bool threaded, waiting;
};

/* Numbers st's frames, on a thread of its own when jobs > 1 (the
 * thread's work added to `work`; inline when the thread cannot be had).
 * The numbers go to ids[x] for the nodes x that are not roots (NULL: an
 * array of f's own; the roots' entries are left alone): a caller may
 * overwrite ids[x] once it read it.  0 or KF_ENOMEM (then f
 * holds nothing). */
int kf_frameids_start(struct kf_frameids *f, const struct kf_stacks *st, unsigned jobs,
		      struct kf_work_total *work, uint32_t *ids);

/* Node x's frame number (1 <= x < st->n, not a root), waiting for it if need be;
 * *id.  False on ENOMEM: the numbering stopped before x. */
bool kf_frameids_wait(struct kf_frameids *f, size_t x);

static inline bool kf_frameids_get(struct kf_frameids *f, size_t x, uint32_t *id)
{
	if (x >= atomic_load_explicit(&f->done, memory_order_acquire) &&
	    !kf_frameids_wait(f, x))
		return false;
	*id = f->id[x];
	return true;
}

/* Joins the thread (if any) and frees everything. */
void kf_frameids_finish(struct kf_frameids *f);

#endif
