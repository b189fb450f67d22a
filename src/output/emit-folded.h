/* emit-folded.h - the stack trie -> folded text, sorted like
 * stackcollapse-perf.pl's output (byte order of the whole stack text).
 *
 * Raw frames that name the same way are merged, frames that fold to
 * nothing are skipped, and each distinct text line is written once with
 * the sum of its weights.  The lines are produced in order by walking the
 * trie level by level, so memory stays proportional to the trie, not to
 * the size of the output text (a fallback sorts whole lines when a frame
 * name itself contains ';').
 *
 * May use: util, stacks, symbolize.
 */
#ifndef KF_EMIT_FOLDED_H
#define KF_EMIT_FOLDED_H

#include <stdint.h>
#include <stdio.h>

#include "stacks.h"
#include "symbolize.h"

/* Writes every stack with samples as "root;...;leaf WEIGHT\n".  Root
 * frames' texts are in `roots` (their frame.module is the id).  Sets
 * *lines to the number of lines written.  Returns 0, KF_ENOMEM or KF_EIO
 * (with errno from the stream). */
int kf_emit_folded(const struct kf_stacks *st, struct kf_namer *namer,
		   const struct kf_strtab *roots, FILE *out, uint64_t *lines);

#endif
