/* diagnose.h - where a run lost frames or names, and what would get them
 * back.
 *
 * The one home of kfold's diagnostics and of every hint text they carry
 * (review §12.9): frame-pointer chains that stop before the program's
 * entry and the module they broke in; the ends of DWARF unwinds per
 * module and reason, ranked; why a module's frames stayed unnamed or
 * have no source lines; what would give a module debug info.  The
 * session hands in what the stages counted (the stack trie, the
 * unwinder's counts, a module's symbol status) and the outputs (the JSON
 * report, --explain, `kfold --stats` through kfold.h) print what comes
 * back; nothing here writes output or reads a file.
 *
 * Lists are made once (the getters of kfold.h index them), and every
 * loop over them counts KF_WORK.  Hint texts are static: callers borrow
 * them for the life of the program.
 *
 * May use: util, module, stacks, dso (statuses only), symbolize (names
 * of outermost frames), unwind (its reasons and counts).
 */
#ifndef KF_DIAGNOSE_H
#define KF_DIAGNOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "callchain.h"
#include "dso.h"
#include "module.h"
#include "stacks.h"
#include "unwind.h"
#include "util.h"

/* ---- DWARF unwinding --------------------------------------------------------- */

/* The reason ("not unwound: ...") and the hint of a skip. */
const char *kf_diag_skip_reason(enum kf_uw_skip k);
const char *kf_diag_skip_hint(enum kf_uw_skip k);

/* One (module, reason) pair of the ends of unwinds: end is a
 * kf_unwind_end, or KF_UW_N_REASONS + a kf_uw_skip. */
struct kf_uw_stop {
	uint32_t module;
	enum kf_unwind_end end;
	uint64_t n;
};

/* The pairs, most samples first (then by module and reason).  Owned by
 * the struct; zeroed is empty. */
struct kf_uw_stops {
	bool ranked;
	struct kf_uw_stop *v;
	size_t n;
};

/* How many pairs there are: the skips (skipped[KF_UWS_N], samples never
 * given to the unwinder) and every (module < n_modules, reason) the
 * unwinder u (NULL: none ran) counted. */
size_t kf_diag_count_stops(const uint64_t *skipped, const struct kf_unwinder *u,
			   size_t n_modules);
/* Ranks them into st, once (the counts are final after the load); 0 or
 * KF_ENOMEM. */
int kf_diag_rank_stops(struct kf_uw_stops *st, const uint64_t *skipped,
		       const struct kf_unwinder *u, size_t n_modules);
void kf_diag_stops_fini(struct kf_uw_stops *st);
/* The reason and hint ("" when none) of a pair's end. */
void kf_diag_stop_text(enum kf_unwind_end end, const char **reason, const char **hint);

/* ---- frame-pointer chains ----------------------------------------------------- */

/* Samples whose user stack is a frame-pointer chain, those that stop
 * before the program's entry, and where they broke.  Zeroed is "not
 * counted yet". */
struct kf_fp_diag {
	bool done;
	uint64_t samples, broken;
	uint64_t *per_module;    /* broken samples per module id */
	uint32_t *order;         /* the modules with breaks, most first */
	size_t n;
};

/* The text a frame prints as (the folded output's), NULL when it cannot
 * be had (ENOMEM). */
typedef const char *(*kf_diag_frame_text)(void *ctx, const struct kf_frame *f);

/* Counts once, over the stacks with samples (asks text() for the
 * outermost frame of each, so after the names were decided: after the
 * folded output); on ENOMEM leaves the list empty. */
void kf_diag_count_fp(struct kf_fp_diag *fp, const struct kf_stacks *st,
		      kf_diag_frame_text text, void *ctx, size_t n_modules);
void kf_diag_fp_fini(struct kf_fp_diag *fp);

/* What would keep them whole: in the JSON report, in --explain (after
 * "; "), and in `kfold --stats` (in parentheses). */
extern const char kf_diag_lbr_full_hint[];
extern const char kf_diag_fp_hint[];
extern const char kf_diag_fp_hint_explain[];
extern const char kf_diag_fp_hint_stats[];

/* Kernel chains cut at the stack limit or stopped by the kernel's
 * unwinder (JSON report). */
extern const char kf_diag_kernel_hint[];

/* ---- names and source lines ------------------------------------------------- */

/* Why a module's frames stayed unnamed, and what would name them, from
 * what is known of it: module 0 (no mapping holds the address), its
 * kind, its symbol status and whether symbols were loaded. */
void kf_diag_unnamed(uint32_t module, enum kf_module_kind kind, enum kf_dso_status st,
		     bool has_symbols, const char **why, const char **hint);

/* What would give a module's frames source lines: the symbol layer's
 * hint for it (dso_hint, may be NULL) or the general one. */
const char *kf_diag_nolines_hint(const char *dso_hint);

/* `kfold --stats`'s advice for a module whose DWARF was looked for and
 * not found, but which has symbols: install its debug file (name, hex
 * build_id or ""), and, when debuginfod could be asked for it (a
 * build-id recorded, not --compat=perf, no server configured), set
 * DEBUGINFOD_URLS.  Appended to out. */
void kf_diag_debuginfo_advice(struct kf_buf *out, const char *name,
			      const char *build_id, bool suggest_debuginfod);

#endif
