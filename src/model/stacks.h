/* stacks.h - distinct call stacks, interned as a trie, with their weights.
 *
 * A stack is a root frame (the process or thread it is charged to) and
 * raw frames from the outermost to the leaf.  Each distinct prefix is one
 * node (parent, frame), so memory grows with the number of distinct
 * stacks, never with the number of samples.  Frames are raw (module and
 * address); naming them is a later stage's job.  Root frames refer to
 * a table of roots (struct kf_roots) and pseudo-frames carry a kind.
 *
 * May use: util.
 */
#ifndef KF_STACKS_H
#define KF_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Frame flags.  The flags say which kind of frame a kf_frame is, and so
 * which member of its union is meaningful. */
#define KF_FRAME_KERNEL  1u   /* looked up in the kernel's maps */
#define KF_FRAME_RA      2u   /* a return address: look up at addr - 1 */
#define KF_FRAME_ROOT    4u   /* the root: `root` is its id in the
				 session's struct kf_roots; addr 0 */
#define KF_FRAME_NOMAP   8u   /* no mapping contained the address */
#define KF_FRAME_GUESSED 16u  /* found by a frame-pointer step where the
				 module had no unwind information */
#define KF_FRAME_FPCHAIN 64u  /* on a root: the user part of the stack
				 came from a frame-pointer callchain */
#define KF_FRAME_TRUNCATED 32u /* marks where the copy of the user stack
				 ran out: the stack goes on, unseen */
#define KF_FRAME_UNWOUND 128u /* --compat=perf: found by unwinding the
				 user stack (perf expands inlines there) */
#define KF_FRAME_STITCHED 512u /* --stitch: an unwound frame taken from
				 an earlier sample of the thread */
#define KF_FRAME_PSEUDO 256u  /* not a code address: a marker such as
				 "[softirq:NET_RX]"; `marker` is its kind
				 (KF_MARKER_*), addr what the kind needs */
#define KF_FRAME_UNMARKED (1u << 16) /* a real frame copied into a stack
				 with context markers (the --context
				 rewrite): its printed text must not read
				 like a marker (folded.h) */

/* Kinds of pseudo-frames (the --context rewrite makes them; context.h
 * says what addr holds for each and how each prints). */
enum kf_marker {
	KF_MARKER_NONE,
	KF_MARKER_CONTEXT,    /* a context's entry: addr = class << 8 | sub */
	KF_MARKER_VERDICT     /* a stack's verdict: addr = verdict << 8 | why */
};

struct kf_frame {
	uint64_t addr;        /* map-relative for mapped user frames (the
				 mapping's file offset space), absolute
				 otherwise */
	union {
		uint32_t module;  /* a code frame: module id (0 = none) */
		uint32_t root;    /* KF_FRAME_ROOT: id in struct kf_roots */
		uint32_t marker;  /* KF_FRAME_PSEUDO: enum kf_marker */
	};
	uint32_t flags;       /* KF_FRAME_* */
};

/* ---- roots ------------------------------------------------------------------
 *
 * What a stack is charged to: its thread's comm and, when the output
 * tells them apart (--pid, --tid) or the kernel-context classifier needs
 * them, its pid and tid; plus what the classifier needs to know about
 * the sample besides its frames (set only when classification is asked
 * for).  Each distinct root is stored once; a root frame holds its id.
 * How a root prints ("comm", "comm-PID", "comm-PID/TID") is the folded
 * emitter's business (folded.h). */
#define KF_ROOT_CTX_USER_PART 1u   /* a user part followed the kernel's */
#define KF_ROOT_CTX_TRUNCATED 2u   /* the chain was cut (max_stack, a user
				      marker without entries) */
#define KF_ROOT_CTX_NO_CHAIN  4u   /* no callchain: the leaf only */
#define KF_ROOT_CTX_KTHREAD   8u   /* the task is a kernel thread */

struct kf_stack_root {
	uint32_t comm;        /* string id in the session's string table: the
				 thread's comm (--compat=perf: the part of
				 perf script's header line stackcollapse
				 reads as the comm) */
	int32_t pid, tid;     /* -1 when stacks are not told apart by them */
	uint8_t ctx;          /* KF_ROOT_CTX_* */
	uint8_t cpumode;      /* the sample's header.misc & 7 (0 unless
				 classifying) */
	uint8_t offcpu;       /* --off-cpu: 1 + the state the thread left
				 its CPU in (enum kf_offcpu_state), printed
				 after the root as "[off-cpu:STATE]"; 0:
				 none */
	uint8_t pad;          /* 0 */
	uint32_t waker;       /* --off-cpu=wakers: 1 + the string id of the
				 comm of the thread whose wakeup ended the
				 wait; 0: none */
	uint32_t cgroup;      /* --cgroup: 1 + the string id of the
				 sample's cgroup path, printed after the
				 root as "[cgroup:PATH]"; 0: none */
};

struct kf_roots {
	struct kf_stack_root *v; /* v[0] unused: id 0 is no root */
	size_t n, cap;
	uint32_t *slots;         /* hash of the root -> id */
	size_t nslots;
};

int kf_roots_init(struct kf_roots *r);
void kf_roots_fini(struct kf_roots *r);

/* The id of root (added if new, compared field by field); 0 on ENOMEM. */
uint32_t kf_roots_intern(struct kf_roots *r, const struct kf_stack_root *root);

static inline const struct kf_stack_root *kf_roots_get(const struct kf_roots *r,
						 uint32_t id)
{
	return &r->v[id];
}

struct kf_node {
	struct kf_frame frame;
	uint64_t weight;      /* sum of weights of stacks ending here */
	uint32_t parent;      /* node id; 0 = none (root frames) */
	uint32_t samples;     /* samples ending here (saturates) */
};

struct kf_stacks {
	struct kf_node *nodes;   /* nodes[0] unused */
	size_t n, cap;
	uint32_t *hashes;        /* each node's path hash (stacks.c) */
	size_t cap_hashes;
	uint64_t *slots;         /* path hash -> node id (the hash above
				    the id) */
	size_t nslots;
	struct kf_pathcache *recent;  /* whole stacks met lately (stacks.c);
				    part of the index */
	/* node -> how many times its weight went past 2^64 - 1 (only a
	 * PERF_SAMPLE_READ counter that went back weighs that much) */
	struct kf_map64 carry;
};

int kf_stacks_init(struct kf_stacks *s);
void kf_stacks_fini(struct kf_stacks *s);

/* Room for `nodes` more nodes in the node arrays, asked for once by a
 * trie that will hold about that many: they are not copied again as it
 * grows, and a large block's pages never filled are never mapped.  A
 * hint: without the room, the trie grows them as it goes. */
void kf_stacks_room(struct kf_stacks *s, size_t nodes);

/* Returns the node for (parent, frame), adding it if new; 0 on ENOMEM. */
uint32_t kf_stacks_child(struct kf_stacks *s, uint32_t parent,
			 const struct kf_frame *f);

/* The node of a whole stack: the root frame, then frames[n - 1] (the
 * outermost) down to frames[0] (the leaf), each added if new; what n + 1
 * calls of kf_stacks_child would give, fetched in parallel, or found at
 * once when the same stack came lately.  0 on ENOMEM (nodes added
 * before it stay). */
uint32_t kf_stacks_path(struct kf_stacks *s, const struct kf_frame *root,
			const struct kf_frame *frames, size_t n);

/* From node `from` (0: the roots' level) down frames[0 .. n), each
 * added if new: nodes[k] is frames[k]'s node, what kf_stacks_child from
 * nodes[k - 1] (from, for k = 0) would give; fetched in parallel as by
 * kf_stacks_path.  False on ENOMEM (nodes added before it stay). */
bool kf_stacks_walk(struct kf_stacks *s, uint32_t from, const struct kf_frame *frames,
		    size_t n, uint32_t *nodes);

/* For a caller with many short walks queued (kf_stacks_walk from
 * `from` by f first): the first asks for from's path hash, the second,
 * once that came in, for the slot the walk probes first, or with `node`,
 * once that came in too, for the node the slot names.  Each only reads,
 * and only asks: called in passes over the queue, each pass's misses
 * are taken together instead of three after the other per walk.  The
 * trie may change between them (a stale guess costs only a miss). */
void kf_stacks_prefetch_parent(const struct kf_stacks *s, uint32_t from);
void kf_stacks_prefetch_child(const struct kf_stacks *s, uint32_t from,
			      const struct kf_frame *f, bool node);

/* kf_stacks_path in two steps, for a caller with a queue of stacks.
 * First the path hashes the stack's nodes are found by: h[0] the root's,
 * h[k] that of frames[n - k] below h[k - 1], for k = 0 .. n (n + 1 of
 * them), which hash the frames alone and read no trie, so another thread
 * can make them.  Then the path with them (h NULL: the walk hashes, and
 * the recent stacks are not used).  Asking for the next stack's
 * recent entry (kf_stacks_prefetch) before walking this one hides the
 * entry's miss. */
void kf_stacks_path_hashes(const struct kf_frame *root, const struct kf_frame *frames,
			   size_t n, uint32_t *h);
uint32_t kf_stacks_path_hashed(struct kf_stacks *s, const uint32_t *h,
			       const struct kf_frame *root, const struct kf_frame *frames,
			       size_t n);
void kf_stacks_prefetch(const struct kf_stacks *s, const uint32_t *h, size_t n);
/* One stack further on: once its recent entry came in, a stack that is
 * not one of them (its entry holds another hash) has the trie's slots
 * of its path asked for, so that its walk starts with them in the
 * cache.  Only reads; the trie must not move meanwhile (same thread). */
void kf_stacks_prefetch_path(const struct kf_stacks *s, const uint32_t *h, size_t n);
/* And one stack later still, once those slots came in: the nodes they
 * name, so that the walk finds both in the cache. */
void kf_stacks_prefetch_nodes(const struct kf_stacks *s, const uint32_t *h, size_t n);

/* For tests of kf_stacks_path's recent stacks (made afresh here): keep
 * only `mask`'s bits of the hash they are found by, so that different
 * stacks share a hash and only their frames tell them apart, and only
 * ring_len of their frames (a power of two, at least 256), so that the
 * ring wraps often; false on ENOMEM or a bad ring_len.  And how many
 * stacks were found there. */
bool kf_stacks_recent_test(struct kf_stacks *s, uint64_t mask, size_t ring_len);
uint64_t kf_stacks_recent_hits(const struct kf_stacks *s);

/* Frees the index that finds a node by (parent, frame), and the stacks
 * kf_stacks_path keeps at hand: the nodes stay and read as before; the
 * next kf_stacks_child or kf_stacks_path rebuilds it (O(nodes)).  For a
 * trie that is complete. */
void kf_stacks_drop_index(struct kf_stacks *s);

/* Makes *dst (initialised here) a copy of src's nodes and weights,
 * without the index: a trie to change in place (kf_stacks_append) while
 * src stays as it is.  0 or KF_ENOMEM (dst is then empty and freed). */
int kf_stacks_copy(struct kf_stacks *dst, const struct kf_stacks *src);

/* Appends node (parent, f) to a trie without index (a copy, or after
 * kf_stacks_drop_index), for a caller that knows no node (parent, f) is
 * there yet: nothing looks that up.  The node's id, or 0 on ENOMEM (or
 * if the trie has its index: use kf_stacks_child there). */
uint32_t kf_stacks_append(struct kf_stacks *s, uint32_t parent,
			  const struct kf_frame *f);

/* Moves node `from`'s samples and weight (wraps included) onto node
 * `to`, leaving `from` with none.  False on ENOMEM. */
bool kf_stacks_move(struct kf_stacks *s, uint32_t from, uint32_t to);

/* Removes the nodes under which no stack ends (no samples and no weight
 * there or below), renumbering the others in their order, from a trie
 * without index.  Every node id taken before is void.  along (NULL, or
 * one entry per node) is renumbered with the nodes.  False on ENOMEM
 * (the trie and along are then unchanged). */
bool kf_stacks_prune(struct kf_stacks *s, uint32_t *along);

/* Leaves node with no samples and no weight.  False on ENOMEM. */
bool kf_stacks_clear(struct kf_stacks *s, uint32_t node);

/* Counts one more wrap of node's weight past 2^64 - 1.  False on ENOMEM. */
bool kf_stacks_carry(struct kf_stacks *s, uint32_t node, uint64_t n);

/* Node's weight, the wraps included: a sum of u64 weights, exact. */
__extension__ typedef unsigned __int128 kf_u128;
kf_u128 kf_stacks_weight(const struct kf_stacks *s, uint32_t node);

/* Adds weight (no sample) to node.  False on ENOMEM. */
bool kf_stacks_add_weight(struct kf_stacks *s, uint32_t node, kf_u128 w);

/* Adds one sample of this weight to the stack ending at node.  False on
 * ENOMEM. */
static inline bool kf_stacks_add(struct kf_stacks *s, uint32_t node,
				 uint64_t weight)
{
	if (s->nodes[node].samples < UINT32_MAX)
		s->nodes[node].samples++;
	if (__builtin_add_overflow(s->nodes[node].weight, weight,
				   &s->nodes[node].weight))
		return kf_stacks_carry(s, node, 1);
	return true;
}

#endif
