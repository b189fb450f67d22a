/* session.h - the session's state, for the files that implement kfold.h
 * (session.c: loading, folded output, and the JSON report and --explain
 * through output/report.h's explicit input; no file below api/ sees this
 * struct).  Not part of the interface.
 */
#ifndef KF_SESSION_H
#define KF_SESSION_H

#include "kfold.h"

#include "branches.h"
#include "callchain.h"
#include "classify.h"
#include "counters.h"
#include "diagnose.h"
#include "dso.h"
#include "error.h"
#include "feed.h"
#include "folded.h"
#include "ipcount.h"
#include "filter.h"
#include "fs.h"
#include "module.h"
#include "offcpu.h"
#include "order.h"
#include "perfdata.h"
#include "perfhdr.h"
#include "policy.h"
#include "stacks.h"
#include "symbolize.h"
#include "tasks.h"
#include "tsums.h"
#include "unwind.h"
#include "util.h"

#define KF_VERSION "0.1.0"
/* --root KEY=DIR (kf_options.roots): checked and copied into s->roots.
 * 0, KF_EINVAL (a malformed entry), KF_ENOMEM. */
int kf_session_set_roots(struct kf_session *s, const char *const *roots, size_t n);

struct kf_session {
	kf_options o;
	const struct kf_policy *pol;  /* from o.compat, chosen once in
					 kf_session_new; every stage gets it */
	char *symfs, *kallsyms, *buildid_dir, *perf_map_dir, *event, *vmlinux;
	char **debug_dirs;       /* copies of o.debug_dirs, or a bundle's */
	size_t n_debug_dirs;
	char **dir_roots;        /* copies of o.roots ("KEY=DIR"), or a
				    bundle's */
	size_t n_dir_roots;
	struct kf_bundle *bundle;     /* the bundle read (bundle.h), or NULL */
	/* --symbols-only: a bundle's name table and unwinds (the bundle's,
	 * set by its load), or kfold archive's tables to record the
	 * unwinds into (borrowed); NULL: none */
	const struct kf_nametab *names;
	const struct kf_uwtab *uw_replay;
	struct kf_uwtab *uw_record;
	struct kf_error err;
	kf_stats stats;               /* .work: a copy of `work` */
	struct kf_work_total work;    /* every thread's work (util.h) */

	struct kf_pd *pd;
	struct kf_order *order;
	bool ordered;
	struct kf_strtab strings;     /* comms */
	struct kf_roots roots;        /* what the stacks' root frames refer to */
	struct kf_modules modules;
	struct kf_tasks tasks;
	bool tasks_ready;
	struct kf_fs fs;
	struct kf_perfarchive *parchive; /* --buildid-dir FILE.tar.bz2's overlay */
	struct kf_dsos dsos;
	bool dsos_ready;
	struct kf_stacks stacks;
	struct kf_feed feed;          /* o.jobs > 1: stacks is the feed's
					 worker's during the run (feed.h) */
	bool feeding;                 /* the feed was started */
	bool ctx_threads;             /* the roots keep pid and tid for
					 the classifier's readers (JSON,
					 explain), not only for --context */
	bool use_tsums;               /* opts.thread_table: the threads are
					 in tsums instead */
	struct kf_tsums tsums;        /* each stack's samples per thread
					 (tsums.h); the feed's worker's
					 during the run */
	struct kf_namer namer;
	bool namer_ready;
	struct kf_callchain cc;        /* the samples' chains (scratch) */
	struct kf_brsites brsites;     /* branch records with flags, by site */
	struct kf_bbcycles bbcycles;   /* annotate: cycles per basic block */
	struct kf_perf_header perfhdr; /* perf_script_header: the header
					  line of each sample (scratch) */
	struct kf_fold_style fold;    /* how folded text prints (folded.h) */
	struct kf_fold_texts texts;   /* frame texts (with namer_ready) */
	size_t n_events;              /* attrs whose per-event setup ran
					 (events_arrived) */
	bool dwarf_events;            /* some event records user registers
					 and stack (--call-graph dwarf) */
	struct kf_fp_diag fp;         /* fp chain breaks, counted once */
	bool opened;                  /* kf_session_open_* succeeded */
	bool ran;                     /* kf_session_run was called */
	struct kf_rec first;          /* the first record after the metadata, */
	int first_r;                  /* read at open: kf_pd_next's result */

	/* what the indexed getters return, listed once after the load (the
	 * first call) instead of recomputed per index */
	bool hit_listed;
	uint32_t *hit;                /* ids of the modules frames fell into */
	uint32_t *hit_bid;            /* for each: 1 + its entry in the
					 build-id table, 0: none (or its own) */
	size_t n_hit;
	struct kf_uw_stops stops;     /* where unwinds ended, ranked */
	struct kf_buf advice;         /* kf_session_debuginfo_advice's text */
	uint64_t first_time, last_time; /* of the samples with a time (for
					   captures without the header's) */

	/* PERF_SAMPLE_READ: the last counter value per id (per id and
	 * thread for inherited counters), see deliver_read */
	struct kf_counters counters;
	struct kf_filter filters;     /* --pids, --tids, --comms, --cpus, --time */
	uint64_t warned_read_no_id, warned_read_empty;

	/* event selection */
	bool filter_set;
	char *filter;                 /* event name kept */
	size_t kept_ev;               /* 1 + the index of an event whose
					 samples passed the selection below
					 (0: none yet): they pass again
					 without their name being compared */
	uint64_t *attr_samples;       /* samples read per attr (decoded) */
	size_t n_attr_samples;

	/* --off-cpu (offcpu.h): the stacks waiting for their thread's
	 * switch-in, and per attr what it is: 0 not looked at yet, 1
	 * sched:sched_switch with the fields read, 3 sched:sched_waking or
	 * sched_wakeup with its pid field (--off-cpu=wakers), 2 anything
	 * else */
	struct kf_offcpu offcpu;
	/* the capture's cgroups: PERF_RECORD_CGROUP's id -> 1 + the string
	 * id of its path (for --cgroup and --cgroups) */
	struct kf_map64 cgroups;
	struct kf_oc_attr {
		uint8_t kind;
		struct kf_tp_field prev_pid, next_pid, prev_state, pid;
	} *oc_attrs;
	size_t n_oc_attrs;

	/* kernel contexts (opts.classify) */
	struct kf_ctx_rules *rules;

	uint64_t warned_kernel_load;
	bool warned_unverified;       /* kf_session_note_unverified said it */

	/* kfold annotate (opts.annotate): samples per sampled ip */
	struct kf_ipcounts ips;
	struct kf_ipcounts sites;     /* opts.call_sites: per return address */
	struct kf_ipcounts *ips_ev;   /* the other events' samples per ip, by
					 event index (annotate's columns) */
	size_t n_ips_ev;
	uint64_t site_stamp;          /* the sample being counted there */

	/* the stacks as data (walk.c) */
	struct kf_walk {
		bool listed;
		uint32_t *nodes;          /* trie nodes with samples, in preorder */
		size_t n;
		size_t *hit_of;           /* module id -> index of kf_session_module */
		struct kf_fold_frame *ff; /* one stack's folded frames */
		size_t ff_cap;
		/* the previous stack's path, root first, and where each of
		 * its nodes' frames start in ff (path_at[path_n]: the end),
		 * so that the next stack builds only the frames of the
		 * nodes where it leaves that path */
		uint32_t *path, *np;
		size_t path_n, path_cap, np_cap;
		size_t *path_at;
		size_t path_at_cap;
		bool java;                /* the path's root's (kf_fold_root_java) */
		bool shared_ok;           /* the path is the stack the last call
					     returned (n_shared is about it) */
		struct kf_fold_frame *tmp; /* one node's frames */
		size_t tmp_cap;
		kf_frame_info *fi;        /* ... and their public form */
		size_t fi_cap;
	} walk;
};

/* The attr of the event being folded (the first whose name matches), or
 * NULL before any sample picked one. */
const struct kf_attr *kf_session_folded_attr(const struct kf_session *s);

/* Whether an event is a software clock (cpu-clock, task-clock): it
 * samples from an hrtimer interrupt, so it cannot see IRQ-disabled code. */
bool kf_attr_is_soft_clock(const struct kf_attr *a);

/* The one warning of a run about files used unverified (no build-id
 * recorded, nothing to check them against), once the names are known:
 * after the folded stacks, the JSON report or --explain. */
void kf_session_note_unverified(struct kf_session *s);
/* Its text, without the pointer to --stats; false when there is none. */
bool kf_session_unverified_text(const struct kf_session *s, char *buf, size_t len);

/* Lists the modules frames fell into (kf_session_module's order) once:
 * s->hit[0 .. s->n_hit).  0 or KF_ENOMEM. */
int kf_session_list_hit(struct kf_session *s);

/* Sets the lookup paths (symfs, kallsyms, ... as kf_options names them)
 * and derives the build-id cache from them, the policy and s->o.host:
 * kf_session_new with the options, a bundle with the ones it was written
 * with.  0, KF_EINVAL or KF_ENOMEM. */
int kf_session_set_paths(struct kf_session *s, const char *symfs,
			 const char *kallsyms, const char *vmlinux,
			 const char *perf_map_dir, const char *buildid_dir,
			 const char *const *debug_dirs, size_t n_debug_dirs);

/* Frees what walk.c keeps. */
void kf_session_walk_fini(struct kf_session *s);

/* What to say of such an event, after "event NAME ". */
extern const char kf_soft_clock_note[];

#endif
