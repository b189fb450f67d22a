/* tsums.h - each stack's samples per thread, kept beside the trie.
 *
 * The reports that tell threads apart (the JSON report's processes,
 * --explain) used to give every thread a root of its own, so the trie
 * held each thread's copy of every path: on a system-wide capture 1.8
 * times the nodes, and every pass over them (naming, classifying,
 * folding lines) that much longer.  With a table of sums the trie keeps
 * one root per comm, and each sample adds to the entry of (the node its
 * stack ends at, its thread).  An entry's sums are those the thread's own
 * node had: the same samples (saturating) and weights (modulo 2^64).
 *
 * The entries are an open-addressed table of themselves (one cache miss
 * a sample where a map to an array of entries took three).
 * kf_tsums_index then moves them into node order (a counting sort; within
 * a node in table order, which is the same for the same additions), for
 * walks that read them front to back, and frees the table.
 *
 * May use: util.
 */
#ifndef KF_TSUMS_H
#define KF_TSUMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

struct kf_tsum {
	uint32_t node;
	uint32_t thread;         /* index in struct kf_tsums' threads */
	uint64_t weight;         /* modulo 2^64, as a node's */
	uint32_t samples;        /* saturates, as a node's; 0: a free slot */
};

/* During a run with a feed (feed.h) the worker adds to the table while
 * the reading thread asks for thread indexes: the two parts are kept a
 * cache line apart, and from what is around the struct.  Sharing one, the
 * worker's every read of v, cap or sorted missed after the reader's
 * every write of last_*: on the bench capture an eighth of the worker's
 * time (196 of its 1,492 samples), for three loads. */
#define KF_TSUMS_APART 64

struct kf_tsums {
	char apart0[KF_TSUMS_APART];
	/* the worker's, during a run */
	struct kf_tsum *v;       /* the table: cap slots, a power of two */
	size_t n, cap;           /* entries, slots */
	struct kf_tsum *sorted;  /* after kf_tsums_index: node k's entries
				    are sorted[start[k] .. start[k + 1]) */
	uint32_t *start;
	size_t n_nodes;          /* start has n_nodes + 1 entries */
	char apart1[KF_TSUMS_APART];
	/* the reading thread's */
	struct kf_tsum_thread {
		int32_t pid, tid;
		uint32_t root;   /* the caller's: given with its first sample */
	} *threads;              /* by thread index */
	size_t n_threads, cap_threads;
	struct kf_map64 thread_ix; /* (u32 pid) << 32 | (u32 tid) -> index */
	uint32_t none_ix;        /* index + 1 of (-1, -1), whose key is the
				    map's empty one; 0: not yet */
	int32_t last_pid, last_tid; /* the last thread asked for ... */
	uint32_t last_ix;        /* ... and its index + 1 (0: none yet) */
	char apart2[KF_TSUMS_APART];
};

void kf_tsums_init(struct kf_tsums *t);
void kf_tsums_fini(struct kf_tsums *t);

/* The index of thread (pid, tid), added if new with `root` (what the
 * caller wants to remember of its first sample: its root); false on
 * ENOMEM. */
bool kf_tsums_thread(struct kf_tsums *t, int32_t pid, int32_t tid, uint32_t root,
		     uint32_t *index);

/* One sample of this weight to (node, thread).  False on ENOMEM, or
 * after kf_tsums_index. */
bool kf_tsums_add(struct kf_tsums *t, uint32_t node, uint32_t thread, uint64_t weight);

/* Starts bringing (node, thread)'s slot into the cache, for a
 * kf_tsums_add of it a little later (the worker does one stack's trie
 * walk in between). */
void kf_tsums_prefetch(const struct kf_tsums *t, uint32_t node, uint32_t thread);

/* The entry of (node, thread), or NULL (always after kf_tsums_index). */
const struct kf_tsum *kf_tsums_find(const struct kf_tsums *t, uint32_t node,
				    uint32_t thread);

/* Puts the entries in node order (nodes below n_nodes; an entry of a node
 * at or above it is a caller's error and left out) and frees the table:
 * after it, only kf_tsums_of reads them.  False on ENOMEM (then the
 * table stays as it was, and no node has entries). */
bool kf_tsums_index(struct kf_tsums *t, size_t n_nodes);

/* Node's entries: *n of them.  None for a node without (or before the
 * index). */
static inline const struct kf_tsum *kf_tsums_of(const struct kf_tsums *t, uint32_t node,
						size_t *n)
{
	if (!t->start || node >= t->n_nodes) {
		*n = 0;
		return NULL;
	}
	*n = t->start[node + 1] - t->start[node];
	return t->sorted + t->start[node];
}

#endif
