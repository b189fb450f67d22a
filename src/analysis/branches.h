/* branches.h - branch sites of the samples' branch records: how often the
 * hardware recorded each branch, and how often it said the branch was
 * mispredicted (PERF_SAMPLE_BRANCH_STACK with flags: perf record -b, -j,
 * or --call-graph lbr where the PMU gives flags).
 */
#ifndef KFOLD_BRANCHES_H
#define KFOLD_BRANCHES_H

#include <stdbool.h>
#include <stdint.h>

#include "sample.h"
#include "stacks.h"
#include "util.h"

/* One branch instruction: the frame of its address (a raw frame, as the
 * namer takes it) and what its records said. */
struct kf_brsite {
	struct kf_frame frame;
	uint64_t records, mispred, predicted;
	uint64_t cycles, cycles_records;   /* the cycles of the records that
					      gave some, and how many did */
};

struct kf_brsites {
	struct kf_map64 index;             /* frame key -> index in v */
	struct kf_brsite *v;
	size_t n, cap;
	uint64_t samples, records, mispred, predicted;
};

void kf_brsites_init(struct kf_brsites *b);
void kf_brsites_fini(struct kf_brsites *b);

/* Counts branch record br at the site whose frame is f.  false on
 * ENOMEM. */
bool kf_brsites_add(struct kf_brsites *b, const struct kf_frame *f, const struct kf_branch *br);

/* ---- cycles per basic block (kfold annotate) -----------------------------
 *
 * A taken branch's record may say how many cycles passed since the
 * previous recorded branch: the cycles of the block that ran from the
 * older record's target to this record's branch.  Records are kept per
 * (block end, block start) pair, as the frames of those addresses (the
 * start has flags KF_FRAME_NOMAP and address 0 when the record is the
 * oldest of its stack: its block has no known start).  What makes a
 * start valid (the same function, before the end) is decided when
 * functions are known, by annotate. */
struct kf_bbpair {
	struct kf_frame end, start;
	uint64_t records, cycles, min, max;
};

struct kf_bbcycles {
	struct kf_map64 index;             /* pair key -> index in v */
	struct kf_bbpair *v;
	size_t n, cap;
	uint64_t samples, records;         /* samples whose records had
					      cycles, and their records */
};

void kf_bbcycles_init(struct kf_bbcycles *b);
void kf_bbcycles_fini(struct kf_bbcycles *b);

/* Counts one record of `cycles` (> 0) for the block from start (NULL:
 * unknown) to end.  false on ENOMEM. */
bool kf_bbcycles_add(struct kf_bbcycles *b, const struct kf_frame *end,
		     const struct kf_frame *start, uint64_t cycles);

/* The sites in report order: most mispredictions first, then most
 * records, then by frame.  Fills (*order)[0 .. b->n) (free it); false on
 * ENOMEM. */
bool kf_brsites_order(const struct kf_brsites *b, uint32_t **order);

#endif
