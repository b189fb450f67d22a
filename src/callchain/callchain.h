/* callchain.h - one sample -> its raw frames (module, address, flags),
 * leaf first.
 *
 * The stage that assembles a call chain: the sampled callchain walked as
 * perf 6.1's thread__resolve_callchain_sample does (context markers, the
 * --max-stack cut, each address looked up in the thread's or the kernel's
 * mappings), and for `--call-graph dwarf` samples the user part replaced
 * by what the unwinder finds in the copy of the user stack
 * (thread__resolve_callchain_unwind); a sample without a callchain gives
 * its ip alone.  docs/perf-compat.md has every rule.  Later chain sources
 * (LBR stitching) belong here too.
 *
 * May use: util, capture (sample views, attrs), model (tasks, maps,
 * modules, frames), symbols (the kernel's symbol table, to widen its map
 * as perf does; the namer, only for --compat=perf --inline, see
 * kf_callchain_init), callchain/unwind.  Names nothing itself.
 *
 * It is one of the load steps of dso.h: it loads the kernel's symbols
 * (kallsyms) at the first kernel frame, the unwinder the unwinding data
 * of each module it steps into or reads, and for --compat=perf --inline
 * what naming an unwound frame reads (kf_namer_needs) before naming it;
 * everything else is loaded after the run (kf_dsos_prepare).
 *
 * Ownership: struct kf_callchain owns its per-sample scratch (the frames
 * of the last chain, the unwinder's output) and the unwinder; the tasks,
 * modules, DSOs, namer and environment it is given are borrowed and must
 * outlive it.  Nothing here is shared between two kf_callchain, so
 * threads that each have their own can build chains side by side once
 * the borrowed stages allow it (the loads of dso.h, which change the
 * DSO layer's state, and the module hit flags do not yet).
 */
#ifndef KF_CALLCHAIN_H
#define KF_CALLCHAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dso.h"
#include "module.h"
#include "perfdata.h"
#include "policy.h"
#include "sample.h"
#include "stacks.h"
#include "symbolize.h"
#include "tasks.h"
#include "unwind.h"

#define KF_CHAIN_MAX_STACK 127u   /* perf script's --max-stack default */

/* callchain context markers (include/uapi/linux/perf_event.h) */
#define KF_CHAIN_CTX_HV     ((uint64_t)-32)
#define KF_CHAIN_CTX_KERNEL ((uint64_t)-128)
#define KF_CHAIN_CTX_USER   ((uint64_t)-512)
#define KF_CHAIN_CTX_MAX    ((uint64_t)-4095)

/* Why a sample of a DWARF event (one with user registers and stack) was
 * not handed to the unwinder at all (the unwinder counts the ends of the
 * unwinds it did). */
enum kf_uw_skip {
	KF_UWS_ARCH,          /* no unwinder for the capture's architecture */
	KF_UWS_COMPAT,        /* --compat=perf: perf 6.1 does not unwind it */
	KF_UWS_NO_CHAIN,      /* the event samples no callchain: perf folds
				 no stack of it either */
	KF_UWS_N
};

/* What the chains built so far added up to. */
struct kf_chain_counts {
	uint64_t samples_dwarf;   /* samples of DWARF events */
	uint64_t samples_unwound; /* ... whose user stack gave frames */
	uint64_t frames_guessed;  /* unwound frames from a frame-pointer step */
	/* --stitch */
	uint64_t samples_cut;      /* samples whose unwind ran out of the
				      stack copy */
	uint64_t samples_stitched; /* ... completed from an earlier sample */
	uint64_t frames_stitched;  /* frames taken from earlier samples */
	uint64_t samples_still_cut; /* ... still ending in [truncated] */
	uint64_t uw_skipped[KF_UWS_N]; /* DWARF samples not unwound, by why */
	/* --call-graph lbr */
	uint64_t samples_lbr;      /* samples whose user part came from the
				      LBR's call stack */
	uint64_t samples_lbr_full; /* ... as deep as the LBR: the callers
				      beyond it are lost */
	uint64_t samples_lbr_empty; /* ... without records: the pc alone */
	uint64_t samples_lbr_stitched; /* --stitch-lbr: ... completed from the
				      previous sample */
	uint64_t frames_lbr_stitched;  /* frames they took from it */
	uint64_t samples_lbr_stopped;  /* full ones not stitched: their
					  outer callers are lost */
};

/* One sample's chain, borrowed from the kf_callchain until its next
 * kf_callchain_build. */
struct kf_chain {
	const struct kf_frame *frames;  /* leaf first */
	size_t n;
	size_t n_kernel, n_user;  /* callchain entries walked per context
				     (unwound frames count as user) */
	bool user_marker;         /* the callchain had a PERF_CONTEXT_USER */
};

/* A --symbols-only bundle's unwinds: for each DWARF sample, by its key
 * (its record's kf_rec.seq, its place in the capture), what the unwinder
 * found on the capture host: its frames, why it stopped and the module
 * charged.  The
 * bundle's capture has the samples' register and stack copies zeroed;
 * reading it, the chains take their user part from here. */
struct kf_uwent {
	uint64_t key;
	uint32_t end_module;
	uint32_t first;           /* frames[first .. first + n) */
	uint16_t n;
	uint8_t end;              /* enum kf_unwind_end */
	uint32_t next;            /* 1 + the next entry of its hash, 0: none */
};

struct kf_uwtab {
	struct kf_uwent *v;
	size_t n, cap;
	struct kf_uframe *frames;
	size_t n_frames, cap_frames;
	struct kf_map64 index;    /* hash of key -> first index in v */
	uint64_t seed;            /* mixed into the hash: a bundle's table is
				     keyed by its own SHA-256, so that keys
				     chosen to collide are not a quadratic
				     read */
	bool failed;              /* an add ran out of memory */
};

void kf_uwtab_init(struct kf_uwtab *t);
void kf_uwtab_fini(struct kf_uwtab *t);
/* Adds an unwind unless its key is there; false on ENOMEM or a key of
 * ~0 (never a record's place). */
bool kf_uwtab_add(struct kf_uwtab *t, uint64_t key, enum kf_unwind_end end,
		  uint32_t end_module, const struct kf_uframe *frames, size_t n);
const struct kf_uwent *kf_uwtab_find(const struct kf_uwtab *t, uint64_t key);

struct kf_callchain {
	/* configuration (kf_callchain_init) */
	struct kf_tasks *tasks;
	struct kf_modules *modules;
	struct kf_dsos *dsos;
	struct kf_namer *name_unwound;
	const struct kf_env *env;
	const struct kf_policy *pol;

	struct kf_unwinder *unwinder; /* NULL until kf_callchain_unwinding */
	bool unwinder_unsupported;    /* its architecture has no unwinder */
	struct kf_chain_counts counts;
	/* --symbols-only: unwinds are recorded into uw_record (kfold
	 * archive), or taken from uw_replay instead of unwinding (a bundle
	 * without stack copies); both borrowed, NULL: neither.  key: the
	 * sample's, set by the caller before each kf_callchain_build */
	struct kf_uwtab *uw_record;
	const struct kf_uwtab *uw_replay;
	uint64_t key;
	/* the time of the sample being built (has_now: it has one), for
	 * JIT code named from a jitdump */
	uint64_t now;
	bool has_now;
	/* --stitch: a DWARF sample whose unwind ran out of the stack copy is
	 * completed from its thread's previous one (simpleperf's call-chain
	 * joiner): where that one has a frame with the cut frame's pc and
	 * stack pointer, the same frame of the same call, its callers follow.
	 * Each thread's reference is its latest unwound user stack
	 * (kf_thread.stitch indexes refs).  With uw_replay the cut samples
	 * are only counted: a bundle's unwinds keep no stack pointers. */
	bool stitch;
	struct kf_stitch_ref {
		struct kf_uframe *f;
		size_t n, cap;
		uint8_t end;      /* enum kf_unwind_end */
	} *refs;
	size_t n_refs, cap_refs;

	/* --stitch-lbr (perf's): an LBR call stack is completed with the
	 * outer callers its thread's previous LBR sample held where the two
	 * LBRs share their oldest records in the same registers
	 * (has_stitched_lbr); the callers stitched on stay for the next
	 * sample while each stitches.  kf_thread.lbr_stitch indexes
	 * lbr_refs. */
	bool stitch_lbr;
	struct kf_lbr_ref {
		uint64_t hw_idx;
		uint64_t *br;             /* from, to, flags of each record */
		struct kf_frame *fr;      /* the frame of each record's from */
		struct kf_frame *tail;    /* the callers stitched on, outermost
					     last */
		size_t nr, cap_br, cap_fr, n_tail, cap_tail;
		bool has;                 /* a previous sample is held */
	} *lbr_refs;
	size_t n_lbr_refs, cap_lbr_refs;

	/* the last mapping found in the kernel's and in a task's tree */
	struct kf_maps_hint khint, uhint;
	uint32_t hit_last;            /* the module resolve marked hit last
					 (a chain's frames come in runs of
					 one module: the others are not
					 written again) */
	/* the sample's process's jitdump (kf_tasks_jitdump), once
	 * jit_known: asked once a sample, not once a frame */
	uint32_t jit_dump;
	bool jit_known;

	/* per-sample scratch */
	struct kf_frame *frames;
	size_t cap_frames;
	struct kf_uframe *uframes;    /* KF_CHAIN_MAX_STACK, on first use */
};

/* Sets up a stage over the given tasks (mappings), modules (hit flags),
 * DSOs (the kernel's symbols) and environment (the architecture), all
 * borrowed.  pol (borrowed, static): the chain rules where perf 6.1 and
 * kfold differ (what a bad context marker drops, trailing zeros, unwound
 * return addresses minus one, the unwinder's rules).
 * name_unwound: NULL, or the namer of --compat=perf --inline, which must
 * name each unwound frame as it is made because perf asks its addr2line
 * children in that order and their answers depend on it.  Never fails. */
void kf_callchain_init(struct kf_callchain *cc, struct kf_tasks *tasks,
		       struct kf_modules *modules, struct kf_dsos *dsos,
		       const struct kf_env *env, const struct kf_policy *pol,
		       struct kf_namer *name_unwound);
/* Frees the scratch and the unwinder; a zeroed struct is fine. */
void kf_callchain_fini(struct kf_callchain *cc);

/* Makes the unwinder for DWARF events (call it when the first one is
 * seen: in pipe mode the attrs arrive in the stream).  Returns 0 (also
 * when it is already made or known impossible), KF_EUNSUPP the first time
 * the capture's architecture turns out to have no unwinder (its samples
 * then count as KF_UWS_ARCH), or KF_ENOMEM. */
int kf_callchain_unwinding(struct kf_callchain *cc);

/* Builds the chain of one sample of thread th, decoded with attr a:
 * the callchain walked (and, with user registers and stack, the user part
 * unwound), or without a callchain the sample's ip.  The frames are
 * borrowed until the next call.  Returns 0 or KF_ENOMEM. */
int kf_callchain_build(struct kf_callchain *cc, struct kf_thread *th,
		       const struct kf_attr *a, const struct kf_sample *smp,
		       struct kf_chain *out);

/* --stitch: sample smp of thread th is not folded (a filter left it
 * out, or it is another event's), but its user stack, if it has one, is
 * its thread's reference all the same, so that a filter does not change
 * the stacks of the samples it keeps.  Unwinds it without counting
 * anything.  0 or KF_ENOMEM. */
int kf_callchain_reference(struct kf_callchain *cc, struct kf_thread *th,
			   const struct kf_attr *a, const struct kf_sample *smp);

/* The sample's own ip as a frame: its module and address, looked up in
 * the thread's or the kernel's mappings by the sample's cpumode (what
 * perf annotate counts: machine__resolve of sample->ip).  A sample
 * without an ip gives a frame with KF_FRAME_NOMAP at 0. */
void kf_callchain_resolve_ip(struct kf_callchain *cc, struct kf_thread *th,
			     const struct kf_sample *smp, struct kf_frame *f);

/* The frame of a branch record's address: in the kernel's mappings for
 * an address in the top half (x86_64's and arm64's kernel addresses),
 * else in the thread's; an exact address (not a return address). */
void kf_callchain_resolve_branch(struct kf_callchain *cc, struct kf_thread *th,
				 const struct kf_sample *smp, uint64_t addr,
				 struct kf_frame *f);

/* The unwinder (NULL when none was made), for its per-module counts. */
const struct kf_unwinder *kf_callchain_unwinder(const struct kf_callchain *cc);

#endif
