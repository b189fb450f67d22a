/* folded.h - the stack trie -> folded text, sorted like
 * stackcollapse-perf.pl's output (byte order of the whole stack text).
 *
 * Everything that makes a frame into stackcollapse text lives here: the
 * root's "comm", "comm-PID" or "comm-PID/TID" (spaces made '_'), and the
 * regexes stackcollapse-perf.pl applies to perf script's header line
 * (--compat=perf), which the session needs while it reads samples.
 *
 * Raw frames that name the same way are merged, frames that fold to
 * nothing are skipped, and each distinct text line is written once with
 * the sum of its weights.  The lines are produced in order by walking the
 * trie level by level, so memory stays proportional to the trie, not to
 * the size of the output text (a fallback sorts whole lines when a root's
 * text itself contains ';').
 *
 * May use: util, stacks, symbolize, context.
 */
#ifndef KF_FOLDED_H
#define KF_FOLDED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "stacks.h"
#include "symbolize.h"
#include "util.h"

/* How frames print: the options of folded text, set once. */
struct kf_fold_style {
	bool compat;            /* --compat=perf: stackcollapse-perf.pl's rules */
	int root_mode;          /* KF_ROOT_* (kfold.h) */
	unsigned suffixes;      /* KF_SUFFIX_* (kfold.h) */
	bool show_addrs;        /* --addrs */
};

/* What a root prints as, for one stack: the comm with spaces made '_'
 * (kfold's own mode also makes ';' ':' and a newline '_', and an empty
 * comm "[unknown]"), then "-PID" (KF_ROOT_PID) or "-PID/TID"
 * (KF_ROOT_TID).  `comms` holds the root's comm id.  Appends to out;
 * kf_fold_root_comm appends the comm part only. */
void kf_fold_root(const struct kf_fold_style *fs, const struct kf_strtab *comms,
		  const struct kf_stack_root *root, struct kf_buf *out);
void kf_fold_root_comm(const struct kf_fold_style *fs, const struct kf_strtab *comms,
		       const struct kf_stack_root *root, struct kf_buf *out);

/* Whether frames under this root get stackcollapse's Java tidying (the
 * comm starts with "java"). */
bool kf_fold_root_java(const struct kf_strtab *comms, const struct kf_stack_root *root);

/* stackcollapse-perf.pl's /^(\S.+?)\s+(\d+)[/]*(\d+)*\s+/ on a perf script
 * header line (comm followed by what the session prints after it): the
 * length of the comm group, or 0 when the line does not match
 * (stackcollapse then drops the sample). */
size_t kf_collapse_header_comm(const char *line, size_t len);

/* stackcollapse-perf.pl's /:\s*(\d+)*\s+(\S+):\s*$/ on a header line:
 * returns true when it matches, with the event name (borrowed slice of
 * line) and the period digits (period_len 0 when absent). */
bool kf_collapse_header_event(const char *line, size_t len,
			      const char **event, size_t *event_len,
			      const char **period, size_t *period_len);

/* Writes every stack with samples as "root;...;leaf WEIGHT\n".  Root
 * frames refer to `roots`, their comms to `comms`.  Sets *lines to the
 * number of lines written.  Returns 0, KF_ENOMEM or KF_EIO (with errno
 * from the stream). */
int kf_emit_folded(const struct kf_stacks *st, struct kf_namer *namer,
		   const struct kf_fold_style *fs, const struct kf_roots *roots,
		   const struct kf_strtab *comms, FILE *out, uint64_t *lines);

#endif
