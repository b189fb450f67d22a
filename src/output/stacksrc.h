/* stacksrc.h - where an output that is not folded text (pprof, the flame
 * graph) takes its stacks from: a session's (kf_session_stack,
 * kf_session_module and the kernel contexts) or kfold merge's folded
 * lines, as the same public structures.
 *
 * May use: kfold.h.
 */
#ifndef KF_STACKSRC_H
#define KF_STACKSRC_H

#include <stdbool.h>
#include <stddef.h>

#include "kfold.h"

struct kf_stack_src {
	void *ctx;
	size_t n_stacks, n_modules;
	int (*stack)(void *ctx, size_t i, kf_stack_info *out);
	int (*module)(void *ctx, size_t i, kf_module_info *out);
	/* stack i's kernel-context verdict and leaf context ("on-behalf",
	 * "syscall:write"), each NULL when not known; NULL: none */
	void (*contexts)(void *ctx, size_t i, const char **verdict, const char **leaf);
	/* the frames are folded text (kfold merge): kinds only as their
	 * suffixes say (_[k], _[j], _[i]) */
	bool folded;
	/* a difference: stack i's count in the baseline (its weight is the
	 * other profile's); NULL: not a difference */
	uint64_t (*base)(void *ctx, size_t i);
};

#endif
