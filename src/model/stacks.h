/* stacks.h - distinct call stacks, interned as a trie, with their weights.
 *
 * A stack is a root frame (the process or thread it is charged to) and
 * raw frames from the outermost to the leaf.  Each distinct prefix is one
 * node (parent, frame), so memory grows with the number of distinct
 * stacks, never with the number of samples.  Frames are raw (module and
 * address); naming them is a later stage's job.
 *
 * May use: util.
 */
#ifndef KF_STACKS_H
#define KF_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util.h"

/* Frame flags */
#define KF_FRAME_KERNEL  1u   /* looked up in the kernel's maps */
#define KF_FRAME_RA      2u   /* a return address: look up at addr - 1 */
#define KF_FRAME_ROOT    4u   /* the root: module = comm string id,
				 addr = pid << 32 | tid */
#define KF_FRAME_NOMAP   8u   /* no mapping contained the address */
#define KF_FRAME_GUESSED 16u  /* found by a frame-pointer step where the
				 module had no unwind information */
#define KF_FRAME_FPCHAIN 64u  /* on a root: the user part of the stack
				 came from a frame-pointer callchain */
#define KF_FRAME_TRUNCATED 32u /* marks where the copy of the user stack
				 ran out: the stack goes on, unseen */
#define KF_FRAME_UNWOUND 128u /* --compat=perf: found by unwinding the
				 user stack (perf expands inlines there) */
#define KF_FRAME_PSEUDO 256u  /* not a code address: a marker such as
				 "[softirq:NET_RX]"; module = its text id
				 in the namer's texts */
#define KF_FRAME_TEXT (1u << 16) /* a real frame whose printed text the
				 --context rewrite replaced (one that would
				 read like a marker); module = that text's
				 id in the namer's texts */
/* On a root, what the kernel-context classifier needs to know about the
 * sample besides its frames (set only when classification is asked for;
 * then addr = pid << 32 | tid): */
#define KF_FRAME_CTX_USER_PART 512u   /* a user part followed the kernel's */
#define KF_FRAME_CTX_TRUNCATED 1024u  /* the chain was cut (max_stack, a
					 user marker without entries) */
#define KF_FRAME_CTX_NO_CHAIN  2048u  /* no callchain: the leaf only */
#define KF_FRAME_CTX_KTHREAD   4096u  /* the task is a kernel thread */
#define KF_FRAME_CTX_CPUMODE_SHIFT 13 /* header.misc & 7, 3 bits */

struct kf_frame {
	uint64_t addr;        /* map-relative for mapped user frames (the
				 mapping's file offset space), absolute
				 otherwise */
	uint32_t module;      /* module id (0 = none) */
	uint32_t flags;       /* KF_FRAME_* */
};

struct kf_node {
	struct kf_frame frame;
	uint64_t weight;      /* sum of weights of stacks ending here */
	uint32_t parent;      /* node id; 0 = none (root frames) */
	uint32_t samples;     /* samples ending here (saturates) */
};

struct kf_stacks {
	struct kf_node *nodes;   /* nodes[0] unused */
	size_t n, cap;
	uint32_t *slots;         /* hash of (parent, frame) -> node id */
	size_t nslots;
	/* node -> how many times its weight went past 2^64 - 1 (only a
	 * PERF_SAMPLE_READ counter that went back weighs that much) */
	struct kf_map64 carry;
};

int kf_stacks_init(struct kf_stacks *s);
void kf_stacks_fini(struct kf_stacks *s);

/* Returns the node for (parent, frame), adding it if new; 0 on ENOMEM. */
uint32_t kf_stacks_child(struct kf_stacks *s, uint32_t parent,
			 const struct kf_frame *f);

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
