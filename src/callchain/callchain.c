/* callchain.c - assembles a sample's raw frames (callchain.h).
 *
 * The walk follows perf 6.1's thread__resolve_callchain_sample
 * (tools/perf/util/machine.c); see docs/perf-compat.md for every rule.
 */
#include "callchain.h"

#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "maps.h"
#include "util.h"

void kf_callchain_init(struct kf_callchain *cc, struct kf_tasks *tasks,
		       struct kf_modules *modules, struct kf_dsos *dsos,
		       const struct kf_env *env, const struct kf_policy *pol,
		       struct kf_namer *name_unwound)
{
	memset(cc, 0, sizeof(*cc));
	cc->tasks = tasks;
	cc->modules = modules;
	cc->dsos = dsos;
	cc->env = env;
	cc->pol = pol;
	cc->name_unwound = name_unwound;
}

void kf_callchain_fini(struct kf_callchain *cc)
{
	size_t i;

	for (i = 0; i < cc->n_refs; i++)
		free(cc->refs[i].f);
	free(cc->refs);
	for (i = 0; i < cc->n_lbr_refs; i++) {
		free(cc->lbr_refs[i].br);
		free(cc->lbr_refs[i].fr);
		free(cc->lbr_refs[i].tail);
	}
	free(cc->lbr_refs);
	kf_unwinder_free(cc->unwinder);
	free(cc->frames);
	free(cc->uframes);
	memset(cc, 0, sizeof(*cc));
}

const struct kf_unwinder *kf_callchain_unwinder(const struct kf_callchain *cc)
{
	return cc->unwinder;
}

int kf_callchain_unwinding(struct kf_callchain *cc)
{
	int r;

	if (cc->unwinder || cc->unwinder_unsupported)
		return 0;
	r = kf_unwinder_new(&cc->unwinder, cc->dsos, cc->modules, cc->env->arch,
			     cc->pol);
	if (r) {
		kf_unwinder_free(cc->unwinder);
		cc->unwinder = NULL;
		if (r == KF_EUNSUPP)
			cc->unwinder_unsupported = true;
		return r;
	}
	return 0;
}

static bool push_frame(struct kf_callchain *cc, size_t *n, const struct kf_frame *f)
{
	if (!KF_GROW(cc->frames, cc->cap_frames, *n + 1))
		return false;
	cc->frames[(*n)++] = *f;
	return true;
}

/* After the first kernel symbol load perf widens the kernel map to the
 * symbols it got (dso__load_kernel_sym: map__fixup_start/end). */
struct find_module {
	uint32_t module;
	struct kf_map found;
	bool ok;
};

static bool find_module(const struct kf_map *m, void *arg)
{
	struct find_module *f = arg;

	if (m->module != f->module)
		return true;
	f->found = *m;
	f->ok = true;
	return false;
}

static void kernel_loaded(struct kf_callchain *cc, uint32_t kmod)
{
	const struct kf_symtab *t = kf_dso_symtab(cc->dsos, kmod);
	struct find_module f = { kmod, { 0 }, false };

	if (!t || !t->n)
		return;
	kf_maps_walk(&cc->tasks->kernel, find_module, &f);
	if (f.ok) {
		struct kf_map nm = f.found;

		nm.start = t->v[0].start;
		nm.end = t->v[t->n - 1].end;
		if (nm.end > nm.start)
			kf_maps_insert(&cc->tasks->kernel, &nm);
	}
}

/* The kernel's first frame: its symbols loaded (which can widen its
 * map), then ip's map again.  Out of resolve's way: once a run. */
static __attribute__((noinline, cold)) const struct kf_map *
kernel_first(struct kf_callchain *cc, uint32_t kmod, uint64_t ip)
{
	kf_dsos_load(cc->dsos, kmod, KF_DSO_LOAD_SYMS);   /* kallsyms */
	kernel_loaded(cc, kmod);
	return kf_maps_find_hint(&cc->tasks->kernel, ip, &cc->khint);
}

/* What resolve reads of the sample being built. */
static void sample_begins(struct kf_callchain *cc, const struct kf_sample *smp)
{
	cc->now = smp->time;
	cc->has_now = smp->has_time;
	cc->jit_known = false;
}

/* (inlined: it runs once a frame, and its own call cost a third of it) */
static inline __attribute__((always_inline)) void
resolve(struct kf_callchain *cc, struct kf_thread *th, unsigned cpumode, uint64_t ip,
	struct kf_frame *f)
{
	const struct kf_map *m = NULL;

	memset(f, 0, sizeof(*f));
	f->addr = ip;
	if (cpumode == KF_MISC_KERNEL) {
		f->flags |= KF_FRAME_KERNEL;
		m = kf_maps_find_hint(&cc->tasks->kernel, ip, &cc->khint);
		if (m && m->module == cc->tasks->kernel_module && !cc->dsos->kernel_loaded)
			m = kernel_first(cc, m->module, ip);
	} else if (cpumode == KF_MISC_USER && th->maps) {
		m = kf_maps_find_hint(th->maps, ip, &cc->uhint);
	}
	if (!m) {
		f->flags |= KF_FRAME_NOMAP;
		return;
	}
	f->module = m->module;
	if (!(f->flags & KF_FRAME_KERNEL) && !(m->flags & KF_MAP_IDENTITY))
		f->addr = ip - m->start + m->pgoff;
	/* JIT code: the load a jitdump says was there then, over the perf
	 * map and over a file's mapping too (V8 describes the builtins in its
	 * binary): perf inject --jit maps each load over what was there;
	 * perf script reads only the perf map */
	if (!(f->flags & KF_FRAME_KERNEL) && !cc->pol->perf_names) {
		uint32_t dump, code;

		if (!cc->jit_known) {
			cc->jit_dump = kf_tasks_jitdump(cc->tasks, th->pid);
			cc->jit_known = true;
		}
		dump = cc->jit_dump;
		if (dump && (code = kf_dsos_jit_code(cc->dsos, dump, ip, cc->now,
						     cc->has_now)) != 0) {
			f->module = code;
			f->addr = ip;
		}
	}
	if (f->module != cc->hit_last) {
		kf_modules_at(cc->modules, f->module)->hit = true;
		cc->hit_last = f->module;
	}
}

void kf_callchain_resolve_ip(struct kf_callchain *cc, struct kf_thread *th,
			     const struct kf_sample *smp, struct kf_frame *f)
{
	if (!smp->has_ip) {
		memset(f, 0, sizeof(*f));
		f->flags = KF_FRAME_NOMAP;
		return;
	}
	sample_begins(cc, smp);
	resolve(cc, th, smp->misc & KF_MISC_CPUMODE_MASK, smp->ip, f);
}

void kf_callchain_resolve_branch(struct kf_callchain *cc, struct kf_thread *th,
				 const struct kf_sample *smp, uint64_t addr,
				 struct kf_frame *f)
{
	sample_begins(cc, smp);
	resolve(cc, th, addr >> 63 ? KF_MISC_KERNEL : KF_MISC_USER, addr, f);
}

/* Walks the callchain leaf first, as perf does (ORDER_CALLEE).  Returns
 * the number of frames in cc->frames, or -1 on ENOMEM. */
static long walk_chain(struct kf_callchain *cc, struct kf_thread *th,
		       const struct kf_sample *smp, uint64_t n_chain, struct kf_chain *ch)
{
	unsigned cpumode = KF_MISC_USER;
	size_t n = 0, entries = 0;
	uint64_t i;
	bool first = true;

	/* at most one frame an entry: room for all at once */
	if (!KF_GROW(cc->frames, cc->cap_frames,
		     n_chain < KF_CHAIN_MAX_STACK ? (size_t)n_chain + 1 : KF_CHAIN_MAX_STACK))
		return -1;
	for (i = 0; i < n_chain && entries < KF_CHAIN_MAX_STACK; i++) {
		uint64_t ip = kf_sample_chain(smp, i);
		struct kf_frame *f;

		if (ip >= KF_CHAIN_CTX_MAX) {
			if (ip == KF_CHAIN_CTX_KERNEL)
				cpumode = KF_MISC_KERNEL;
			else if (ip == KF_CHAIN_CTX_USER) {
				cpumode = KF_MISC_USER;
				ch->user_marker = true;
			}
			else if (ip == KF_CHAIN_CTX_HV)
				cpumode = KF_MISC_HYPERVISOR;
			else if (cc->pol->discard_chain_on_unknown_marker)
				return 0;   /* perf discards the whole chain */
			else
				break;      /* the frames before it stand */
			first = true;
			continue;
		}
		entries++;
		KF_WORK(1);
		if (cpumode == KF_MISC_KERNEL)
			ch->n_kernel++;
		else if (cpumode == KF_MISC_USER)
			ch->n_user++;
		f = &cc->frames[n++];
		resolve(cc, th, cpumode, ip, f);
		/* the first entry of a context is an interrupted pc; the
		 * others are return addresses */
		if (!first)
			f->flags |= KF_FRAME_RA;
		first = false;
	}
	if (!cc->pol->keep_trailing_zero_frame) {
		/* a trailing 0 is the end marker of a user walk, not a frame */
		while (n > 0 && (cc->frames[n - 1].flags & KF_FRAME_NOMAP) &&
		       cc->frames[n - 1].addr == 0)
			n--;
	}
	return (long)n;
}

/* --call-graph dwarf: the user part comes from unwinding the sampled
 * registers and stack (thread__resolve_callchain_unwind); it follows the
 * kernel part of the callchain.  perf 6.1's libunwind path stores a
 * return address minus one (get_entries: "--ips[i]"), so with the
 * policy's unwind_store_ra_minus_one the frame is that address; kfold
 * keeps the return address and looks it up at ra - 1, which names the
 * same function. */

/* the architecture a capture was recorded on; none recorded: x86_64 */
static bool arch_is_x86_64(const char *arch)
{
	return !arch || strcmp(arch, "x86_64") == 0;
}

/* The unwinder's output, made at the first DWARF sample. */
static bool uframes_ready(struct kf_callchain *cc)
{
	if (!cc->uframes)
		cc->uframes = kf_calloc(KF_CHAIN_MAX_STACK, sizeof(*cc->uframes));
	return cc->uframes != NULL;
}

/* --stitch: completes the cut unwind uframes[0 .. *nu) of thread th from
 * the thread's reference (see struct kf_callchain), then makes it the
 * reference.  Where it was joined, *nu grows and *end becomes the
 * reference's.  false on ENOMEM. */
static bool stitch(struct kf_callchain *cc, struct kf_thread *th, size_t *nu,
		   enum kf_unwind_end *end)
{
	/* a bundle's unwinds have no stack pointers: counted, not joined */
	bool join = !cc->uw_replay;
	struct kf_stitch_ref *r = join && th->stitch && th->stitch <= cc->n_refs ?
				  &cc->refs[th->stitch - 1] : NULL;
	struct kf_uframe *u = cc->uframes;
	size_t n = *nu, j, k;

	if (!n)
		return true;   /* nothing unwound: the reference stays */
	if (*end == KF_UW_STACK_END) {
		cc->counts.samples_cut++;
		/* the innermost frame of the reference that is the cut
		 * frame: the same return address at the same stack pointer */
		for (j = 0; r && j < r->n; j++)
			if (r->f[j].pc == u[n - 1].pc && r->f[j].sp == u[n - 1].sp)
				break;
		if (r && j < r->n) {
			size_t add = r->n - j - 1;
			enum kf_unwind_end e = (enum kf_unwind_end)r->end;

			if (add > KF_CHAIN_MAX_STACK - n) {
				add = KF_CHAIN_MAX_STACK - n;
				e = KF_UW_DEPTH;
			}
			KF_WORK(j + add);
			for (k = 0; k < add; k++) {
				u[n + k] = r->f[j + 1 + k];
				u[n + k].stitched = true;
			}
			n += add;
			if (add || e != KF_UW_STACK_END) {
				cc->counts.samples_stitched++;
				cc->counts.frames_stitched += add;
			}
			*end = e;
		} else {
			KF_WORK(r ? r->n : 0);
		}
		if (*end == KF_UW_STACK_END)
			cc->counts.samples_still_cut++;
	}
	if (!join)
		return true;
	/* the (completed) stack is the thread's new reference */
	if (!r) {
		if (cc->n_refs >= UINT32_MAX - 1 ||
		    !KF_GROW(cc->refs, cc->cap_refs, cc->n_refs + 1))
			return false;
		r = &cc->refs[cc->n_refs++];
		memset(r, 0, sizeof(*r));
		th->stitch = (uint32_t)cc->n_refs;
	}
	if (!KF_GROW(r->f, r->cap, n))
		return false;
	memcpy(r->f, u, n * sizeof(*u));
	r->n = n;
	r->end = (uint8_t)*end;
	*nu = n;
	return true;
}

/* The unwinder reads the unwinding tables of the process's jitdump (not
 * under --compat=perf, which names JIT code from the perf map only) */
static void unwinder_jit(struct kf_callchain *cc, const struct kf_thread *th,
			 const struct kf_sample *smp)
{
	kf_unwinder_jit(cc->unwinder, cc->pol->perf_names ? 0 :
			kf_tasks_jitdump(cc->tasks, th->pid), smp->time, smp->has_time);
}

static long unwind_user(struct kf_callchain *cc, struct kf_thread *th,
			const struct kf_sample *smp, const struct kf_attr *a,
			size_t n, struct kf_chain *ch)
{
	size_t nu = 0, i, n0 = n;
	uint32_t endmod;
	enum kf_unwind_end end;

	cc->counts.samples_dwarf++;
	if (!cc->unwinder) {
		cc->counts.uw_skipped[KF_UWS_ARCH]++;
		return (long)n;
	}
	if (!th->maps)
		return (long)n;   /* never: kf_tasks_findnew gives every thread
				     an address space (an empty one is "pc
				     outside any mapping" in the unwinder) */
	if (!uframes_ready(cc))
		return -1;
	/* perf 6.1 on x86_64 unwinds x86_64 samples only ("unwind: target
	 * platform=x86 is not supported", also arm64): no user frame at all */
	if (cc->pol->unwind_x86_64_only &&
	    (smp->regs_user_abi == 1 || !arch_is_x86_64(cc->env->arch))) {
		cc->counts.uw_skipped[KF_UWS_COMPAT]++;
		return (long)n;
	}
	if (cc->uw_replay) {
		const struct kf_uwent *e = kf_uwtab_find(cc->uw_replay, cc->key);

		/* a sample the capture host did not unwind (never, but a
		 * damaged bundle): as one without registers */
		end = e ? (enum kf_unwind_end)e->end : KF_UW_NO_REGS;
		endmod = e && e->end_module < cc->modules->n ? e->end_module : 0;
		nu = e ? e->n : 0;
		if (nu > KF_CHAIN_MAX_STACK)
			nu = KF_CHAIN_MAX_STACK;
		if (nu)
			memcpy(cc->uframes, cc->uw_replay->frames + e->first,
			       nu * sizeof(*cc->uframes));
		kf_unwinder_tally(cc->unwinder, endmod, end);
	} else {
		unwinder_jit(cc, th, smp);
		end = kf_unwind(cc->unwinder, th->maps, smp, a->sample_regs_user,
				cc->uframes, KF_CHAIN_MAX_STACK, &nu, &endmod);
		if (cc->uw_record &&
		    !kf_uwtab_add(cc->uw_record, cc->key, end, endmod, cc->uframes, nu))
			cc->uw_record->failed = true;
	}
	KF_WORK(nu);
	if (cc->stitch && !stitch(cc, th, &nu, &end))
		return -1;
	if (nu)
		cc->counts.samples_unwound++;
	for (i = 0; i < nu; i++) {
		struct kf_frame f;
		uint64_t pc = cc->uframes[i].pc;

		if (!pc && i > 0 && cc->pol->unwind_zero_ra_frame) {
			/* a zero return address: perf prints 0 - 1 */
			memset(&f, 0, sizeof(f));
			f.flags = KF_FRAME_NOMAP;
			f.addr = UINT64_MAX;
			if (!push_frame(cc, &n, &f))
				return -1;
			continue;
		}
		if (!pc)
			continue;   /* perf skips zero entries */
		if (i > 0 && cc->pol->unwind_store_ra_minus_one && !--pc)
			continue;   /* a return address of 1: an entry of 0,
				       which perf skips too [U13] */
		resolve(cc, th, KF_MISC_USER, pc, &f);
		if (i > 0 && !cc->pol->unwind_store_ra_minus_one)
			f.flags |= KF_FRAME_RA;
		if (cc->name_unwound) {
			uint32_t id;

			/* name it now: perf asks its addr2line children in
			 * this order, and their answers depend on it */
			f.flags |= KF_FRAME_UNWOUND;
			/* the load step for what naming it reads: its
			 * symbols, then what they tell it needs */
			if (f.module &&
			    (kf_dsos_load(cc->dsos, f.module, KF_DSO_LOAD_SYMS) ||
			     kf_dsos_load(cc->dsos, f.module,
					  kf_namer_needs(cc->name_unwound, &f))))
				return -1;
			if (kf_namer_name(cc->name_unwound, &f, &id))
				return -1;
		}
		if (cc->uframes[i].guessed) {
			f.flags |= KF_FRAME_GUESSED;
			cc->counts.frames_guessed++;
		}
		if (cc->uframes[i].stitched)
			f.flags |= KF_FRAME_STITCHED;
		if (!push_frame(cc, &n, &f))
			return -1;
	}
	/* the copy of the stack ran out: libunwind reads the return address
	 * as 0, and perf prints that frame (0 - 1) as [unknown]; kfold marks
	 * the place [truncated] */
	if (end == KF_UW_STACK_END && nu < KF_CHAIN_MAX_STACK) {
		struct kf_frame f;

		memset(&f, 0, sizeof(f));
		f.flags = KF_FRAME_NOMAP;
		f.addr = UINT64_MAX;
		if (!cc->pol->stack_end_unknown_frame) {
			f.flags |= KF_FRAME_TRUNCATED;
			f.addr = 0;
		}
		if (!push_frame(cc, &n, &f))
			return -1;
	}
	/* the unwound frames are the sample's user part */
	ch->n_user += n - n0;
	return (long)n;
}

/* --call-graph lbr (the LBR in call-stack mode): where the callchain's
 * user part begins (its PERF_CONTEXT_USER), which the branch records
 * replace; n_chain when the sample's user part is the callchain's (no
 * call-stack LBR, or a chain without a user part: perf's
 * resolve_lbr_callchain_sample then falls back to the callchain). */
static uint64_t lbr_user_at(const struct kf_attr *a, const struct kf_sample *smp)
{
	uint64_t i;

	if (!(a->sample_type & KF_SAMPLE_BRANCH_STACK) ||
	    !(a->branch_sample_type & KF_BRANCH_CALL_STACK))
		return smp->n_chain;
	for (i = 0; i < smp->n_chain; i++)
		if (kf_sample_chain(smp, i) == KF_CHAIN_CTX_USER)
			break;
	return i;
}

/* The most callers --stitch-lbr keeps stitched on for a thread: perf
 * keeps them all, and its guesses can join a recursion's stacks into ever
 * longer ones (the records of its calls look alike); past this many the
 * thread starts again from its next sample's own records. */
#define KF_LBR_MAX_TAIL 4096

/* The thread's --stitch-lbr reference, made at its first LBR sample. */
static struct kf_lbr_ref *lbr_ref(struct kf_callchain *cc, struct kf_thread *th)
{
	struct kf_lbr_ref *r;

	if (th->lbr_stitch && th->lbr_stitch <= cc->n_lbr_refs)
		return &cc->lbr_refs[th->lbr_stitch - 1];
	if (cc->n_lbr_refs >= UINT32_MAX - 1 ||
	    !KF_GROW(cc->lbr_refs, cc->cap_lbr_refs, cc->n_lbr_refs + 1))
		return NULL;
	r = &cc->lbr_refs[cc->n_lbr_refs++];
	memset(r, 0, sizeof(*r));
	th->lbr_stitch = (uint32_t)cc->n_lbr_refs;
	return r;
}

/* perf's has_stitched_lbr: whether the sample's oldest records are the
 * previous sample's records in the same registers (hw_idx is the newest
 * record's register; max the LBR's depth), and if so, the previous
 * sample's callers beyond them go in front of the stitched-on callers.
 * false on ENOMEM too (nothing is stitched then). */
static bool lbr_stitched(struct kf_lbr_ref *r, const struct kf_sample *smp, uint64_t max)
{
	uint64_t base = max - smp->n_branches + smp->hw_idx + 1, dist;
	uint64_t same = 0, add;
	int64_t i, j;

	if (!r->has || !r->nr)
		return false;
	/* unsigned arithmetic, as perf's */
	dist = r->hw_idx > base ? r->hw_idx - base : max + r->hw_idx - base;
	if (dist >= r->nr)
		return false;
	for (i = (int64_t)dist, j = (int64_t)smp->n_branches - 1; i >= 0 && j >= 0; i--, j--) {
		struct kf_branch b;

		kf_sample_branch(smp, (uint64_t)j, &b);
		if (r->br[3 * i] != b.from || r->br[3 * i + 1] != b.to ||
		    r->br[3 * i + 2] != b.flags)
			break;
		same++;
	}
	if (!same)
		return false;
	add = r->nr - 1 - dist;
	if (!add)
		return true;   /* stitched: the callers stitched on stay */
	if (r->n_tail + add > KF_LBR_MAX_TAIL)
		return false;
	if (!KF_GROW(r->tail, r->cap_tail, r->n_tail + add))
		return false;
	if (r->n_tail)
		memmove(r->tail + add, r->tail, r->n_tail * sizeof(*r->tail));
	memcpy(r->tail, r->fr + dist + 1, add * sizeof(*r->tail));
	r->n_tail += add;
	return true;
}

/* The user part of an LBR call stack, after the kernel part (n frames).
 * The branch records are the calls not yet returned from, newest first:
 * each `from` is a call instruction, in the caller (an exact address,
 * not a return address).  The innermost frame: kfold's own mode takes
 * the sampled pc (the callchain's entry after PERF_CONTEXT_USER, as the
 * kernel recorded it); perf takes the newest call's target, the start of
 * the function the pc is in (lbr_callchain_add_lbr_ip), which names the
 * same function but not the line.  An LBR as deep as the hardware's
 * (CPU_PMU_CAPS "branches") lost the callers beyond it; --stitch-lbr
 * takes them from the thread's previous sample where it can. */
static long lbr_user(struct kf_callchain *cc, struct kf_thread *th,
		     const struct kf_sample *smp, uint64_t user, size_t n,
		     struct kf_chain *ch)
{
	size_t n0 = n;
	uint64_t i, max = cc->env->max_branches;
	struct kf_frame f;
	struct kf_branch b;
	struct kf_lbr_ref *r = NULL;
	bool stitched = false;

	cc->counts.samples_lbr++;
	if (smp->n_branches == 0) {
		/* no records (perf reads an entry that is not there): the
		 * sampled pc alone */
		cc->counts.samples_lbr_empty++;
		if (user + 1 < smp->n_chain) {
			resolve(cc, th, KF_MISC_USER, kf_sample_chain(smp, user + 1), &f);
			if (!push_frame(cc, &n, &f))
				return -1;
		}
		ch->n_user += n - n0;
		return (long)n;
	}
	if (max && smp->n_branches >= max)
		cc->counts.samples_lbr_full++;
	if (cc->stitch_lbr && smp->has_hw_idx && max) {
		if (!(r = lbr_ref(cc, th)))
			return -1;
		stitched = lbr_stitched(r, smp, max);
		if (!stitched)
			r->n_tail = 0;
		/* this sample is the next one's previous */
		if (!KF_GROW(r->br, r->cap_br, 3 * smp->n_branches) ||
		    !KF_GROW(r->fr, r->cap_fr, smp->n_branches))
			return -1;
		r->has = true;
		r->nr = smp->n_branches;
		r->hw_idx = smp->hw_idx;
	}
	kf_sample_branch(smp, 0, &b);
	resolve(cc, th, KF_MISC_USER, !cc->pol->perf_names && user + 1 < smp->n_chain ?
		kf_sample_chain(smp, user + 1) : b.to, &f);
	if (!push_frame(cc, &n, &f))
		return -1;
	for (i = 0; i < smp->n_branches; i++) {
		KF_WORK(1);
		kf_sample_branch(smp, i, &b);
		resolve(cc, th, KF_MISC_USER, b.from, &f);
		if (r) {
			r->br[3 * i] = b.from;
			r->br[3 * i + 1] = b.to;
			r->br[3 * i + 2] = b.flags;
			r->fr[i] = f;
		}
		if (!push_frame(cc, &n, &f))
			return -1;
	}
	if (max && smp->n_branches >= max && !(stitched && r->n_tail))
		cc->counts.samples_lbr_stopped++;
	if (stitched && r->n_tail) {
		cc->counts.samples_lbr_stitched++;
		cc->counts.frames_lbr_stitched += r->n_tail;
		for (i = 0; i < r->n_tail; i++) {
			f = r->tail[i];
			f.flags |= KF_FRAME_STITCHED;
			if (!push_frame(cc, &n, &f))
				return -1;
		}
	}
	ch->n_user += n - n0;
	return (long)n;
}

int kf_callchain_build(struct kf_callchain *cc, struct kf_thread *th,
		       const struct kf_attr *a, const struct kf_sample *smp,
		       struct kf_chain *out)
{
	bool dwarf = (a->sample_type & KF_SAMPLE_REGS_USER) &&
		     (a->sample_type & KF_SAMPLE_STACK_USER);
	long n = 0;

	memset(out, 0, sizeof(*out));
	sample_begins(cc, smp);
	if (a->sample_type & KF_SAMPLE_CALLCHAIN) {
		uint64_t user = lbr_user_at(a, smp);

		n = walk_chain(cc, th, smp, user < smp->n_chain ? user + 1 : smp->n_chain, out);
		if (n >= 0 && user < smp->n_chain)
			n = lbr_user(cc, th, smp, user, (size_t)n, out);
		else if (n >= 0 && dwarf)
			n = unwind_user(cc, th, smp, a, (size_t)n, out);
	} else {
		if (smp->has_ip) {
			struct kf_frame f;
			unsigned cm = smp->misc & KF_MISC_CPUMODE_MASK;
			size_t k = 0;

			resolve(cc, th, cm == KF_MISC_KERNEL ? KF_MISC_KERNEL :
				cm == KF_MISC_USER ? KF_MISC_USER : KF_MISC_HYPERVISOR,
				smp->ip, &f);
			if (!push_frame(cc, &k, &f))
				return KF_ENOMEM;
			n = (long)k;
		}
		if (dwarf) {
			/* perf unwinds a sample's user stack only as part of
			 * its callchain */
			cc->counts.samples_dwarf++;
			cc->counts.uw_skipped[KF_UWS_NO_CHAIN]++;
		}
	}
	if (n < 0)
		return KF_ENOMEM;
	out->frames = cc->frames;
	out->n = (size_t)n;
	return 0;
}

int kf_callchain_reference(struct kf_callchain *cc, struct kf_thread *th,
			   const struct kf_attr *a, const struct kf_sample *smp)
{
	struct kf_chain_counts saved = cc->counts;
	enum kf_unwind_end end;
	uint32_t endmod;
	size_t nu = 0;
	bool ok;

	if (cc->stitch_lbr && (a->sample_type & KF_SAMPLE_CALLCHAIN) &&
	    lbr_user_at(a, smp) < smp->n_chain) {
		struct kf_chain ch;
		int r = kf_callchain_build(cc, th, a, smp, &ch);

		cc->counts = saved;   /* a sample not folded counts nowhere */
		return r;
	}
	if (!cc->stitch || cc->uw_replay || !cc->unwinder || !th->maps ||
	    !(a->sample_type & KF_SAMPLE_CALLCHAIN) ||
	    !(a->sample_type & KF_SAMPLE_REGS_USER) ||
	    !(a->sample_type & KF_SAMPLE_STACK_USER))
		return 0;   /* (--stitch is not part of --compat=perf, whose
			       unwinding rules unwind_user follows) */
	if (!uframes_ready(cc))
		return KF_ENOMEM;
	kf_unwinder_quiet(cc->unwinder, true);
	unwinder_jit(cc, th, smp);
	end = kf_unwind(cc->unwinder, th->maps, smp, a->sample_regs_user,
			cc->uframes, KF_CHAIN_MAX_STACK, &nu, &endmod);
	kf_unwinder_quiet(cc->unwinder, false);
	KF_WORK(nu);
	ok = stitch(cc, th, &nu, &end);
	cc->counts = saved;   /* a sample not folded counts nowhere */
	return ok ? 0 : KF_ENOMEM;
}

void kf_uwtab_init(struct kf_uwtab *t)
{
	memset(t, 0, sizeof(*t));
	kf_map64_init(&t->index);
}

void kf_uwtab_fini(struct kf_uwtab *t)
{
	free(t->v);
	free(t->frames);
	kf_map64_fini(&t->index);
	memset(t, 0, sizeof(*t));
}

static uint64_t uw_hash(const struct kf_uwtab *t, uint64_t key)
{
	uint64_t h = kf_hash64(kf_hash64(key ^ t->seed) ^ t->seed);

	return h == UINT64_MAX ? 0 : h;
}

const struct kf_uwent *kf_uwtab_find(const struct kf_uwtab *t, uint64_t key)
{
	uint32_t i;

	if (!kf_map64_get(&t->index, uw_hash(t, key), &i))
		return NULL;
	for (;;) {
		if (t->v[i].key == key)
			return &t->v[i];
		if (!t->v[i].next)
			return NULL;
		i = t->v[i].next - 1;
	}
}

bool kf_uwtab_add(struct kf_uwtab *t, uint64_t key, enum kf_unwind_end end,
		  uint32_t end_module, const struct kf_uframe *frames, size_t n)
{
	struct kf_uwent *e;
	uint64_t h = uw_hash(t, key);
	uint32_t head = 0;

	if (key == UINT64_MAX || n > UINT16_MAX)
		return false;
	if (kf_uwtab_find(t, key))
		return true;
	if (t->n >= UINT32_MAX - 1 || t->n_frames + n >= UINT32_MAX ||
	    !KF_GROW(t->v, t->cap, t->n + 1) ||
	    !KF_GROW(t->frames, t->cap_frames, t->n_frames + n))
		return false;
	/* the new entry heads its hash's chain */
	if (kf_map64_get(&t->index, h, &head))
		head++;
	if (!kf_map64_put(&t->index, h, (uint32_t)t->n))
		return false;
	e = &t->v[t->n++];
	e->key = key;
	e->end = (uint8_t)end;
	e->end_module = end_module;
	e->n = (uint16_t)n;
	e->next = head;
	e->first = (uint32_t)t->n_frames;
	if (n)
		memcpy(t->frames + t->n_frames, frames, n * sizeof(*frames));
	t->n_frames += n;
	return true;
}
