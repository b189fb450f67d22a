/* unwind.h - a sample's user registers and stack copy -> return addresses.
 *
 * For `perf record --call-graph dwarf` samples: starting from the sampled
 * user registers, each frame's caller is found with the DWARF call frame
 * information (.eh_frame of the mapped file, .debug_frame of its debug
 * file) of the code at the pc, reading memory from the copy of the user
 * stack and, outside it, from the mapped file, as perf does.  Where a
 * module has no CFI at all, one frame-pointer step is taken only if the
 * stack shows it worked (the saved frame pointer and return address lie
 * in the copy and the return address is in executable code); such frames
 * are marked guessed.
 *
 * Produces addresses only (never names).  The CFI is the module's, shared
 * by every process that maps it; the rules found for a pc are cached per
 * (module, address), so repeated return addresses cost a hash lookup.
 * Nothing is opened or allocated per sample once the caches are warm.
 * It is one of dso.h's load steps: it loads a module's unwinding data
 * (kf_dsos_load, KF_DSO_LOAD_CFI) when it steps into the module or reads
 * its bytes, before any getter reads it.
 *
 * May use: util (policy.h among it), maps, module, dso, sample, libdw (only here).
 */
#ifndef KF_UNWIND_H
#define KF_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

#include "dso.h"
#include "maps.h"
#include "module.h"
#include "policy.h"
#include "sample.h"

/* Why an unwind stopped. */
enum kf_unwind_end {
	KF_UW_OUTERMOST = 0, /* reached the outermost frame (_start, clone) */
	KF_UW_STACK_END,     /* needed memory beyond the stack copy */
	KF_UW_NO_CFI,        /* no unwind information for the pc's module */
	KF_UW_NO_FILE,       /* the pc's module file was not found */
	KF_UW_MISMATCH,      /* the module file has another build-id */
	KF_UW_NO_MAP,        /* the pc is outside every mapping */
	KF_UW_JIT,           /* JIT or anonymous code: no CFI to use */
	KF_UW_DEPTH,         /* the depth limit */
	KF_UW_BAD_CFI,       /* the CFI could not be evaluated, or went
				nowhere (a frame that does not move the stack) */
	KF_UW_NO_REGS,       /* the sample has no user registers or stack */
	KF_UW_N_REASONS
};

/* Text for a reason ("stack copy exhausted", ...). */
const char *kf_unwind_end_str(enum kf_unwind_end e);

/* One unwound frame. */
struct kf_uframe {
	uint64_t pc;         /* the first frame's pc; then return addresses */
	uint64_t sp;         /* the stack pointer in this frame (the sampled
				one, then each caller's as the step found it):
				with pc, what --stitch matches frames of two
				samples by */
	bool guessed;        /* found by a frame-pointer step, not CFI */
	bool stitched;       /* --stitch: taken from an earlier sample */
};

struct kf_unwinder;

/* abi: what the capture says about the registers: "x86_64", "i386"
 * (the 32-bit user ABI of an x86_64 capture), "aarch64".  pol (borrowed,
 * static): where to unwind as perf 6.1 (libunwind) does, e.g. CFI from
 * .eh_frame only (cfi_eh_frame_only), no return address taken from [sp]
 * of a sampled frame without CFI (no_leaf_ra_guess), libunwind's
 * frame-pointer step (libunwind_fp_step).  Returns 0 or KF_ENOMEM /
 * KF_EUNSUPP. */
int kf_unwinder_new(struct kf_unwinder **out, struct kf_dsos *dsos,
		    struct kf_modules *modules, const char *arch,
		    const struct kf_policy *pol);
void kf_unwinder_free(struct kf_unwinder *u);

/* Unwinds the user part of sample s in address space maps (regs_mask is
 * the attr's sample_regs_user).  Writes up to max frames to out (first
 * the sampled pc), sets *n and returns why it stopped; *end_module is the
 * module the stop is charged to (0 = none). */
enum kf_unwind_end kf_unwind(struct kf_unwinder *u, const struct kf_maps *maps,
			     const struct kf_sample *s, uint64_t regs_mask,
			     struct kf_uframe *out, size_t max, size_t *n,
			     uint32_t *end_module);

/* The jitdump module of the process the next kf_unwind calls unwind (0:
 * none) and their sample's time: JIT code with an unwinding table there
 * (CODE_UNWINDING_INFO of the load that held the address at that time)
 * is unwound by it. */
void kf_unwinder_jit(struct kf_unwinder *u, uint32_t dump, uint64_t time, bool has_time);

/* Counts an unwind done elsewhere (a --symbols-only bundle's, on the
 * capture host) as kf_unwind counts its own. */
void kf_unwinder_tally(struct kf_unwinder *u, uint32_t module, enum kf_unwind_end e);

/* While on, unwinds are not counted (an unwind only --stitch uses). */
void kf_unwinder_quiet(struct kf_unwinder *u, bool on);

/* Cumulative counts of why unwinds ended, per module (module 0: none). */
uint64_t kf_unwinder_count(const struct kf_unwinder *u, uint32_t module,
			   enum kf_unwind_end e);

#endif
