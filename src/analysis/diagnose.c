/* diagnose.c - the diagnostics of a run and their hint texts. */
#include "diagnose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- why unwinds stopped -------------------------------------------------------- */

/* Samples recorded with --call-graph dwarf whose user stack was never
 * given to the unwinder lose every user frame: say so, with why. */
static const struct {
	const char *reason, *hint;
} uw_skips[KF_UWS_N] = {
	[KF_UWS_ARCH] = { "not unwound: no unwinder for the capture's architecture",
		"kfold unwinds x86_64, i386 and aarch64 user stacks" },
	[KF_UWS_COMPAT] = { "not unwound: perf 6.1 does not unwind it",
		"perf 6.1 on x86_64 unwinds x86_64 user stacks only, and so does "
		"--compat=perf; kfold's default mode unwinds these" },
	[KF_UWS_NO_CHAIN] = { "not unwound: the event samples no callchain",
		"perf unwinds a user stack only as part of a callchain: record "
		"with --call-graph dwarf" },
};

const char *kf_diag_skip_reason(enum kf_uw_skip k)
{
	return (unsigned)k < KF_UWS_N ? uw_skips[k].reason : "";
}

const char *kf_diag_skip_hint(enum kf_uw_skip k)
{
	return (unsigned)k < KF_UWS_N ? uw_skips[k].hint : "";
}

static size_t collect_stops(const uint64_t *skipped, const struct kf_unwinder *u,
			    size_t n_modules, struct kf_uw_stop *out, size_t max)
{
	size_t k = 0, m;
	int e;

	/* the samples never given to the unwinder first (end past the
	 * unwinder's reasons) */
	for (e = 0; e < KF_UWS_N; e++) {
		if (!skipped[e])
			continue;
		if (out && k < max)
			out[k] = (struct kf_uw_stop){ 0, (enum kf_unwind_end)(KF_UW_N_REASONS + e),
						      skipped[e] };
		k++;
	}
	if (!u)
		return k;
	for (m = 0; m < n_modules; m++) {
		for (e = 0; e < KF_UW_N_REASONS; e++) {
			uint64_t c = kf_unwinder_count(u, (uint32_t)m, (enum kf_unwind_end)e);

			KF_WORK(1);
			if (!c)
				continue;
			if (out && k < max)
				out[k] = (struct kf_uw_stop){ (uint32_t)m, (enum kf_unwind_end)e, c };
			k++;
		}
	}
	return k;
}

size_t kf_diag_count_stops(const uint64_t *skipped, const struct kf_unwinder *u,
			   size_t n_modules)
{
	return collect_stops(skipped, u, n_modules, NULL, 0);
}

static int cmp_stops(const void *a, const void *b)
{
	const struct kf_uw_stop *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->module != y->module)
		return x->module < y->module ? -1 : 1;
	return (int)x->end - (int)y->end;
}

int kf_diag_rank_stops(struct kf_uw_stops *st, const uint64_t *skipped,
		       const struct kf_unwinder *u, size_t n_modules)
{
	size_t n;

	if (st->ranked)
		return 0;
	n = collect_stops(skipped, u, n_modules, NULL, 0);
	st->v = kf_calloc(n ? n : 1, sizeof(*st->v));
	if (!st->v)
		return KF_ENOMEM;
	collect_stops(skipped, u, n_modules, st->v, n);
	KF_WORK(n);
	qsort(st->v, n, sizeof(*st->v), cmp_stops);
	st->n = n;
	st->ranked = true;
	return 0;
}

void kf_diag_stops_fini(struct kf_uw_stops *st)
{
	free(st->v);
	memset(st, 0, sizeof(*st));
}

void kf_diag_stop_text(enum kf_unwind_end end, const char **reason, const char **hint)
{
	if ((int)end >= KF_UW_N_REASONS) {
		*reason = kf_diag_skip_reason((enum kf_uw_skip)(end - KF_UW_N_REASONS));
		*hint = kf_diag_skip_hint((enum kf_uw_skip)(end - KF_UW_N_REASONS));
		return;
	}
	*reason = kf_unwind_end_str(end);
	switch (end) {
	case KF_UW_STACK_END:
		*hint = "record with a larger stack copy: --call-graph dwarf,SIZE "
			"(up to 65528), or complete the stacks from earlier samples: "
			"--stitch";
		break;
	case KF_UW_NO_CFI:
		*hint = "the code has no .eh_frame entry: install the module's "
			"debug file (with .debug_frame) or rebuild with "
			"-fasynchronous-unwind-tables";
		break;
	case KF_UW_NO_FILE:
		*hint = "the module's file was not found: give --symfs or a "
			"--buildid-dir holding it (perf archive)";
		break;
	case KF_UW_MISMATCH:
		*hint = "the file found is not the one recorded: give the "
			"recorded build through --symfs or --buildid-dir";
		break;
	case KF_UW_NO_MAP:
		*hint = "no mapping holds the pc: the capture may have lost "
			"MMAP records (see lost events)";
		break;
	case KF_UW_JIT:
		*hint = "the JIT code has no unwinding table: a runtime "
			"that keeps frame pointers, or one that writes its "
			"tables to a jitdump (V8: --perf-prof "
			"--perf-prof-unwinding-info) would help";
		break;
	case KF_UW_DEPTH:
		*hint = "the stack is deeper than 127 frames";
		break;
	default:
		*hint = "";
		break;
	}
}

/* ---- frame-pointer chains that broke ------------------------------------------- */

const char kf_diag_lbr_full_hint[] =
	"the LBR holds only the newest calls, so the callers beyond its depth "
	"are lost: --stitch-lbr completes such stacks from the thread's "
	"previous LBR sample (a guess), --call-graph fp or dwarf records "
	"whole stacks";

const char kf_diag_fp_hint[] =
	"a chain that stops before the program's entry went through "
	"code built without frame pointers: rebuild it with "
	"-fno-omit-frame-pointer or record with --call-graph dwarf";
const char kf_diag_fp_hint_explain[] =
	"rebuild with -fno-omit-frame-pointer or record with --call-graph dwarf";
const char kf_diag_fp_hint_stats[] =
	"built without frame pointers? record with --call-graph dwarf";

const char kf_diag_kernel_hint[] =
	"a cut kernel chain hit perf_event_max_stack or "
	"--max-stack (raise it); a stopped one met code the kernel's "
	"unwinder has no data for (a retpoline thunk, BPF, asm)";

/* Functions a complete user stack starts in (the outermost frame a
 * frame-pointer walk can reach: glibc's own start code has no frame
 * pointer, so __libc_start_call_main is often the last one seen). */
static const char *const outermost_fns[] = {
	"_start", "__libc_start_main", "__libc_start_call_main",
	"__libc_start_main_impl", "_dl_start_user", "_dl_start", "clone",
	"clone3", "__clone", "__clone3", "__clone_internal", "start_thread",
	"thread_start",
};

static bool is_outermost(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(outermost_fns) / sizeof(outermost_fns[0]); i++) {
		size_t n = strlen(outermost_fns[i]);

		/* versioned names: __libc_start_main@@GLIBC_2.34 */
		if (strncmp(name, outermost_fns[i], n) == 0 &&
		    (name[n] == '\0' || name[n] == '@'))
			return true;
	}
	return false;
}

/* most samples first, then by module id */
static int cmp_fp_breaks(const void *a, const void *b, void *arg)
{
	const uint64_t *per = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (per[x] != per[y])
		return per[x] > per[y] ? -1 : 1;
	return (x > y) - (x < y);
}

/* The modules with breaks in the order the getters give them, once. */
static void rank_fp_breaks(struct kf_fp_diag *fp, size_t n_modules)
{
	size_t k, n = 0;

	for (k = 0; k < n_modules; k++) {
		KF_WORK(1);
		n += fp->per_module[k] != 0;
	}
	fp->order = kf_calloc(n ? n : 1, sizeof(*fp->order));
	if (!fp->order)
		return;
	for (k = 0, n = 0; k < n_modules; k++)
		if (fp->per_module[k])
			fp->order[n++] = (uint32_t)k;
	KF_WORK(n);
	qsort_r(fp->order, n, sizeof(*fp->order), cmp_fp_breaks, fp->per_module);
	fp->n = n;
}

/* What a stack's outermost frame (the root's child) says of the stacks
 * through it: the same for all of them, so it is decided once. */
enum { FP_UNSEEN, FP_NOT_FP, FP_WHOLE, FP_BROKEN };

void kf_diag_count_fp(struct kf_fp_diag *fp, const struct kf_stacks *st,
		      kf_diag_frame_text text, void *ctx, size_t n_modules)
{
	uint32_t *outer;          /* per node: the outermost frame of its path */
	uint8_t *state;           /* per outermost node: FP_* */
	size_t i, n = st->n ? st->n : 1;

	if (fp->done)
		return;
	fp->done = true;
	fp->per_module = kf_calloc(n_modules ? n_modules : 1, sizeof(*fp->per_module));
	outer = kf_calloc(n, sizeof(*outer));
	state = kf_calloc(n, sizeof(*state));
	if (!fp->per_module || !outer || !state) {
		free(outer);
		free(state);
		return;
	}
	/* parents are older nodes: one pass in node order.  A root's outer
	 * stays 0, which tells its children they are outermost without
	 * reading the parent's node (a cache miss a node where outer[] is
	 * one ninth of the nodes' size) */
	for (i = 1; i < st->n; i++) {
		const struct kf_node *nd = &st->nodes[i];
		const struct kf_frame *f;
		uint32_t p = nd->parent, o, next;

		KF_WORK(1);
		if (!p)
			continue;   /* a root */
		o = outer[i] = outer[p] ? outer[p] : (uint32_t)i;
		if (!nd->samples)
			continue;
		f = &st->nodes[o].frame;
		if (state[o] == FP_UNSEEN) {
			const char *name;

			/* a frame in no mapping has no symbol: it is named
			 * by a bracketed placeholder or its address, never
			 * one of outermost_fns (and not asked: tens of
			 * thousands of such frames end a system-wide
			 * capture's broken chains, each a name of its own) */
			if (!(st->nodes[st->nodes[o].parent].frame.flags & KF_FRAME_FPCHAIN) ||
			    (f->flags & KF_FRAME_KERNEL))
				state[o] = FP_NOT_FP;
			else if (!f->module || (f->flags & KF_FRAME_NOMAP))
				state[o] = FP_BROKEN;
			else if (!(name = text(ctx, f)) || is_outermost(name))
				state[o] = FP_WHOLE;
			else
				state[o] = FP_BROKEN;
		}
		if (state[o] == FP_NOT_FP)
			continue;
		fp->samples += nd->samples;
		if (state[o] != FP_BROKEN)
			continue;
		fp->broken += nd->samples;
		/* garbage at the end of the chain: the frame inside it is
		 * the one whose function kept no frame pointer (found by
		 * walking up: only such stacks need it) */
		if ((f->flags & KF_FRAME_NOMAP) && o != i) {
			for (next = (uint32_t)i; st->nodes[next].parent != o;
			     next = st->nodes[next].parent)
				KF_WORK(1);
			if (!(st->nodes[next].frame.flags & KF_FRAME_KERNEL))
				f = &st->nodes[next].frame;
		}
		if (f->module < n_modules)
			fp->per_module[f->module] += nd->samples;
	}
	free(outer);
	free(state);
	rank_fp_breaks(fp, n_modules);
}

void kf_diag_fp_fini(struct kf_fp_diag *fp)
{
	free(fp->per_module);
	free(fp->order);
	memset(fp, 0, sizeof(*fp));
}

/* ---- names and source lines ------------------------------------------------- */

void kf_diag_unnamed(uint32_t module, enum kf_module_kind kind, enum kf_dso_status st,
		     bool has_symbols, const char **why, const char **hint)
{
	if (!module) {
		*why = "the address is in no mapping the capture recorded";
		*hint = "JIT code without /tmp/perf-PID.map, or a chain that "
			"broke into garbage (see unwinding)";
		return;
	}
	switch (st) {
	case KF_DSO_MISMATCH:
		*why = "the file found has another build-id than the recorded one";
		*hint = "give --symfs, --buildid-dir or a perf archive holding the "
			"recorded build";
		return;
	case KF_DSO_CHANGED:
		*why = "the file changed since recording";
		*hint = "give the recorded file with --symfs";
		return;
	case KF_DSO_NOT_RECORDED:
		*why = "the file at the recorded path is not the recorded one (its "
		       "segments do not fit the recorded mappings)";
		*hint = "give the recorded file with --symfs";
		return;
	default:
		break;
	}
	if (!has_symbols) {
		*why = "no symbols: the file was not found or has none";
		*hint = kind == KF_MOD_KERNEL ? "give --kallsyms of the recorded "
			"kernel" : kind == KF_MOD_JIT ? "keep /tmp/perf-PID.map "
			"(--perf-map-dir)" : "give --symfs or --buildid-dir holding "
			"the file, or install its debug file";
		return;
	}
	*why = "addresses outside every symbol of the file";
	*hint = "stripped code without symbols (install the debug file), or "
		"wrong frames from a broken chain";
}

const char *kf_diag_nolines_hint(const char *dso_hint)
{
	return dso_hint ? dso_hint : "install its debug file (Debian: the -dbgsym or -dbg "
		"package), give --debug-dir, --symfs or --buildid-dir holding it, "
		"or set DEBUGINFOD_URLS";
}

void kf_diag_debuginfo_advice(struct kf_buf *out, const char *name,
			      const char *build_id, bool suggest_debuginfod)
{
	kf_buf_printf(out, "install the debug file for %s%s%s (Debian: "
		      "its -dbgsym or -dbg package) or give --symfs or "
		      "--buildid-dir holding it%s", name,
		      build_id[0] ? ", build-id " : "", build_id,
		      suggest_debuginfod ? ", or set DEBUGINFOD_URLS "
		      "to a debuginfod server that has it" : "");
}
