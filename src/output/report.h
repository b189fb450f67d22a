/* report.h - the JSON report (json.c) and --explain (explain.c), made
 * from the stacks and what the session knows, handed in explicitly.
 *
 * Both outputs start from one gather (gather.h) over the classified
 * stacks; the JSON report's lines are the folded lines (folded.h's
 * texts), each with its stack's structured frames (frame_info).  What
 * the diagnostics say (why a module stayed unnamed, what would give it
 * lines, the unwinding hints) is diagnose.h's.  The JSON schema is
 * docs/kfold-report.schema.json: a change to what json.c writes changes
 * that file and, if a consumer could notice, the schema version.
 *
 * Use: fill a struct kf_report_in with what gathering needs,
 * kf_report_gather, for the JSON report kf_report_json_start, then fill
 * the lists (they are listed after the stacks were named: a module's
 * files and the unverified note depend on it), then kf_report_json or
 * kf_report_explain, then kf_report_fini.
 *
 * May use: util, capture (perfdata), model, symbols, analysis, folded.h,
 * kfold.h's plain types.  Never the session (api/).
 * Borrows everything kf_report_in points at, for the report's life; owns
 * the gather, the lines and its scratch.
 */
#ifndef KF_REPORT_H
#define KF_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "branches.h"
#include "kfold.h"

#include "classify.h"
#include "dso.h"
#include "filter.h"
#include "folded.h"
#include "gather.h"
#include "lines.h"
#include "module.h"
#include "perfdata.h"
#include "stacks.h"
#include "symbolize.h"
#include "util.h"

struct kf_report_in {
	/* the stacks and how they are named and printed */
	const struct kf_stacks *stacks;
	const struct kf_roots *roots;
	const struct kf_tsums *tsums;      /* NULL, or each stack's threads
					      (the roots then have none) */
	const struct kf_strtab *comms;     /* the roots' comm ids */
	struct kf_namer *namer;            /* NULL: nothing was named */
	unsigned jobs;                     /* threads the gather may use */
	struct kf_work_total *work;        /* where a second thread's work
					      is added */
	struct kf_fold_texts *texts;       /* the folded frame texts */
	const struct kf_fold_style *fold;
	const struct kf_modules *modules;
	struct kf_dsos *dsos;
	const struct kf_ctx_rules *rules;  /* NULL: not classified */
	unsigned exclude;                  /* verdicts left out (1 << v) */

	/* the capture and the run */
	const struct kf_pd *pd;
	const kf_stats *stats;
	const char *filter;                /* the folded event; NULL: none */
	const struct kf_attr *folded_attr; /* its attr; NULL: none */
	bool folded_soft_clock;            /* it is a software clock */
	const bool *soft_clock;            /* per attr of pd: a software
					      clock event */
	const char *soft_clock_note;       /* what to say of one, after
					      "event NAME " */
	uint64_t first_time, last_time;    /* of the samples (without the
					      header's range) */
	const struct kf_filter *filters;   /* perf script's filters given */
	bool count_samples;                /* weights are samples, not period */
	bool off_cpu;                      /* --off-cpu: weights are off-CPU
					      nanoseconds (unless samples) */
	bool stitch;                       /* --stitch: unwinding.dwarf says
					      what it did */
	const struct kf_brsites *brsites;  /* branch records with flags, by
					      site (NULL: none) */
	bool lines_looked_for;             /* inline frames or --srcline */
	const char *version;               /* kfold's */

	/* listed after kf_report_gather */
	const kf_module_info *mods;        /* the modules frames fell into */
	const uint32_t *mod_ids;           /* their module ids */
	size_t n_mods;
	uint64_t fp_samples, fp_broken;    /* frame-pointer stacks, broken */
	const kf_fp_break *fp_breaks;      /* where they broke, ranked */
	size_t n_fp_breaks;
	const kf_unwind_stop *stops;       /* where DWARF unwinds ended */
	size_t n_stops;
	const char *unverified;            /* the note on files used
					      unverified; NULL: none */
};

/* A path down a trie (stacks nodes or line nodes) kept from one stack to
 * the next with the text written for it: the stacks are written sorted by
 * line, and one mostly repeats the path of the one before. */
struct kf_report_path {
	struct kf_report_step {
		uint32_t node;             /* root first */
		uint32_t count;            /* entries through it */
		size_t end;                /* where its text ends */
	} *steps;
	size_t n, cap;
	uint32_t *pos;                     /* per node: its place in steps + 1;
					      0: not there */
	struct kf_buf text;
	uint32_t *fresh;                   /* scratch: nodes not there */
	size_t cap_fresh;
};

struct kf_report {
	const struct kf_report_in *in;
	struct kf_gather g;
	struct kf_buf tmp, comm;           /* scratch */
	struct kf_fold_frame *ff;          /* scratch: one node's frames */
	size_t cap_ff;
	/* frame_info per node: fi_at[node] - 1 is where fi_pool holds the
	 * node's count of entries, then that many frame_table indices (0:
	 * not made yet) */
	uint32_t *fi_at;
	uint32_t *node_entry;              /* per node: its namer entry
					      (kf_fold_node_entry), when the
					      gather named the nodes */
	uint32_t *fi_entry;                /* [namer entry << 1 | Java]: the
					      fi_at of its first node, 0:
					      none yet */
	size_t cap_fi_entry;
	uint32_t *fi_pool;
	size_t n_fi_pool, cap_fi_pool;
	/* while the writers may read fi_pool as it was, a grown fi_pool
	 * keeps its old arrays here, freed with the report */
	bool fi_keep;
	uint32_t **fi_old;
	size_t n_fi_old, cap_fi_old;
	/* the stacks' writers (json.c): the main thread's and a second
	 * one's, each writing the blocks of stacks it takes */
	struct kf_report_writer {
		struct kf_report_path fi;  /* over stacks nodes: frame_info
					      entries, comma separated */
		const uint32_t *pool;      /* fi_pool as this writer may read
					      it */
		struct kf_report_path fr;  /* over line nodes: frames */
		struct kf_buf out;         /* made, not yet written: one
					      stack (main), a block (second) */
	} w[2];
	char (*bid)[41];                   /* per module id: its build-id as
					      modules shows it, "" for none */
	struct kf_strtab fkeys;            /* JSON frame_table: the facts of */
	struct kf_map64 fidx;              /* each distinct frame, as a key, */
	struct kf_fold_frame *ftab;        /* -> its index -> one frame */
	size_t n_ftab, cap_ftab;           /* that has them */
	int err;                           /* a JSON value not made */
	struct kf_report_procs *procs;     /* json.c's: the processes
					      member, made ahead */
	/* the folded lines (line_text) as a trie of their ';'-separated
	 * pieces (lines.h): a stack's line's id is its node there.
	 * node_line: per stacks node its line node; piece_at[text id] - 1:
	 * where piece_ids holds its count, then that many piece ids */
	struct kf_lines lines;
	uint32_t *node_line;
	uint32_t *piece_at;                /* 0: not split yet */
	size_t cap_piece_at;
	uint32_t *piece_ids;
	size_t n_piece_ids, cap_piece_ids;
	struct kf_buf lt_text;             /* scratch: a root's text */
};

/* Gathers the stacks (with the folded lines when `lines`: the JSON
 * report, whose frames are then named here, beside the walk when
 * in->jobs > 1).  0, KF_ENOMEM or KF_EINVAL (in->rules NULL); call
 * kf_report_fini in every case. */
int kf_report_gather(struct kf_report *rp, const struct kf_report_in *in, bool lines);
void kf_report_fini(struct kf_report *rp);

/* The JSON report (gathered with lines); *stacks: how many it holds.
 * --explain's summary.  0, KF_ENOMEM or KF_EIO (errno from out).
 * kf_report_json_start, between the gather and the lists, may begin the
 * JSON report's processes member on a thread of its own (in->jobs > 1):
 * it reads only the gather's threads, cells and labels, the roots and
 * the comms, which the lists leave alone.  0 or KF_ENOMEM. */
int kf_report_json_start(struct kf_report *rp);
void kf_report_procs_free(struct kf_report_procs *pj);   /* (kf_report_fini's) */
int kf_report_json(struct kf_report *rp, FILE *out, uint64_t *stacks);
int kf_report_explain(struct kf_report *rp, FILE *out);

/* ---- shared by json.c and explain.c ---- */

/* A module's recorded name; "[unknown]" for 0 (no mapping). */
const char *kf_report_module_name(const struct kf_report *rp, uint32_t module);
/* Why a module's frames stayed unnamed, and what would name them. */
void kf_report_unnamed_reason(const struct kf_report *rp, uint32_t module,
			      const char **why, const char **hint);
/* What would give a module's frames source lines. */
const char *kf_report_nolines_hint(const struct kf_report *rp, uint32_t module);
/* A thread's comm, as its first stack's root prints it (in *buf). */
const char *kf_report_comm(const struct kf_report *rp, uint32_t thread, struct kf_buf *buf);
double kf_report_pct(uint64_t part, uint64_t whole);
/* Sorts the gaps by unnamed (or no-lines) samples, most first. */
void kf_report_sort_gaps(struct kf_report *rp, bool nolines);
/* Cells v[0..n) of several threads, summed per (verdict, label) into tmp
 * (which must hold n), sorted by verdict and label; returns how many. */
size_t kf_report_merge_cells(const struct kf_report *rp, const struct kf_gather_cell *v,
			     size_t n, struct kf_gather_cell *tmp);
/* Sorts cells by thread rank (rank NULL: threads ignored), verdict, label. */
void kf_report_sort_cells(const struct kf_report *rp, struct kf_gather_cell *v, size_t n,
			  const uint32_t *rank);

#endif
