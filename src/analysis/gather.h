/* gather.h - one pass over the classified stacks that sums what the JSON
 * report and --explain say about them.
 *
 * kf_ctx_walk_range (context.h) gives each stack with samples and its
 * verdict and contexts; this gathers, per thread, the samples and periods by
 * verdict and leaf context (cells); per distinct folded line and context,
 * the stack (lines, when asked for); per module, the samples whose frames
 * it left unnamed or without source lines (gaps); and the totals.  Memory
 * grows with the number of distinct stacks and threads, never with the
 * number of samples (the three-step gather keeps 32 bytes per stack
 * between its walk and its last step).  With thread sums (tsums.h) the
 * walk gives each stack with its threads' sums added and each thread's
 * own: the same sums a trie with a root per thread gave, but for the
 * line's heaviest stack, which is then the heaviest over all threads.
 *
 * A folded line is text, which is the output's business: the caller gives
 * a function that returns an id for a stack's line (equal ids mean the
 * same line), and gather only compares those ids.  A thread keeps the
 * root of the first stack seen for it (an exec changes its comm), so the
 * output prints its comm.
 *
 * May use: util, stacks, symbolize, dso, context.
 * Owns everything in struct kf_gather; borrows its arguments for the call.
 */
#ifndef KF_GATHER_H
#define KF_GATHER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "context.h"
#include "dso.h"
#include "stacks.h"
#include "symbolize.h"
#include "util.h"

struct kf_bucket {
	uint64_t samples, period;
};

/* Adds to a bucket, saturating. */
void kf_bucket_add(struct kf_bucket *b, uint64_t samples, uint64_t period);

/* (thread, verdict, label) -> samples: the per-thread breakdown */
struct kf_gather_cell {
	uint32_t thread, label;  /* index in threads; id in labels (the leaf
				    context, or for unknown the reason) */
	uint8_t verdict;
	struct kf_bucket b;
};

struct kf_gather_thread {
	int32_t pid, tid;
	uint32_t root;           /* id in roots of its first stack */
	struct kf_bucket total;
};

/* a distinct (folded line, context) */
struct kf_gather_line {
	uint32_t text;           /* the caller's id of the folded line */
	uint32_t leaf, base, via;/* ids in labels */
	uint8_t verdict, why, guess;
	struct kf_bucket b;
	uint32_t node;           /* the heaviest stack merged into the line
				    (the first of equals): its end node */
	uint64_t node_samples;   /* its samples (all its threads') */
};

/* samples a module left unnamed or without lines */
struct kf_gather_gap {
	uint32_t module;         /* 0: no mapping */
	struct kf_bucket unnamed, nolines;
};

/* The folded line of the stack ending at `node` as an id (same line,
 * same id).  0 or a negative KF_E*, which stops the gather. */
typedef int (*kf_gather_line_fn)(void *arg, uint32_t node, uint32_t *id);

/* What the deferred part of a gather (kf_gather_finish) needs of one
 * stack: its end node, its context (an id in combos) and the modules
 * of its frames (an offset in mods). */
struct kf_gather_rec {
	uint32_t node, combo, mods;
	struct kf_bucket b;              /* the stack's sums (its threads'
					    added, with thread sums) */
};

/* a distinct (leaf, base, via, verdict, why, guess) of the stacks */
struct kf_gather_combo {
	uint32_t leaf, base, via;
	uint8_t verdict, why, guess;
};

struct kf_gather_half;

struct kf_gather {
	struct kf_strtab labels;         /* contexts ("syscall:read"),
					    unknown reasons, via names */
	struct kf_gather_thread *threads;
	size_t n_threads;
	struct kf_gather_cell *cells;
	size_t n_cells;
	struct kf_gather_line *lines;    /* only with a line function */
	size_t n_lines;
	struct kf_gather_gap *gaps;
	size_t n_gaps;
	struct kf_bucket verdicts[KF_CTX_NVERDICTS], total, excluded;
	struct kf_bucket leaf_named;     /* the leaf frame has a symbol */
	struct kf_bucket kernel_cut, kernel_stopped; /* kernel chains */
	struct kf_bucket unnamed, nolines; /* a frame without a name, one
					      of a module without its DWARF */

	/* private */
	const struct kf_stacks *st;
	const struct kf_roots *roots;
	struct kf_dsos *dsos;
	struct kf_namer *namer;
	unsigned exclude;
	struct kf_buf tmp;
	struct kf_map64 thread_ix, cell_ix, line_ix, gap_ix;
	size_t cap_threads, cap_cells, cap_lines, cap_gaps;
	struct kf_ctx_prep *prep;        /* kf_gather_prepare's */
	bool defer;                      /* lines and no-lines counts wait
					    for kf_gather_finish */
	struct kf_gather_rec *recs;      /* defer: per stack, in node order */
	size_t n_recs, cap_recs;
	struct kf_gather_combo *combos;
	size_t n_combos, cap_combos;
	struct kf_map64 combo_ix, mods_ix;
	uint32_t *mods;                  /* lists: a count, then modules in
					    the order the stack meets them */
	size_t n_mods, cap_mods;
	uint32_t *mod_list;              /* the stack being walked's */
	size_t cap_mod_list;
	struct kf_gather_half *bg;       /* a walk on a second thread */
};

/* Gathers the stacks of st with kf_ctx_walk_range (roots, namer and
 * rules as kf_ctx_prepare_begin takes them; ts, each stack's threads, or
 * NULL when the roots hold them), leaving out the verdicts in
 * `exclude` (bits 1 << verdict; their samples go to `excluded`), without
 * lines.  `dsos` says whether a
 * module's debug info was looked for.  A NULL namer (no stack was named:
 * nothing was read) gathers nothing; NULL rules (not classified) is
 * KF_EINVAL.  With jobs > 1 half the stacks are gathered on a second
 * thread (its work is added to `work`), with the same result.  0,
 * KF_ENOMEM or KF_EINVAL; call kf_gather_fini in every case. */
int kf_gather_run(struct kf_gather *g, const struct kf_stacks *st,
		  const struct kf_roots *roots, const struct kf_tsums *ts,
		  struct kf_namer *namer, const struct kf_ctx_rules *rules,
		  struct kf_dsos *dsos, unsigned exclude, unsigned jobs,
		  struct kf_work_total *work);

/* The same gather in three steps, for a caller that names the frames
 * while the stacks are walked (the line of a stack is made of names, and
 * whether a module counts as lacking source lines depends on what naming
 * asked for).  kf_gather_prepare looks up, on the namer's thread, what
 * the walk needs of the namer there (kf_ctx_prepare_begin).  The walk
 * then looks up the rest with kf_namer_symbol, which then only reads, and
 * walks, reading only that (and st and roots): kf_gather_walk_start
 * starts it on a second thread when jobs > 1 (its work added to `work`),
 * where it runs while the namer names, else walks at once;
 * kf_gather_walk_join waits for it.  kf_gather_finish, after both, adds
 * each stack to its line (line_fn: may be NULL) and charges the modules
 * without source lines.  The result is kf_gather_run's with the naming
 * done before it.  Each returns 0, KF_ENOMEM, KF_EINVAL or line_fn's
 * error (the join: the walk's); a step after a failed one is not called,
 * but the join is when the start succeeded; kf_gather_fini in every case
 * (it joins a walk still running). */
int kf_gather_prepare(struct kf_gather *g, const struct kf_stacks *st,
		      const struct kf_roots *roots, const struct kf_tsums *ts,
		      struct kf_namer *namer, const struct kf_ctx_rules *rules,
		      struct kf_dsos *dsos, unsigned exclude);
int kf_gather_walk_start(struct kf_gather *g, unsigned jobs, struct kf_work_total *work);
int kf_gather_walk_join(struct kf_gather *g);
int kf_gather_finish(struct kf_gather *g, kf_gather_line_fn line_fn, void *line_arg);

void kf_gather_fini(struct kf_gather *g);

#endif
