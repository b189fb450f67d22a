/* flame.h - the stacks as one self-contained HTML flame graph.
 *
 * Merges a source's stacks (stacksrc.h) into a tree of frames by name and
 * kind, and writes one HTML file: the tree as JSON, the page's script and
 * style (flame.js, flame.css, built in), no other file and no network.
 * A kernel frame's kind is its stack's verdict (on behalf of the task,
 * attributed to it, idle, kernel thread), so the colours tell them apart;
 * folded text (kfold merge) has kinds only where its suffixes say.
 *
 * May use: util, kfold.h.
 */
#ifndef KF_FLAME_H
#define KF_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "stacksrc.h"

struct kf_flame_facts {
	const char *title;          /* the page's heading */
	const char *subtitle;       /* the capture's facts, one line; or NULL */
	const char *const *notes;   /* what a reader must know, a line each */
	size_t n_notes;
	const char *unit;           /* the weights': "ns" (shown as ms),
				       "samples", "count" */
	bool svg;                   /* a static SVG (flamegraph.pl's way: a
				       <title> per frame) instead of the page */
};

/* Writes the page.  0, KF_EIO (writing failed), KF_ENOMEM, KF_EUNSUPP
 * (more than 2^27 distinct names), or what src->stack returned. */
int kf_flame_write(const struct kf_stack_src *src, const struct kf_flame_facts *f,
		   FILE *out);

#endif
