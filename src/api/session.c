/* session.c - implements kfold.h: wires the stages together.
 *
 *   perfdata (records) -> order (time order) -> tasks (state) | sample
 *   -> frames (callchain walk, map lookup) -> stacks (trie)
 *   -> symbolize (names) -> folded text
 *
 * The callchain walk follows perf 6.1's thread__resolve_callchain_sample
 * (tools/perf/util/machine.c); see docs/perf-compat.md for every rule.
 */
#include "kfold.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cur.h"
#include "dso.h"
#include "emit-folded.h"
#include "error.h"
#include "fs.h"
#include "header.h"
#include "maps.h"
#include "module.h"
#include "order.h"
#include "perfdata.h"
#include "sample.h"
#include "stacks.h"
#include "symbolize.h"
#include "tasks.h"
#include "unwind.h"
#include "util.h"

#include "session.h"

const char *kf_version(void)
{
	return KF_VERSION;
}

static void logf_(struct kf_session *s, enum kf_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void logf_(struct kf_session *s, enum kf_log_level lvl, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	if (!s->o.log)
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	s->o.log(s->o.log_payload, lvl, buf);
}

static void dso_warn(void *payload, const char *msg)
{
	logf_(payload, KF_LOG_WARN, "%s", msg);
}

static char *dup_opt(const char *s)
{
	return s ? kf_strndup(s, strlen(s)) : NULL;
}

void kf_options_init(kf_options *o)
{
	memset(o, 0, sizeof(*o));
	o->compat = KF_COMPAT_NONE;
	o->inline_frames = true;
	o->root = KF_ROOT_COMM;
	o->context = KF_CONTEXT_NONE;
}

int kf_session_new(kf_session **out, const kf_options *opts)
{
	kf_options defaults;
	kf_options_init(&defaults);
	struct kf_session *s = kf_calloc(1, sizeof(*s));

	*out = s;
	if (!s)
		return KF_ENOMEM;
	s->o = opts ? *opts : defaults;
	s->symfs = dup_opt(s->o.symfs);
	s->kallsyms = dup_opt(s->o.kallsyms);
	s->vmlinux = dup_opt(s->o.vmlinux);
	s->perf_map_dir = dup_opt(s->o.perf_map_dir);
	s->event = dup_opt(s->o.event);
	if (s->o.n_debug_dirs) {
		size_t k;

		if (s->o.n_debug_dirs > 64)
			return kf_fail(&s->err, KF_EINVAL, "more than 64 debug directories");
		s->debug_dirs = kf_calloc(s->o.n_debug_dirs, sizeof(*s->debug_dirs));
		if (!s->debug_dirs)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		for (k = 0; k < s->o.n_debug_dirs; k++) {
			s->debug_dirs[k] = strdup(s->o.debug_dirs[k] ? s->o.debug_dirs[k] : "");
			if (!s->debug_dirs[k])
				return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		}
	}
	if (s->o.compat != KF_COMPAT_NONE && s->o.compat != KF_COMPAT_PERF)
		return kf_fail(&s->err, KF_EINVAL, "unknown compat mode %d", s->o.compat);
	if (s->o.context != KF_CONTEXT_NONE || s->o.exclude)
		s->o.classify = true;
	if (s->o.classify) {
		if (s->o.compat == KF_COMPAT_PERF)
			return kf_fail(&s->err, KF_EINVAL, "kernel contexts (--context, "
				       "--exclude, JSON, --explain) are not part of "
				       "--compat=perf");
		if ((unsigned)s->o.context > KF_CONTEXT_VERDICT ||
		    s->o.exclude >= 1u << KF_CTX_NVERDICTS)
			return kf_fail(&s->err, KF_EINVAL, "bad context option");
		s->rules = kf_calloc(1, sizeof(*s->rules));
		if (!s->rules)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		if (kf_ctx_rules_init(s->rules))
			return kf_fail(&s->err, KF_EINVAL, "the context rules are broken");
	}
	/* the build-id cache: --symfs moves it to SYMFS/.debug in perf 6.1
	 * even over --buildid-dir (symbol__config_symfs); kfold does the
	 * same unless --buildid-dir was given, and in --compat=perf always */
	if (s->symfs && (!s->o.buildid_dir || s->o.compat == KF_COMPAT_PERF)) {
		size_t n = strlen(s->symfs) + 8;

		s->buildid_dir = malloc(n);
		if (s->buildid_dir)
			snprintf(s->buildid_dir, n, "%s/.debug", s->symfs);
	} else if (s->o.buildid_dir) {
		s->buildid_dir = dup_opt(s->o.buildid_dir);
	} else {
		const char *env = getenv("PERF_BUILDID_DIR");
		const char *home = getenv("HOME");

		if (env && *env) {
			s->buildid_dir = dup_opt(env);
		} else if (home && *home) {
			size_t n = strlen(home) + 8;

			s->buildid_dir = malloc(n);
			if (s->buildid_dir)
				snprintf(s->buildid_dir, n, "%s/.debug", home);
		}
	}
	if (!kf_strtab_init(&s->strings) || !kf_strtab_init(&s->roots) ||
	    kf_modules_init(&s->modules) || kf_stacks_init(&s->stacks))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	kf_buf_init(&s->line);
	kf_buf_init(&s->root);
	kf_buf_init(&s->advice);
	s->fs.no_files = s->o.no_files;
	return 0;
}

void kf_session_free(kf_session *s)
{
	if (!s)
		return;
	kf_unwinder_free(s->unwinder);
	free(s->rules);
	free(s->uframes);
	kf_diag_fp_fini(&s->fp);
	free(s->hit);
	free(s->hit_bid);
	kf_diag_stops_fini(&s->stops);
	if (s->namer_ready)
		kf_namer_fini(&s->namer);
	if (s->dsos_ready)
		kf_dsos_fini(&s->dsos);
	if (s->tasks_ready)
		kf_tasks_fini(&s->tasks);
	kf_order_free(s->order);
	kf_pd_free(s->pd);
	kf_stacks_fini(&s->stacks);
	kf_modules_fini(&s->modules);
	kf_strtab_fini(&s->strings);
	kf_strtab_fini(&s->roots);
	kf_buf_fini(&s->line);
	kf_buf_fini(&s->root);
	kf_buf_fini(&s->advice);
	free(s->frames);
	kf_map64_fini(&s->rd_ids);
	kf_map64_fini(&s->rd_slot);
	free(s->rd_last);
	free(s->filter);
	free(s->attr_samples);
	free(s->symfs);
	free(s->kallsyms);
	free(s->vmlinux);
	free(s->buildid_dir);
	free(s->perf_map_dir);
	if (s->debug_dirs) {
		size_t k;

		for (k = 0; k < s->o.n_debug_dirs; k++)
			free(s->debug_dirs[k]);
		free(s->debug_dirs);
	}
	free(s->event);
	free(s);
}

const char *kf_session_errmsg(const kf_session *s)
{
	if (!s)
		return "out of memory";
	return s->err.msg;
}

const kf_stats *kf_session_stats(const kf_session *s)
{
	return &s->stats;
}

/* ---- samples -------------------------------------------------------------- */

static bool push_frame(struct kf_session *s, size_t *n, const struct kf_frame *f)
{
	if (!KF_GROW(s->frames, s->cap_frames, *n + 1))
		return false;
	s->frames[(*n)++] = *f;
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

static void kernel_loaded(struct kf_session *s, uint32_t kmod)
{
	const struct kf_symtab *t = kf_dso_symtab(&s->dsos, kmod);
	struct find_module f = { kmod, { 0 }, false };

	if (!t || !t->n)
		return;
	kf_maps_walk(&s->tasks.kernel, find_module, &f);
	if (f.ok) {
		struct kf_map nm = f.found;

		nm.start = t->v[0].start;
		nm.end = t->v[t->n - 1].end;
		if (nm.end > nm.start)
			kf_maps_insert(&s->tasks.kernel, &nm);
	}
}

static void resolve(struct kf_session *s, struct kf_thread *th, unsigned cpumode,
		    uint64_t ip, struct kf_frame *f)
{
	const struct kf_map *m = NULL;

	memset(f, 0, sizeof(*f));
	f->addr = ip;
	if (cpumode == KF_MISC_KERNEL) {
		f->flags |= KF_FRAME_KERNEL;
		m = kf_maps_find(&s->tasks.kernel, ip);
		if (m && m->module == s->tasks.kernel_module && !s->dsos.kernel_loaded) {
			uint32_t kmod = m->module;

			kf_dso_status(&s->dsos, kmod);   /* loads kallsyms */
			kernel_loaded(s, kmod);
			m = kf_maps_find(&s->tasks.kernel, ip);
		}
	} else if (cpumode == KF_MISC_USER && th->maps) {
		m = kf_maps_find(th->maps, ip);
	}
	if (!m) {
		f->flags |= KF_FRAME_NOMAP;
		return;
	}
	f->module = m->module;
	if (!(f->flags & KF_FRAME_KERNEL) && !(m->flags & KF_MAP_IDENTITY))
		f->addr = ip - m->start + m->pgoff;
	kf_modules_at(&s->modules, m->module)->hit = true;
}

/* Walks the callchain leaf first, as perf does (ORDER_CALLEE).  Returns
 * the number of frames in s->frames, or -1 on ENOMEM. */
static long walk_chain(struct kf_session *s, struct kf_thread *th,
		       const struct kf_sample *smp)
{
	unsigned cpumode = KF_MISC_USER;
	size_t n = 0, entries = 0;
	uint64_t i;
	bool first = true;

	s->chain_kernel = s->chain_user = 0;
	s->chain_user_marker = false;
	for (i = 0; i < smp->n_chain && entries < PERF_MAX_STACK; i++) {
		uint64_t ip = kf_sample_chain(smp, i);
		struct kf_frame f;

		if (ip >= CTX_MAX) {
			if (ip == CTX_KERNEL)
				cpumode = KF_MISC_KERNEL;
			else if (ip == CTX_USER) {
				cpumode = KF_MISC_USER;
				s->chain_user_marker = true;
			}
			else if (ip == CTX_HV)
				cpumode = KF_MISC_HYPERVISOR;
			else if (s->o.compat == KF_COMPAT_PERF)
				return 0;   /* perf discards the whole chain */
			else
				break;      /* the frames before it stand */
			first = true;
			continue;
		}
		entries++;
		KF_WORK(1);
		if (cpumode == KF_MISC_KERNEL)
			s->chain_kernel++;
		else if (cpumode == KF_MISC_USER)
			s->chain_user++;
		resolve(s, th, cpumode, ip, &f);
		/* the first entry of a context is an interrupted pc; the
		 * others are return addresses */
		if (!first)
			f.flags |= KF_FRAME_RA;
		first = false;
		if (!push_frame(s, &n, &f))
			return -1;
	}
	if (s->o.compat != KF_COMPAT_PERF) {
		/* a trailing 0 is the end marker of a user walk, not a frame */
		while (n > 0 && (s->frames[n - 1].flags & KF_FRAME_NOMAP) &&
		       s->frames[n - 1].addr == 0)
			n--;
	}
	return (long)n;
}

/* --call-graph dwarf: the user part comes from unwinding the sampled
 * registers and stack (thread__resolve_callchain_unwind); it follows the
 * kernel part of the callchain.  perf 6.1's libunwind path stores a
 * return address minus one (get_entries: "--ips[i]"), so in --compat=perf
 * the frame is that address; kfold keeps the return address and looks it
 * up at ra - 1, which names the same function. */

/* the architecture a capture was recorded on; none recorded: x86_64 */
static bool arch_is_x86_64(const char *arch)
{
	return !arch || strcmp(arch, "x86_64") == 0;
}
static long unwind_user(struct kf_session *s, struct kf_thread *th,
			const struct kf_sample *smp, const struct kf_attr *a,
			size_t n)
{
	size_t nu = 0, i, n0 = n;
	uint32_t endmod;
	enum kf_unwind_end end;

	s->stats.samples_dwarf++;
	if (!s->unwinder) {
		s->uw_skipped[KF_UWS_ARCH]++;
		return (long)n;
	}
	if (!th->maps)
		return (long)n;   /* never: kf_tasks_findnew gives every thread
				     an address space (an empty one is "pc
				     outside any mapping" in the unwinder) */
	if (!s->uframes) {
		s->uframes = kf_calloc(PERF_MAX_STACK, sizeof(*s->uframes));
		if (!s->uframes)
			return -1;
	}
	/* perf 6.1 on x86_64 unwinds x86_64 samples only ("unwind: target
	 * platform=x86 is not supported", also arm64): no user frame at all */
	if (s->o.compat == KF_COMPAT_PERF &&
	    (smp->regs_user_abi == 1 || !arch_is_x86_64(kf_pd_env(s->pd)->arch))) {
		s->uw_skipped[KF_UWS_COMPAT]++;
		return (long)n;
	}
	end = kf_unwind(s->unwinder, th->maps, smp, a->sample_regs_user, s->uframes,
			PERF_MAX_STACK, &nu, &endmod);
	KF_WORK(nu);
	if (nu)
		s->stats.samples_unwound++;
	for (i = 0; i < nu; i++) {
		struct kf_frame f;
		uint64_t pc = s->uframes[i].pc;

		if (!pc && i > 0 && s->o.compat == KF_COMPAT_PERF) {
			/* a zero return address: perf prints 0 - 1 */
			memset(&f, 0, sizeof(f));
			f.flags = KF_FRAME_NOMAP;
			f.addr = UINT64_MAX;
			if (!push_frame(s, &n, &f))
				return -1;
			continue;
		}
		if (!pc)
			continue;   /* perf skips zero entries */
		if (i > 0 && s->o.compat == KF_COMPAT_PERF)
			pc--;
		resolve(s, th, KF_MISC_USER, pc, &f);
		if (i > 0 && s->o.compat != KF_COMPAT_PERF)
			f.flags |= KF_FRAME_RA;
		if (s->namer.compat_inline) {
			uint32_t id;

			/* name it now: perf asks its addr2line children in
			 * this order, and their answers depend on it */
			f.flags |= KF_FRAME_UNWOUND;
			if (kf_namer_frame_id(&s->namer, &f, false, &id))
				return -1;
		}
		if (s->uframes[i].guessed) {
			f.flags |= KF_FRAME_GUESSED;
			s->stats.frames_guessed++;
		}
		if (!push_frame(s, &n, &f))
			return -1;
	}
	/* the copy of the stack ran out: libunwind reads the return address
	 * as 0, and perf prints that frame (0 - 1) as [unknown]; kfold marks
	 * the place [truncated] */
	if (end == KF_UW_STACK_END && nu < PERF_MAX_STACK) {
		struct kf_frame f;

		memset(&f, 0, sizeof(f));
		f.flags = KF_FRAME_NOMAP;
		f.addr = UINT64_MAX;
		if (s->o.compat != KF_COMPAT_PERF) {
			f.flags |= KF_FRAME_TRUNCATED;
			f.addr = 0;
		}
		if (!push_frame(s, &n, &f))
			return -1;
	}
	/* the unwound frames are the sample's user part */
	s->chain_user += n - n0;
	return (long)n;
}

static bool event_matches(const char *name, const char *want)
{
	size_t n;

	if (strcmp(name, want) == 0)
		return true;
	/* "cpu-clock" picks "cpu-clock:u" too: modifiers may be left out */
	n = strlen(want);
	return strncmp(name, want, n) == 0 && name[n] == ':' && !strchr(want, ':');
}

/* perf script's header line after the comm (docs/perf-compat.md F1, F3):
 * " %5d [%03d] %12s: %10lu %*s: " with cpu and time only when the event
 * type's first non-dummy event samples them. */
static void header_rest(struct kf_session *s, int attr_idx,
			const struct kf_sample *smp, const char *evname)
{
	const struct kf_attr *a = kf_pd_attr(s->pd, (size_t)attr_idx);
	const struct kf_attr *first = a;
	uint32_t otype = a->type < 6 ? a->type : 6;
	size_t i;

	for (i = 0; i < kf_pd_n_attrs(s->pd); i++) {
		const struct kf_attr *b = kf_pd_attr(s->pd, i);
		uint32_t bt = b->type < 6 ? b->type : 6;

		if (bt != otype || (b->type == 1 && b->config == 9))
			continue;
		first = b;
		break;
	}
	/* perf script takes the width at the first sample it prints, from
	 * the events known then (in pipe mode, their attrs and names arrive
	 * in the stream, before the first sample) */
	if (!s->name_width) {
		for (i = 0; i < kf_pd_n_attrs(s->pd); i++) {
			int w = (int)strlen(kf_pd_event_name(s->pd, i));

			if (w > s->name_width)
				s->name_width = w;
		}
	}
	s->line.len = 0;
	kf_buf_printf(&s->line, " %5d ", smp->has_tid ? (int)smp->tid : -1);
	if (first->sample_type & KF_SAMPLE_CPU)
		kf_buf_printf(&s->line, "[%03d] ", smp->has_cpu ? (int)smp->cpu : -1);
	if (first->sample_type & KF_SAMPLE_TIME) {
		char t[48];

		snprintf(t, sizeof(t), "%" PRIu64 ".%06" PRIu64,
			 smp->time / 1000000000u, smp->time % 1000000000u / 1000u);
		kf_buf_printf(&s->line, "%12s: ", t);
	}
	kf_buf_printf(&s->line, "%10" PRIu64 " ", smp->period);
	kf_buf_printf(&s->line, "%*s: ", s->name_width, evname);
}

/* What the context classifier needs to know about a sample besides its
 * frames, kept on its root frame (kernel-contexts.md sec. 5). */
static void ctx_root(struct kf_session *s, const struct kf_thread *th,
		     const struct kf_attr *a, const struct kf_sample *smp,
		     struct kf_frame *root)
{
	unsigned max = a->sample_max_stack ? a->sample_max_stack : PERF_MAX_STACK;

	root->addr = (uint64_t)(uint32_t)th->pid << 32 | (uint32_t)th->tid;
	root->flags |= (uint32_t)(smp->misc & KF_MISC_CPUMODE_MASK)
		       << KF_FRAME_CTX_CPUMODE_SHIFT;
	if (!(a->sample_type & KF_SAMPLE_CALLCHAIN)) {
		root->flags |= KF_FRAME_CTX_NO_CHAIN;
	} else {
		if (s->chain_user)
			root->flags |= KF_FRAME_CTX_USER_PART;
		/* the kernel stops at max_stack entries; a user marker
		 * without entries means the chain ran out right there */
		if (s->chain_kernel >= max || s->chain_kernel >= PERF_MAX_STACK ||
		    (s->chain_user_marker && s->chain_user == 0))
			root->flags |= KF_FRAME_CTX_TRUNCATED;
	}
	/* kthreadd is pid 2; kernel threads are its children */
	if (th->pid == 2 || th->ppid == 2)
		root->flags |= KF_FRAME_CTX_KTHREAD;
}

/* Folds one delivered sample: `a` is the attr that laid the record out,
 * `evidx` the event it is delivered as (a member's for a group value, see
 * deliver_read) and smp->period its weight. */
static int fold_sample(struct kf_session *s, const struct kf_attr *a, int evidx,
		       const struct kf_sample *psmp)
{
	const struct kf_sample smp = *psmp;
	struct kf_thread *th;
	const char *evname, *comm;
	uint64_t weight;
	long nframes = 0;
	uint32_t node, rid;
	struct kf_frame root;
	size_t i;

	if (evidx >= 0 && (size_t)evidx >= s->n_attr_samples) {
		size_t n = (size_t)evidx + 1;
		uint64_t *v = kf_reallocarray(s->attr_samples, n, sizeof(*v));

		if (!v)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		memset(v + s->n_attr_samples, 0, (n - s->n_attr_samples) * sizeof(*v));
		s->attr_samples = v;
		s->n_attr_samples = n;
	}
	if (evidx >= 0)
		s->attr_samples[evidx]++;
	evname = kf_pd_event_name(s->pd, (size_t)evidx);
	if (s->event && !event_matches(evname, s->event))
		return 0;
	/* with --event, the first matching event's full name is the one
	 * folded (kf_session_folded_attr, the reports' notes) */
	if (s->event && !s->filter_set) {
		s->filter = kf_strndup(evname, strlen(evname));
		s->filter_set = true;
	}

	th = kf_tasks_findnew(&s->tasks, smp.has_tid ? (int32_t)smp.pid : -1,
			      smp.has_tid ? (int32_t)smp.tid : -1);
	if (!th)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	comm = kf_thread_comm(&s->tasks, th);
	weight = smp.period;

	if (s->o.compat == KF_COMPAT_PERF) {
		const char *ev, *per;
		size_t evlen, perlen;

		/* without a callchain perf script prints one line per
		 * sample, which stackcollapse-perf.pl does not fold */
		if (!(a->sample_type & KF_SAMPLE_CALLCHAIN))
			return 0;
		header_rest(s, evidx, &smp, evname);
		kf_namer_root(&s->namer, comm, th->pid, th->tid, kf_buf_cstr(&s->line),
			      &s->root);
		if (s->root.len == 0)
			return 0;   /* the header regex did not match */
		/* the period and event stackcollapse reads from the line */
		{
			struct kf_buf full;

			kf_buf_init(&full);
			kf_buf_puts(&full, comm);
			kf_buf_puts(&full, kf_buf_cstr(&s->line));
			if (kf_collapse_header_event(kf_buf_cstr(&full), full.len, &ev,
						     &evlen, &per, &perlen)) {
				weight = 0;
				for (i = 0; i < perlen; i++)
					weight = weight * 10 + (uint64_t)(per[i] - '0');
				if (!s->event) {
					if (!s->filter_set) {
						s->filter = kf_strndup(ev, evlen);
						s->filter_set = true;
					} else if (!s->filter || strlen(s->filter) != evlen ||
						   memcmp(s->filter, ev, evlen) != 0) {
						kf_buf_fini(&full);
						return 0;
					}
				}
			} else {
				weight = 0;
			}
			kf_buf_fini(&full);
		}
		if (weight == 0)
			weight = 1;
		/* perf script's default fields for a tracepoint print no file
		 * on the callchain lines ("ip sym", no "(dso)"), which
		 * stackcollapse-perf.pl does not recognize: it folds the comm
		 * alone (docs/perf-compat.md F9) */
		if (a->type == 2) {
			nframes = 0;
		} else {
			nframes = walk_chain(s, th, &smp);
			if (nframes >= 0 && (a->sample_type & KF_SAMPLE_REGS_USER) &&
			    (a->sample_type & KF_SAMPLE_STACK_USER))
				nframes = unwind_user(s, th, &smp, a, (size_t)nframes);
		}
	} else {
		if (!s->event) {
			if (!s->filter_set) {
				s->filter = kf_strndup(evname, strlen(evname));
				s->filter_set = true;
			} else if (!s->filter || strcmp(s->filter, evname) != 0) {
				return 0;
			}
		}
		kf_namer_root(&s->namer, comm, th->pid, th->tid, NULL, &s->root);
		if (a->sample_type & KF_SAMPLE_CALLCHAIN) {
			nframes = walk_chain(s, th, &smp);
			if (nframes >= 0 && (a->sample_type & KF_SAMPLE_REGS_USER) &&
			    (a->sample_type & KF_SAMPLE_STACK_USER))
				nframes = unwind_user(s, th, &smp, a, (size_t)nframes);
		} else if (smp.has_ip) {
			struct kf_frame f;
			unsigned cm = smp.misc & KF_MISC_CPUMODE_MASK;

			resolve(s, th, cm == KF_MISC_KERNEL ? KF_MISC_KERNEL :
				cm == KF_MISC_USER ? KF_MISC_USER : KF_MISC_HYPERVISOR,
				smp.ip, &f);
			nframes = 0;
			if (!push_frame(s, (size_t *)&nframes, &f))
				return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		}
		if (!(a->sample_type & KF_SAMPLE_CALLCHAIN) &&
		    (a->sample_type & KF_SAMPLE_REGS_USER) &&
		    (a->sample_type & KF_SAMPLE_STACK_USER)) {
			/* perf unwinds a sample's user stack only as part of
			 * its callchain */
			s->stats.samples_dwarf++;
			s->uw_skipped[KF_UWS_NO_CHAIN]++;
		}
		if (weight == 0)
			weight = 1;
	}
	if (nframes < 0 || s->root.oom)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	if (s->o.count_samples)
		weight = 1;
	s->stats.samples_folded++;

	if (!kf_strtab_intern(&s->roots, kf_buf_cstr(&s->root), s->root.len, &rid))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	memset(&root, 0, sizeof(root));
	root.flags = KF_FRAME_ROOT;
	if ((a->sample_type & KF_SAMPLE_CALLCHAIN) &&
	    !((a->sample_type & KF_SAMPLE_REGS_USER) &&
	      (a->sample_type & KF_SAMPLE_STACK_USER)))
		root.flags |= KF_FRAME_FPCHAIN;
	root.module = rid;
	if (s->o.classify)
		ctx_root(s, th, a, &smp, &root);
	node = kf_stacks_child(&s->stacks, 0, &root);
	for (i = (size_t)nframes; node && i-- > 0;)
		node = kf_stacks_child(&s->stacks, node, &s->frames[i]);
	if (!node)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	if (!kf_stacks_add(&s->stacks, node, weight))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	return 0;
}

/* The slot of the last counter value seen for a group value's id (perf
 * 6.1's perf_sample_id.period, one per id of the header), or, when the
 * event counts per thread, for (id, tid).  -1 on ENOMEM. */
static long read_slot(struct kf_session *s, uint64_t id, bool per_thread,
		      uint32_t tid)
{
	uint32_t idx, slot;
	uint64_t key;

	/* ids are those of the header (at most KF_MAX_IDS < 2^32), so the
	 * key never is the map's reserved ~0 */
	if (!kf_map64_get(&s->rd_ids, id, &idx)) {
		idx = (uint32_t)s->rd_ids.n;
		if (!kf_map64_put(&s->rd_ids, id, idx))
			return -1;
	}
	key = (uint64_t)idx << 33 | (per_thread ? 1ull << 32 | tid : 0);
	if (!kf_map64_get(&s->rd_slot, key, &slot)) {
		if (s->rd_n >= UINT32_MAX ||
		    !KF_GROW(s->rd_last, s->rd_cap, s->rd_n + 1))
			return -1;
		slot = (uint32_t)s->rd_n;
		s->rd_last[slot] = 0;
		if (!kf_map64_put(&s->rd_slot, key, slot))
			return -1;
		s->rd_n++;
	}
	return (long)slot;
}

/* PERF_SAMPLE_READ (perf 6.1's evlist__deliver_sample and
 * deliver_sample_value, tools/perf/util/session.c): each counter value of
 * the record is delivered as a sample of the event its id names, weighted
 * by how much that counter grew since the last value with this id (u64
 * arithmetic: a counter that went back gives a huge weight, as in perf;
 * the first value weighs all of itself); an id the header does not list
 * is an unknown-id sample; a value that did not grow is not delivered.
 * perf 6.1 keeps one last value per id; the kernel (6.12 and later)
 * counts inherited threads separately, so the default mode keeps one per
 * (id, thread) for an event with inherit and PERF_SAMPLE_TID (what perf
 * 6.12 does), --compat=perf one per id. */
static int deliver_read(struct kf_session *s, const struct kf_attr *a,
			struct kf_sample *smp, uint64_t offset)
{
	uint64_t i;

	/* perf 6.1 stops reading the file at a group of no values
	 * (deliver_sample_group returns -EINVAL); it weighs nothing */
	if (!smp->n_read && !s->warned_read_empty++)
		logf_(s, KF_LOG_WARN, "offset %#" PRIx64 ": a sample reads no "
		      "counter values: nothing to weigh, skipped", offset);

	for (i = 0; i < smp->n_read; i++) {
		uint64_t value, id;
		const struct kf_attr *va;
		bool per_thread;
		long slot;
		int ev, r;

		KF_WORK(1);
		kf_sample_read_value(smp, i, &value, &id);
		ev = kf_pd_attr_of_id(s->pd, id);
		if (ev < 0) {
			s->stats.samples_unknown_id++;
			continue;
		}
		va = kf_pd_attr(s->pd, (size_t)ev);
		per_thread = s->o.compat != KF_COMPAT_PERF && smp->has_tid &&
			     (va->sample_type & KF_SAMPLE_READ) &&
			     (va->sample_type & KF_SAMPLE_TID) &&
			     kf_attr_flag(va, KF_ATTR_INHERIT);
		slot = read_slot(s, id, per_thread, smp->tid);
		if (slot < 0)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		smp->period = value - s->rd_last[slot];
		s->rd_last[slot] = value;
		if (!smp->period)
			continue;
		r = fold_sample(s, a, ev, smp);
		if (r)
			return r;
	}
	return 0;
}

static int on_sample(struct kf_session *s, const struct kf_rec *rec)
{
	struct kf_sample smp;
	enum kf_sample_err e;
	const struct kf_attr *a;

	s->stats.samples++;
	if (rec->attr < 0) {
		s->stats.samples_unknown_id++;
		return 0;
	}
	a = kf_pd_attr(s->pd, (size_t)rec->attr);
	e = kf_sample_decode(a, kf_pd_swapped(s->pd), rec->data, rec->size, &smp);
	if (e != KF_SAMPLE_OK && e != KF_SAMPLE_TRAILING) {
		if (s->stats.samples_bad++ == 0)
			logf_(s, KF_LOG_WARN, "offset %#" PRIx64 ": sample skipped: %s",
			      rec->offset, kf_sample_strerror(e));
		return 0;
	}
	/* perf script filters guest samples (perf_guest is off) */
	if ((smp.misc & KF_MISC_CPUMODE_MASK) >= KF_MISC_GUEST_KERNEL &&
	    s->o.compat == KF_COMPAT_PERF)
		return 0;
	if (smp.has_time && smp.time) {
		if (!s->first_time || smp.time < s->first_time)
			s->first_time = smp.time;
		if (smp.time > s->last_time)
			s->last_time = smp.time;
		s->dsos.last_time = s->last_time;
		s->dsos.has_time = true;
	}
	if (a->sample_type & KF_SAMPLE_READ) {
		if (smp.read_has_id)
			return deliver_read(s, a, &smp, rec->offset);
		/* without ids the values name no event: perf 6.1 refuses
		 * such a capture ("non matching read_format",
		 * evlist__valid_read_format); kfold weighs it by its period
		 * field */
		if (!s->warned_read_no_id++)
			logf_(s, KF_LOG_WARN, "offset %#" PRIx64 ": event %s reads "
			      "counter values without ids (read_format lacks "
			      "PERF_FORMAT_ID): its samples are weighted by their "
			      "period field", rec->offset,
			      kf_pd_event_name(s->pd, (size_t)rec->attr));
	}
	return fold_sample(s, a, rec->attr, &smp);
}

/* ---- record delivery ----------------------------------------------------------- */

static int deliver(struct kf_session *s, const struct kf_rec *rec)
{
	switch (rec->type) {
	case KF_REC_SAMPLE:
		return on_sample(s, rec);
	case KF_REC_LOST:
		if (rec->size >= 24)
			s->stats.lost_events += kf_load64(rec->data + 16,
							  kf_pd_swapped(s->pd));
		return 0;
	case KF_REC_LOST_SAMPLES:
		if (rec->size >= 16)
			s->stats.lost_samples += kf_load64(rec->data + 8,
							   kf_pd_swapped(s->pd));
		return 0;
	case KF_REC_THROTTLE:
		s->stats.throttles++;
		return 0;
	case KF_REC_UNTHROTTLE:
		s->stats.unthrottles++;
		return 0;
	case KF_REC_COMM:
	case KF_REC_FORK:
	case KF_REC_EXIT:
	case KF_REC_MMAP:
	case KF_REC_MMAP2:
	case KF_REC_KSYMBOL: {
		int r = kf_tasks_apply(&s->tasks, rec);

		return r ? kf_fail(&s->err, r, "out of memory") : 0;
	}
	case KF_REC_READ:
	case KF_REC_AUX:
	case KF_REC_ITRACE_START:
	case KF_REC_SWITCH:
	case KF_REC_SWITCH_CPU_WIDE:
	case KF_REC_NAMESPACES:
	case KF_REC_BPF_EVENT:
	case KF_REC_CGROUP:
	case KF_REC_TEXT_POKE:
	case KF_REC_AUX_OUTPUT_HW_ID:
	case KF_REC_CALLCHAIN_DEFERRED:
		return 0;
	default:
		s->stats.unknown_records++;
		return 0;
	}
}

static int drain(struct kf_session *s)
{
	struct kf_rec rec;
	uint64_t t;

	while (kf_order_pop(s->order, &rec, &t)) {
		int r = deliver(s, &rec);

		if (r)
			return r;
	}
	return 0;
}

/* The setup each event needs, run once per attr as soon as the session
 * can see it: at open for the attrs of a file's header, and in pipe mode
 * (perf record -o -, perf inject -o -) when its HEADER_ATTR record has
 * been read from the stream, before the first record that follows it is
 * handled.  The reader consumes every metadata record in front of a data
 * record, so the features sent with the attrs (the architecture) are
 * known by then too.  Everything derived from the attrs is set up here
 * or looked up when a record needs it, never only at open: in pipe mode
 * there are no attrs at open. */
static int events_arrived(struct kf_session *s)
{
	size_t n = kf_pd_n_attrs(s->pd);
	int r;

	for (; s->n_events < n; s->n_events++) {
		const struct kf_attr *a = kf_pd_attr(s->pd, s->n_events);

		if ((a->sample_type & KF_SAMPLE_REGS_USER) &&
		    (a->sample_type & KF_SAMPLE_STACK_USER))
			s->dwarf_events = true;
	}
	if (!s->dwarf_events || s->unwinder || s->unwinder_unsupported)
		return 0;
	r = kf_unwinder_new(&s->unwinder, &s->dsos, &s->modules,
			    kf_pd_env(s->pd)->arch);
	if (r == KF_EUNSUPP) {
		logf_(s, KF_LOG_WARN, "user stacks of a %s capture cannot be "
		      "unwound yet; only the kernel part of each stack is shown",
		      kf_pd_env(s->pd)->arch);
		kf_unwinder_free(s->unwinder);
		s->unwinder = NULL;
		s->unwinder_unsupported = true;
		return 0;
	}
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	kf_unwinder_set_compat(s->unwinder, s->o.compat == KF_COMPAT_PERF);
	return 0;
}

static int setup_stages(struct kf_session *s)
{
	struct kf_dso_opts dopts;
	int r;

	r = kf_tasks_init(&s->tasks, &s->strings, &s->modules, kf_pd_swapped(s->pd));
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	s->tasks_ready = true;
	s->tasks.exec_flushes_maps = false;
	memset(&dopts, 0, sizeof(dopts));
	dopts.symfs = s->symfs;
	dopts.buildid_dir = s->buildid_dir;
	dopts.kallsyms = s->kallsyms;
	dopts.vmlinux = s->vmlinux;
	dopts.perf_map_dir = s->perf_map_dir;
	dopts.compat_perf = s->o.compat == KF_COMPAT_PERF;
	dopts.debug_dirs = (const char *const *)s->debug_dirs;
	dopts.n_debug_dirs = s->o.n_debug_dirs;
	kf_dsos_init(&s->dsos, &dopts, &s->fs, &s->modules, kf_pd_env(s->pd),
		     dso_warn, s);
	/* the samples' clock: perf's default (sched_clock) unless the first
	 * event was recorded with -k CLOCKID */
	s->dsos.clockid = -1;
	if (kf_pd_n_attrs(s->pd) &&
	    kf_attr_flag(kf_pd_attr(s->pd, 0), KF_ATTR_USE_CLOCKID))
		s->dsos.clockid = kf_pd_attr(s->pd, 0)->clockid;
	s->dsos_ready = true;
	r = kf_namer_init(&s->namer, &s->dsos, &s->modules, &s->strings,
			  s->o.compat == KF_COMPAT_PERF, s->o.suffixes,
			  s->o.show_addrs, (int)s->o.root);
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	s->namer.inline_frames = s->o.inline_frames && s->o.compat != KF_COMPAT_PERF;
	s->namer.srcline = s->o.srcline && s->o.compat != KF_COMPAT_PERF;
	s->namer.compat_inline = s->o.inline_frames && s->o.compat == KF_COMPAT_PERF;
	s->namer_ready = true;
	r = kf_order_new(&s->order, s->o.max_queue_bytes ? s->o.max_queue_bytes :
			 KF_MAX_QUEUE_BYTES);
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	/* perf falls back to file order when the first event has no
	 * sample_id_all: sideband records have no time then.  Not in pipe
	 * mode, where perf_session__new has no attrs to look at yet and
	 * keeps time order (records without a time are delivered at once) */
	s->ordered = !s->o.file_order && (kf_pd_is_pipe(s->pd) ||
					  kf_pd_n_attrs(s->pd) == 0 ||
					  kf_pd_attr(s->pd, 0)->sample_id_all);
	return events_arrived(s);
}

/* The kernel map's reference symbol ("[kernel.kallsyms]_text") and its
 * recorded address, for relocating kallsyms. */
static void note_kernel_ref(struct kf_session *s, const struct kf_rec *rec)
{
	const uint8_t *p = rec->data + 8;
	size_t n = rec->size - 8u, off = rec->type == KF_REC_MMAP2 ? 56 : 32;
	bool sw = kf_pd_swapped(s->pd);
	const char *name;
	size_t len;

	if ((rec->misc & KF_MISC_CPUMODE_MASK) != KF_MISC_KERNEL || n <= off + 17)
		return;
	name = (const char *)p + off;
	len = strnlen(name, n - off);
	if (len < 17 || memcmp(name, "[kernel.kallsyms]", 17) != 0)
		return;
	snprintf(s->dsos.kref_name, sizeof(s->dsos.kref_name), "%.*s",
		 (int)(len - 17), name + 17);
	{
		char *br = strchr(s->dsos.kref_name, ']');

		if (br)
			*br = '\0';
	}
	s->dsos.kref_addr = kf_load64(p + 24, sw);   /* pgoff */
}

/* The capture's events, each name once, with the samples read of each:
 * "cpu-clock (201 samples), dummy:u (0 samples)". */
#define KF_LIST_EVENTS 24
static void list_events(struct kf_session *s, struct kf_buf *out)
{
	char *names[KF_LIST_EVENTS];
	uint64_t counts[KF_LIST_EVENTS];
	size_t i, k, n = 0, more = 0;

	for (i = 0; i < kf_pd_n_attrs(s->pd); i++) {
		const char *nm = kf_pd_event_name(s->pd, i);
		uint64_t c = i < s->n_attr_samples ? s->attr_samples[i] : 0;

		for (k = 0; k < n && strcmp(names[k], nm) != 0; k++)
			;
		if (k < n) {
			counts[k] += c;
		} else if (n < KF_LIST_EVENTS &&
			   (names[n] = kf_strndup(nm, strlen(nm)))) {
			counts[n++] = c;
		} else {
			more++;
		}
	}
	if (!n)
		kf_buf_puts(out, "none");
	for (k = 0; k < n; k++) {
		kf_buf_printf(out, "%s%s (%" PRIu64 " sample%s)", k ? ", " : "",
			      names[k], counts[k], counts[k] == 1 ? "" : "s");
		free(names[k]);
	}
	if (more)
		kf_buf_printf(out, " and %zu more", more);
}

/* --event that names no event of the capture is a usage error; a capture
 * (or an event) without samples gives empty output, which must not pass
 * for a profile without a word. */
static int check_selection(struct kf_session *s)
{
	struct kf_buf evs;
	bool known = false;
	size_t i;
	int r = 0;

	kf_buf_init(&evs);
	if (s->event)
		for (i = 0; i < kf_pd_n_attrs(s->pd) && !known; i++)
			known = event_matches(kf_pd_event_name(s->pd, i), s->event);
	if (s->event && !known) {
		list_events(s, &evs);
		r = kf_fail(&s->err, KF_EINVAL, "--event %s: the capture has no "
			    "such event; its events: %s", s->event, kf_buf_cstr(&evs));
	} else if (s->stats.samples == 0) {
		logf_(s, KF_LOG_WARN, "the capture holds no samples: the output "
		      "is empty");
	} else if (s->stats.samples_folded == 0) {
		/* which events had samples says what to ask for instead */
		list_events(s, &evs);
		if (s->event)
			logf_(s, KF_LOG_WARN, "--event %s: no sample of it was "
			      "folded: the output is empty (the capture's "
			      "events: %s)", s->event, kf_buf_cstr(&evs));
		else
			logf_(s, KF_LOG_WARN, "none of the capture's %" PRIu64
			      " samples was folded: the output is empty (its "
			      "events: %s)", s->stats.samples, kf_buf_cstr(&evs));
	}
	kf_buf_fini(&evs);
	return r;
}

/* Samples recorded with --call-graph dwarf whose user stack was never
 * given to the unwinder lose every user frame: say so, with why. */
static void warn_not_unwound(struct kf_session *s)
{
	int k;

	for (k = 0; k < KF_UWS_N; k++) {
		if (s->uw_skipped[k])
			logf_(s, KF_LOG_WARN, "%" PRIu64 " of %" PRIu64 " samples "
			      "recorded with --call-graph dwarf were not unwound "
			      "(no user frames): %s; %s", s->uw_skipped[k],
			      s->stats.samples_dwarf,
			      kf_diag_skip_reason((enum kf_uw_skip)k) +
			      strlen("not unwound: "),
			      kf_diag_skip_hint((enum kf_uw_skip)k));
	}
}

static int run(struct kf_session *s)
{
	struct kf_rec rec;
	const char *w;
	int r;

	r = setup_stages(s);
	if (r)
		return r;
	for (;;) {
		struct kf_sample_id sid;

		r = kf_pd_next(s->pd, &rec);
		if (r < 0)
			return r;
		if (r == 0)
			break;
		s->stats.records++;
		while ((w = kf_pd_take_warning(s->pd)))
			logf_(s, KF_LOG_WARN, "%s", w);
		if (kf_pd_n_attrs(s->pd) > s->n_events) {
			r = events_arrived(s);
			if (r)
				return r;
		}
		if (rec.type == KF_REC_FINISHED_ROUND) {
			if (s->ordered) {
				kf_order_flush(s->order, KF_ORDER_ROUND);
				r = drain(s);
				if (r)
					return r;
			}
			/* what the queue no longer holds is not needed again */
			kf_pd_release(s->pd, kf_order_min_stable(s->order));
			continue;
		}
		if (rec.type >= KF_REC_USER_START)
			continue;
		if (rec.type == KF_REC_MMAP || rec.type == KF_REC_MMAP2)
			note_kernel_ref(s, &rec);
		if (s->ordered && kf_pd_sample_id(s->pd, &rec, &sid) && sid.has_time &&
		    sid.time != 0 && sid.time != UINT64_MAX) {
			r = kf_order_push(s->order, &rec, sid.time);
			if (r)
				return kf_fail(&s->err, r, "out of memory");
			if (kf_order_over(s->order)) {
				kf_order_flush(s->order, KF_ORDER_HALF);
				r = drain(s);
				if (r)
					return r;
			}
			continue;
		}
		r = deliver(s, &rec);
		if (r)
			return r;
	}
	while ((w = kf_pd_take_warning(s->pd)))
		logf_(s, KF_LOG_WARN, "%s", w);
	kf_order_flush(s->order, KF_ORDER_FINAL);
	r = drain(s);
	if (r)
		return r;
	s->stats.out_of_order = kf_order_out_of_order(s->order);
	s->stats.queue_peak_bytes = kf_order_peak_bytes(s->order);
	s->stats.bytes = kf_pd_bytes_read(s->pd);
	switch (kf_pd_end_reason(s->pd)) {
	case KF_PD_END_CLEAN:
		break;
	case KF_PD_END_CUT:
		s->stats.input_cut = true;
		logf_(s, KF_LOG_WARN, "%s", kf_pd_end_message(s->pd));
		break;
	case KF_PD_END_DAMAGED:
		s->stats.input_damaged = true;
		logf_(s, KF_LOG_WARN, "%s", kf_pd_end_message(s->pd));
		break;
	}
	if (s->stats.lost_events)
		logf_(s, KF_LOG_WARN, "%" PRIu64 " events were lost while recording "
		      "(the ring buffer overflowed); stacks are incomplete",
		      s->stats.lost_events);
	if (s->stats.lost_samples)
		logf_(s, KF_LOG_WARN, "%" PRIu64 " samples were lost while recording",
		      s->stats.lost_samples);
	if (s->stats.throttles)
		logf_(s, KF_LOG_WARN, "sampling was throttled %" PRIu64 " times",
		      s->stats.throttles);
	if (s->stats.out_of_order)
		logf_(s, KF_LOG_WARN, "%" PRIu64 " records arrived more than one round "
		      "late (out of order)", s->stats.out_of_order);
	if (s->stats.samples_unknown_id)
		logf_(s, KF_LOG_WARN, "%" PRIu64 " samples have an event id the header "
		      "does not list; skipped", s->stats.samples_unknown_id);
	if (s->stats.samples_bad)
		logf_(s, KF_LOG_WARN, "%" PRIu64 " samples could not be decoded; skipped",
		      s->stats.samples_bad);
	if (s->tasks.bad_records)
		logf_(s, KF_LOG_WARN, "%" PRIu64 " sideband records were too short; skipped",
		      s->tasks.bad_records);
	warn_not_unwound(s);
	return check_selection(s);
}

static int after_open(struct kf_session *s, int r)
{
	const char *w;

	if (r) {
		if (s->pd)
			while ((w = kf_pd_take_warning(s->pd)))
				logf_(s, KF_LOG_WARN, "%s", w);
		return r;
	}
	r = run(s);
	s->stats.work += kf_work - s->work0;
	return r;
}

static int begin_load(kf_session *s)
{
	if (s->loaded)
		return kf_fail(&s->err, KF_EINVAL, "a session loads one capture");
	s->loaded = true;
	s->work0 = kf_work;
	return 0;
}

int kf_session_load_path(kf_session *s, const char *path)
{
	int r = begin_load(s);

	return r ? r : after_open(s, kf_pd_open_path(&s->pd, path, &s->err));
}

int kf_session_load_fd(kf_session *s, int fd, const char *name)
{
	int r = begin_load(s);

	return r ? r : after_open(s, kf_pd_open_fd(&s->pd, fd, name, &s->err));
}

int kf_session_load_mem(kf_session *s, const void *buf, size_t len)
{
	int r = begin_load(s);

	return r ? r : after_open(s, kf_pd_open_mem(&s->pd, buf, len, &s->err));
}

/* ---- folded output ----------------------------------------------------------- */

_Static_assert((int)KF_VERDICT_UNKNOWN == (int)KF_CTX_VERDICT_UNKNOWN &&
	       (int)KF_VERDICT_ON_BEHALF == (int)KF_CTX_VERDICT_ON_BEHALF &&
	       (int)KF_VERDICT_ATTRIBUTED == (int)KF_CTX_VERDICT_ATTRIBUTED &&
	       (int)KF_VERDICT_IDLE == (int)KF_CTX_VERDICT_IDLE &&
	       (int)KF_VERDICT_KTHREAD == (int)KF_CTX_VERDICT_KTHREAD &&
	       (int)KF_VERDICT_USER == (int)KF_CTX_VERDICT_USER,
	       "kfold.h's verdicts are classify.h's");

const struct kf_attr *kf_session_folded_attr(const struct kf_session *s)
{
	size_t i;

	if (!s->pd || !s->filter)
		return NULL;
	for (i = 0; i < kf_pd_n_attrs(s->pd); i++)
		if (strcmp(kf_pd_event_name(s->pd, i), s->filter) == 0)
			return kf_pd_attr(s->pd, i);
	return NULL;
}

const char kf_soft_clock_note[] =
	"is a software clock (hrtimer interrupt): it cannot sample code that "
	"runs with interrupts disabled, so hard IRQs, the tick, NMIs and "
	"IRQs-off regions have no samples of their own (hardirq share zero by "
	"construction) and their time lands on the next point where "
	"interrupts are enabled again";

bool kf_attr_is_soft_clock(const struct kf_attr *a)
{
	/* PERF_TYPE_SOFTWARE: PERF_COUNT_SW_CPU_CLOCK 0, TASK_CLOCK 1 */
	return a && a->type == 1 && a->config <= 1;
}

int kf_session_write_folded(kf_session *s, FILE *out)
{
	const struct kf_stacks *st = &s->stacks;
	struct kf_stacks rewritten;
	bool rewrite = s->o.context != KF_CONTEXT_NONE || s->o.exclude;
	uint64_t lines = 0, w0 = kf_work;
	int r;

	if (!s->namer_ready)
		return 0;
	if (rewrite) {
		r = kf_ctx_rewrite(&s->stacks, &s->namer, &s->roots, s->rules, s->o.context,
				   s->o.exclude, &rewritten);
		if (r)
			return kf_fail(&s->err, r, "out of memory");
		st = &rewritten;
		if (kf_attr_is_soft_clock(kf_session_folded_attr(s)))
			logf_(s, KF_LOG_WARN, "event %s %s", s->filter, kf_soft_clock_note);
	}
	r = kf_emit_folded(st, &s->namer, &s->roots, out, &lines);
	if (rewrite)
		kf_stacks_fini(&rewritten);
	kf_session_note_unverified(s);
	s->stats.stacks = lines;
	s->stats.work += kf_work - w0;
	if (r == KF_EIO)
		return kf_fail(&s->err, KF_EIO, "writing the output: %s", strerror(errno));
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	return 0;
}

/* ---- modules ------------------------------------------------------------------ */

bool kf_session_unverified_text(const struct kf_session *s, char *buf, size_t len)
{
	const struct kf_dsos *d = &s->dsos;
	uint32_t n = s->dsos_ready ? d->n_unverified : 0;
	const char *why = d->unverified_why;
	bool host = why && d->host_decided && d->host != KF_HOST_RECORDING &&
		    strstr(why, "recording host");
	bool symfs = s->symfs && *s->symfs;

	if (!n)
		return false;
	snprintf(buf, len, "%" PRIu32 " file%s without a recorded build-id %s used "
		 "unverified (%s%s%s): %s names are right only if %s the recorded "
		 "file%s%s", n, n == 1 ? "" : "s", n == 1 ? "was" : "were",
		 why ? why : "see --stats", host ? ": " : "", host ? d->host_why : "",
		 n == 1 ? "its" : "their", n == 1 ? "it is" : "they are",
		 n == 1 ? "" : "s", symfs ? "" : "; give the recorded files with "
		 "--symfs or --buildid-dir");
	return true;
}

void kf_session_note_unverified(struct kf_session *s)
{
	char buf[512];

	if (s->warned_unverified || !kf_session_unverified_text(s, buf, sizeof(buf)))
		return;
	s->warned_unverified = true;
	logf_(s, KF_LOG_WARN, "%s (--stats lists them)", buf);
}

/* The first entry of the capture's build-id table for a file name, by a
 * hash of the names (the table may be as long as the module list). */
static int bid_entry(const struct kf_env *e, const struct kf_map64 *by_name,
		     bool all_in_map, const char *name)
{
	uint32_t v;
	size_t k;

	KF_WORK(1);
	if (kf_map64_get(by_name, kf_hash_bytes(name, strlen(name), 0), &v)) {
		if (strcmp(e->buildids[v].filename, name) == 0)
			return (int)v;
	} else if (all_in_map) {
		return -1;
	}
	/* a hash shared by two names, or a name the map could not take */
	for (k = 0; k < e->n_buildids; k++) {
		KF_WORK(1);
		if (strcmp(e->buildids[k].filename, name) == 0)
			return (int)k;
	}
	return -1;
}

static int list_hit_modules(kf_session *s)
{
	const struct kf_env *e = kf_pd_env(s->pd);
	struct kf_map64 by_name;
	bool all_in_map = true;
	size_t k, n = 0;

	if (s->hit_listed)
		return 0;
	for (k = 1; k < s->modules.n; k++) {
		KF_WORK(1);
		n += s->modules.v[k]->hit;
	}
	s->hit = kf_calloc(n ? n : 1, sizeof(*s->hit));
	s->hit_bid = kf_calloc(n ? n : 1, sizeof(*s->hit_bid));
	if (!s->hit || !s->hit_bid) {
		free(s->hit);
		free(s->hit_bid);
		s->hit = s->hit_bid = NULL;
		return KF_ENOMEM;
	}
	kf_map64_init(&by_name);
	for (k = 0; k < e->n_buildids; k++) {
		const char *f = e->buildids[k].filename;
		uint64_t h = kf_hash_bytes(f, strlen(f), 0);
		uint32_t v;

		KF_WORK(1);
		/* the first entry of a name is the one used */
		if (!kf_map64_get(&by_name, h, &v) &&
		    !kf_map64_put(&by_name, h, (uint32_t)k))
			all_in_map = false;
	}
	for (k = 1, n = 0; k < s->modules.n; k++) {
		const struct kf_module *mod = s->modules.v[k];

		KF_WORK(1);
		if (!mod->hit)
			continue;
		s->hit[n] = (uint32_t)k;
		if (!mod->bid_len && e->n_buildids)
			s->hit_bid[n] = (uint32_t)(bid_entry(e, &by_name, all_in_map,
							     mod->name) + 1);
		n++;
	}
	kf_map64_fini(&by_name);
	s->n_hit = n;
	s->hit_listed = true;
	return 0;
}

size_t kf_session_n_modules(const kf_session *s)
{
	size_t k, n = 0;

	if (s->hit_listed)
		return s->n_hit;
	for (k = 1; k < s->modules.n; k++) {
		KF_WORK(1);
		n += s->modules.v[k]->hit;
	}
	return n;
}

int kf_session_module(kf_session *s, size_t i, kf_module_info *out)
{
	struct kf_module *mod;
	enum kf_dso_status st;

	memset(out, 0, sizeof(*out));
	if (!s->dsos_ready || !s->pd)
		return KF_EINVAL;
	if (list_hit_modules(s))
		return KF_ENOMEM;
	if (i >= s->n_hit)
		return KF_EINVAL;
	mod = kf_modules_at(&s->modules, s->hit[i]);
	out->name = mod->name;
	if (mod->bid_len) {
		kf_bid_hex(mod->bid, mod->bid_len, out->build_id);
	} else if (s->hit_bid[i]) {
		const struct kf_buildid_entry *e =
			&kf_pd_env(s->pd)->buildids[s->hit_bid[i] - 1];

		kf_bid_hex(e->id, e->len, out->build_id);
	}
	st = kf_dso_status(&s->dsos, mod->id);
	out->status = kf_dso_status_text(&s->dsos, mod->id);
	out->verification = kf_dso_verification(&s->dsos, mod->id);
	out->file = kf_dso_file(&s->dsos, mod->id);
	out->verified = st == KF_DSO_OK;
	out->named = kf_dso_symtab(&s->dsos, mod->id) != NULL;
	out->debuginfo = kf_dso_debuginfo_file(&s->dsos, mod->id, &out->debuginfo_wanted);
	out->debuginfo_hint = kf_dso_debuginfo_hint(&s->dsos, mod->id);
	kf_dso_debuginfod(&s->dsos, mod->id, &out->file_debuginfod,
			  &out->debuginfo_debuginfod);
	out->minidebuginfo = kf_dso_minidebuginfo(&s->dsos, mod->id,
						  &out->minidebuginfo_used);
	return 0;
}

const char *kf_session_debuginfo_advice(kf_session *s, size_t i)
{
	kf_module_info mi;
	bool dinfod;

	if (kf_session_module(s, i, &mi) != 0 || mi.debuginfo || !mi.debuginfo_wanted)
		return NULL;
	if (mi.debuginfo_hint)
		return mi.debuginfo_hint;
	if (!mi.named)
		return NULL;
	/* a server is asked only for a recorded build-id, and not in
	 * compat mode; say so when none is configured */
	dinfod = mi.build_id[0] && s->o.compat != KF_COMPAT_PERF && !s->dsos.dinfod.enabled;
	kf_buf_fini(&s->advice);
	kf_buf_init(&s->advice);
	kf_diag_debuginfo_advice(&s->advice, mi.name, mi.build_id, dinfod);
	return s->advice.oom ? NULL : kf_buf_cstr(&s->advice);
}

const char *kf_fp_break_hint(void)
{
	return kf_diag_fp_hint_stats;
}

/* ---- the capture's header ------------------------------------------------------ */

int kf_session_write_header(kf_session *s, FILE *out)
{
	struct kf_header_event *ev;
	struct kf_header_facts h;
	size_t i, n;
	int r, err;

	if (!s->pd)
		return kf_fail(&s->err, KF_EINVAL, "no capture loaded");
	n = kf_pd_n_attrs(s->pd);
	ev = kf_calloc(n ? n : 1, sizeof(*ev));
	if (!ev)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		const struct kf_attr *a = kf_pd_attr(s->pd, i);

		ev[i] = (struct kf_header_event){ kf_pd_event_name(s->pd, i), a->type,
			a->config, a->sample_type, a->sample_period,
			kf_attr_flag(a, KF_ATTR_FREQ) };
	}
	h = (struct kf_header_facts){ kf_pd_env(s->pd), ev, n };
	r = kf_header_write(&h, out);
	err = errno;
	free(ev);
	if (r)
		return kf_fail(&s->err, KF_EIO, "writing the header: %s", strerror(err));
	return 0;
}

/* ---- why unwinds stopped -------------------------------------------------------- */

size_t kf_session_n_unwind_stops(const kf_session *s)
{
	return s->stops.ranked ? s->stops.n :
	       kf_diag_count_stops(s->uw_skipped, s->unwinder, s->modules.n);
}

int kf_session_unwind_stop(kf_session *s, size_t i, kf_unwind_stop *out)
{
	const struct kf_uw_stop *v;

	memset(out, 0, sizeof(*out));
	if (kf_diag_rank_stops(&s->stops, s->uw_skipped, s->unwinder, s->modules.n))
		return KF_ENOMEM;
	if (i >= s->stops.n)
		return KF_EINVAL;
	v = &s->stops.v[i];
	out->module = v->module ? kf_modules_at(&s->modules, v->module)->name : "";
	out->samples = v->n;
	kf_diag_stop_text(v->end, &out->reason, &out->hint);
	return 0;
}

/* ---- frame-pointer chains that broke ------------------------------------------- */

static void count_fp_breaks(kf_session *s)
{
	if (s->namer_ready)
		kf_diag_count_fp(&s->fp, &s->stacks, &s->namer, s->modules.n);
}

void kf_session_fp_chains(kf_session *s, uint64_t *samples, uint64_t *broken)
{
	count_fp_breaks(s);
	*samples = s->fp.samples;
	*broken = s->fp.broken;
}

size_t kf_session_n_fp_breaks(kf_session *s)
{
	count_fp_breaks(s);
	return s->fp.n;
}

int kf_session_fp_break(kf_session *s, size_t i, kf_fp_break *out)
{
	uint32_t m;

	memset(out, 0, sizeof(*out));
	if (i >= kf_session_n_fp_breaks(s))
		return KF_EINVAL;
	m = s->fp.order[i];
	out->module = m ? kf_modules_at(&s->modules, m)->name : "[unknown]";
	out->samples = s->fp.per_module[m];
	return 0;
}
