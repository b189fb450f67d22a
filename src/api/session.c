/* session.c - implements kfold.h: wires the stages together.
 *
 *   open: perfdata (header, attrs, features, build-ids) -> stage setup
 *   run:  perfdata (records) -> order (time order) -> tasks (state) | sample
 *         -> callchain (the sample's raw frames) -> stacks (trie)
 *   end:  prepare (kf_dsos_prepare: every hit module's files, the one load
 *         step after the run)
 *   then: symbolize (structured frames) -> folded text, JSON, --explain,
 *         or the stacks as data (walk.c)
 *
 * The session owns every stage and configures each through its init
 * arguments and the policy chosen once from --compat; what is per sample
 * lives in the stages (the callchain's scratch, perfhdr's line), never on
 * the session.
 */
#include "kfold.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callchain.h"
#include "context.h"
#include "cur.h"
#include "dso.h"
#include "error.h"
#include "folded.h"
#include "fs.h"
#include "header.h"
#include "maps.h"
#include "module.h"
#include "nametab.h"
#include "order.h"
#include "perfdata.h"
#include "pprof.h"
#include "flame.h"
#include "records.h"
#include "report.h"
#include "sample.h"
#include "stacks.h"
#include "symbolize.h"
#include "tasks.h"
#include "unwind.h"
#include "util.h"

#include "session.h"
#include "bundle.h"
#include "perfarchive.h"

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

static void free_paths(struct kf_session *s)
{
	free(s->symfs);
	free(s->kallsyms);
	free(s->vmlinux);
	free(s->buildid_dir);
	free(s->perf_map_dir);
	if (s->debug_dirs) {
		for (size_t k = 0; k < s->n_debug_dirs; k++)
			free(s->debug_dirs[k]);
		free(s->debug_dirs);
	}
	s->symfs = s->kallsyms = s->vmlinux = s->buildid_dir = s->perf_map_dir = NULL;
	s->debug_dirs = NULL;
	s->n_debug_dirs = 0;
}

int kf_session_set_paths(struct kf_session *s, const char *symfs,
			 const char *kallsyms, const char *vmlinux,
			 const char *perf_map_dir, const char *buildid_dir,
			 const char *const *debug_dirs, size_t n_debug_dirs)
{
	free_paths(s);
	s->symfs = dup_opt(symfs);
	s->kallsyms = dup_opt(kallsyms);
	s->vmlinux = dup_opt(vmlinux);
	s->perf_map_dir = dup_opt(perf_map_dir);
	if (n_debug_dirs) {
		size_t k;

		if (n_debug_dirs > 64)
			return kf_fail(&s->err, KF_EINVAL, "more than 64 debug directories");
		s->debug_dirs = kf_calloc(n_debug_dirs, sizeof(*s->debug_dirs));
		if (!s->debug_dirs)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		s->n_debug_dirs = n_debug_dirs;
		for (k = 0; k < n_debug_dirs; k++) {
			s->debug_dirs[k] = strdup(debug_dirs[k] ? debug_dirs[k] : "");
			if (!s->debug_dirs[k])
				return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		}
	}
	/* the build-id cache: --symfs moves it to SYMFS/.debug in perf 6.1
	 * even over --buildid-dir (symbol__config_symfs); kfold does the
	 * same unless --buildid-dir was given, and in --compat=perf always */
	if (s->symfs && (!buildid_dir || s->pol->symfs_moves_buildid_dir)) {
		size_t n = strlen(s->symfs) + 8;

		s->buildid_dir = malloc(n);
		if (s->buildid_dir)
			snprintf(s->buildid_dir, n, "%s/.debug", s->symfs);
	} else if (buildid_dir) {
		s->buildid_dir = dup_opt(buildid_dir);
	} else {
		s->buildid_dir = kf_host_buildid_dir(s->o.host);
	}
	return 0;
}

static bool event_matches(const char *name, const char *want);

static void free_roots(struct kf_session *s)
{
	size_t k;

	for (k = 0; k < s->n_dir_roots; k++)
		free(s->dir_roots[k]);
	free(s->dir_roots);
	s->dir_roots = NULL;
	s->n_dir_roots = 0;
}

int kf_session_set_roots(struct kf_session *s, const char *const *roots, size_t n)
{
	size_t k;

	free_roots(s);
	if (n > 64)
		return kf_fail(&s->err, KF_EINVAL, "more than 64 --root");
	if (!n)
		return 0;
	if (!(s->dir_roots = kf_calloc(n, sizeof(*s->dir_roots))))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	for (k = 0; k < n; k++) {
		const char *r = roots[k] ? roots[k] : "", *eq = strchr(r, '=');
		bool ok = eq && eq > r && eq[1];

		if (ok && strncmp(r, "mnt:", 4) == 0)
			ok = eq > r + 4 && strspn(r + 4, "0123456789") == (size_t)(eq - r - 4);
		else if (ok)
			ok = r[0] == '/';
		if (!ok)
			return kf_fail(&s->err, KF_EINVAL, "--root %s: not CGROUP=DIR "
				       "(a cgroup path, as --cgroup prints it) or "
				       "mnt:INODE=DIR (a mount namespace)", r);
		if (!(s->dir_roots[k] = strdup(r)))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		s->n_dir_roots++;
	}
	return 0;
}

/* The dso layer's root_of: the --root directory of the process that
 * first mapped a file module, by the cgroup of its samples or its mount
 * namespace. */
static const char *module_root(void *ctx, const struct kf_module *mod)
{
	struct kf_session *s = ctx;
	uint64_t cg = 0, mnt = mod->map_mntns;
	const char *cgpath = NULL;
	uint32_t sid;
	size_t i;

	if (!s->n_dir_roots || !mod->map_pid)
		return NULL;
	for (i = 0; i < s->tasks.n_threads && (!cg || !mnt); i++) {
		const struct kf_thread *th = s->tasks.threads[i];

		KF_WORK(1);
		if (th->pid != mod->map_pid)
			continue;
		if (!cg)
			cg = th->cgroup;
		if (!mnt)
			mnt = th->mntns;
	}
	if (cg && kf_map64_get(&s->cgroups, cg, &sid) && sid)
		cgpath = kf_strtab_get(&s->strings, sid - 1);
	for (i = 0; i < s->n_dir_roots; i++) {
		const char *r = s->dir_roots[i], *eq = strchr(r, '=');
		size_t kl = (size_t)(eq - r);

		if (r[0] == '/' ? cgpath && strlen(cgpath) == kl && memcmp(cgpath, r, kl) == 0 :
		    mnt && strtoull(r + 4, NULL, 10) == mnt)
			return eq + 1;
	}
	return NULL;
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
	/* the one place the compat mode is looked at: the stages see the
	 * behaviours it stands for (an unknown mode is refused below) */
	s->pol = s->o.compat == KF_COMPAT_PERF ? kf_policy_perf() : kf_policy_kfold();
	{
		int r = kf_session_set_paths(s, s->o.symfs, s->o.kallsyms, s->o.vmlinux,
					     s->o.perf_map_dir, s->o.buildid_dir,
					     s->o.debug_dirs, s->o.n_debug_dirs);

		if (r)
			return r;
	}
	s->event = dup_opt(s->o.event);
	if (s->o.compat != KF_COMPAT_NONE && s->o.compat != KF_COMPAT_PERF)
		return kf_fail(&s->err, KF_EINVAL, "unknown compat mode %d", s->o.compat);
	/* --context and --exclude alone need no threads: only the folded
	 * stacks are made, whose roots keep what their names show */
	s->use_tsums = s->o.classify && s->o.thread_table;
	s->ctx_threads = s->o.classify && !s->use_tsums;
	if (s->o.context != KF_CONTEXT_NONE || s->o.exclude)
		s->o.classify = true;
	if (s->o.classify) {
		if (s->pol->perf_output)
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
	if (!kf_strtab_init(&s->strings) || kf_roots_init(&s->roots) ||
	    kf_modules_init(&s->modules) || kf_stacks_init(&s->stacks))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	kf_perf_header_init(&s->perfhdr);
	kf_tsums_init(&s->tsums);
	kf_buf_init(&s->advice);
	kf_counters_init(&s->counters);
	kf_offcpu_init(&s->offcpu);
	kf_map64_init(&s->cgroups);
	kf_brsites_init(&s->brsites);
	kf_bbcycles_init(&s->bbcycles);
	s->fs.no_files = s->o.no_files;
	if (s->o.off_cpu_wakers)
		s->o.off_cpu = true;
	if (s->o.off_cpu) {
		if (s->pol->perf_output)
			return kf_fail(&s->err, KF_EINVAL, "--off-cpu is not part of "
				       "--compat=perf");
		if (s->o.annotate)
			return kf_fail(&s->err, KF_EINVAL, "--off-cpu: kfold annotate "
				       "counts samples, not times");
		if (s->event && !event_matches(KF_OFFCPU_EVENT, s->event))
			return kf_fail(&s->err, KF_EINVAL, "--off-cpu folds %s, not "
				       "--event %s", KF_OFFCPU_EVENT, s->event);
		if (!s->event)
			s->event = kf_strndup(KF_OFFCPU_EVENT, strlen(KF_OFFCPU_EVENT));
		if (!s->event)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	}
	if (s->o.stitch) {
		if (s->pol->perf_output)
			return kf_fail(&s->err, KF_EINVAL, "--stitch is not part of "
				       "--compat=perf");
		if (s->o.annotate)
			return kf_fail(&s->err, KF_EINVAL, "--stitch is not an option of "
				       "kfold annotate");
	}
	{
		char msg[256];
		int r = kf_filter_init(&s->filters, s->o.filter_pids, s->o.filter_tids,
				       s->o.filter_comms, s->o.filter_cpus, s->o.filter_time,
				       msg, sizeof(msg));

		if (r)
			return kf_fail(&s->err, r, "%s", msg);
		if (s->o.filter_cgroups && kf_filter_set_cgroups(&s->filters, s->o.filter_cgroups))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	}
	if (kf_session_set_roots(s, s->o.roots, s->o.n_roots) != 0)
		return s->err.code;
	if (s->o.cgroup_root && s->pol->perf_output)
		return kf_fail(&s->err, KF_EINVAL, "--cgroup is not part of --compat=perf");
	return 0;
}

void kf_session_free(kf_session *s)
{
	if (!s)
		return;
	kf_callchain_fini(&s->cc);
	kf_brsites_fini(&s->brsites);
	kf_bbcycles_fini(&s->bbcycles);
	free(s->rules);
	kf_diag_fp_fini(&s->fp);
	kf_session_walk_fini(s);
	free(s->hit);
	free(s->hit_bid);
	kf_diag_stops_fini(&s->stops);
	if (s->namer_ready) {
		kf_fold_texts_fini(&s->texts);
		kf_namer_fini(&s->namer);
	}
	if (s->dsos_ready)
		kf_dsos_fini(&s->dsos);
	if (s->tasks_ready)
		kf_tasks_fini(&s->tasks);
	kf_order_free(s->order);
	kf_pd_free(s->pd);
	kf_bundle_free(s->bundle);
	kf_perfarchive_free(s->parchive);
	kf_stacks_fini(&s->stacks);
	kf_tsums_fini(&s->tsums);
	kf_ipcounts_fini(&s->ips);
	kf_ipcounts_fini(&s->sites);
	for (size_t e = 0; e < s->n_ips_ev; e++)
		kf_ipcounts_fini(&s->ips_ev[e]);
	free(s->ips_ev);
	kf_modules_fini(&s->modules);
	kf_strtab_fini(&s->strings);
	kf_roots_fini(&s->roots);
	kf_perf_header_fini(&s->perfhdr);
	kf_buf_fini(&s->advice);
	kf_counters_fini(&s->counters);
	kf_offcpu_fini(&s->offcpu);
	kf_map64_fini(&s->cgroups);
	free(s->oc_attrs);
	kf_filter_fini(&s->filters);
	free(s->filter);
	free(s->attr_samples);
	free_paths(s);
	free_roots(s);
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

static bool event_matches(const char *name, const char *want)
{
	size_t n;

	if (strcmp(name, want) == 0)
		return true;
	/* "cpu-clock" picks "cpu-clock:u" too: modifiers may be left out */
	n = strlen(want);
	return strncmp(name, want, n) == 0 && name[n] == ':' && !strchr(want, ':');
}

/* What the context classifier needs to know about a sample besides its
 * frames, kept on its root (kernel-contexts.md sec. 5). */
static void ctx_root(const struct kf_session *s, const struct kf_thread *th,
		     const struct kf_attr *a, const struct kf_sample *smp,
		     const struct kf_chain *ch, struct kf_stack_root *root)
{
	unsigned max = a->sample_max_stack ? a->sample_max_stack : KF_CHAIN_MAX_STACK;

	/* the classifier itself asks only whether pid is 0 (the idle
	 * task); each thread a root of its own only for the reports
	 * that tell threads apart: far fewer stacks for --context */
	if (s->ctx_threads) {
		root->pid = th->pid;
		root->tid = th->tid;
	} else if (th->pid == 0) {
		root->pid = 0;
	}
	root->cpumode = (uint8_t)(smp->misc & KF_MISC_CPUMODE_MASK);
	if (!(a->sample_type & KF_SAMPLE_CALLCHAIN)) {
		root->ctx |= KF_ROOT_CTX_NO_CHAIN;
	} else {
		if (ch->n_user)
			root->ctx |= KF_ROOT_CTX_USER_PART;
		/* the kernel stops at max_stack entries; a user marker
		 * without entries means the chain ran out right there */
		if (ch->n_kernel >= max || ch->n_kernel >= KF_CHAIN_MAX_STACK ||
		    (ch->user_marker && ch->n_user == 0))
			root->ctx |= KF_ROOT_CTX_TRUNCATED;
	}
	/* kthreadd is pid 2; kernel threads are its children */
	if (th->pid == 2 || th->ppid == 2)
		root->ctx |= KF_ROOT_CTX_KTHREAD;
}

/* kfold annotate: the sample's ip and its period into table t, as perf
 * annotate counts them. */
static int count_ip_in(struct kf_session *s, struct kf_ipcounts *t, struct kf_thread *th,
		       const struct kf_sample *smp)
{
	struct kf_frame ipf;

	kf_callchain_resolve_ip(&s->cc, th, smp, &ipf);
	if (kf_ipcounts_add(t, ipf.module, ipf.addr, (ipf.flags & KF_FRAME_KERNEL) != 0,
			    smp->period, (smp->misc & KF_MISC_EXACT_IP) != 0))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	return 0;
}

/* kfold annotate: the cycles of the blocks between a sample's branch
 * records, as perf annotate counts them (hist__account_cycles): records
 * oldest first, each one's block starting at the previous (older)
 * record's target; nothing when the newest record gives no cycles, and a
 * record without cycles counts for nothing. */
static int count_block_cycles(struct kf_session *s, struct kf_thread *th,
			      const struct kf_attr *a, const struct kf_sample *smp)
{
	struct kf_branch br;
	struct kf_frame end, start;
	bool have_start = false;
	uint64_t i;

	if (!smp->n_branches || !(a->sample_type & KF_SAMPLE_BRANCH_STACK) ||
	    (a->branch_sample_type & KF_BRANCH_NO_CYCLES))
		return 0;
	kf_sample_branch(smp, 0, &br);
	if (!br.cycles)
		return 0;
	s->bbcycles.samples++;
	for (i = smp->n_branches; i-- > 0;) {
		kf_sample_branch(smp, i, &br);
		if (br.cycles) {
			kf_callchain_resolve_branch(&s->cc, th, smp, br.from, &end);
			if (!kf_bbcycles_add(&s->bbcycles, &end, have_start ? &start : NULL,
					     br.cycles))
				return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		}
		kf_callchain_resolve_branch(&s->cc, th, smp, br.to, &start);
		have_start = true;
	}
	return 0;
}

/* A sample of the annotated event. */
static int count_ip(struct kf_session *s, struct kf_thread *th, const struct kf_attr *a,
		    const struct kf_sample *smp)
{
	int r = count_ip_in(s, &s->ips, th, smp);

	if (!r)
		r = count_block_cycles(s, th, a, smp);
	if (!r && s->o.ips_only)
		s->stats.samples_folded++;
	return r;
}

/* A sample of another event, into its own table (annotate's per-event
 * columns); evidx is an attr's index, so the tables are at most the
 * capture's attrs. */
static int count_event_ip(struct kf_session *s, size_t evidx, const struct kf_sample *smp)
{
	struct kf_thread *th;

	if (evidx >= s->n_ips_ev) {
		struct kf_ipcounts *v = kf_reallocarray(s->ips_ev, evidx + 1, sizeof(*v));

		if (!v)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		for (size_t e = s->n_ips_ev; e <= evidx; e++)
			kf_ipcounts_init(&v[e]);
		s->ips_ev = v;
		s->n_ips_ev = evidx + 1;
	}
	th = kf_tasks_findnew(&s->tasks, smp->has_tid ? (int32_t)smp->pid : -1,
			      smp->has_tid ? (int32_t)smp->tid : -1);
	if (!th)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	return count_ip_in(s, &s->ips_ev[evidx], th, smp);
}

/* PERF_RECORD_CGROUP: a cgroup's id and path (perf record --all-cgroups
 * writes one for every cgroup at the start and the kernel one for each
 * made later).  The path ends at its NUL, inside the record; a record
 * without one is skipped and counted as too short. */
static int on_cgroup(struct kf_session *s, const struct kf_rec *rec)
{
	struct kf_cur c = kf_cur_make(rec->data + 8, rec->size - 8u, kf_pd_swapped(s->pd));
	const char *path;
	size_t len;
	uint64_t id;
	uint32_t sid;

	if (!kf_cur_u64(&c, &id) || kf_cur_left(&c) == 0 ||
	    (len = strnlen((const char *)c.p, kf_cur_left(&c))) == kf_cur_left(&c)) {
		s->tasks.bad_records++;
		return 0;
	}
	path = (const char *)c.p;
	if (!kf_strtab_intern(&s->strings, path, len, &sid) ||
	    !kf_map64_put(&s->cgroups, id, sid + 1))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	return 0;
}

/* The path of sample smp's cgroup as a string id in *sid, as perf
 * report's cgroup column says it: "N/A" for id 0, "unknown" for an id no
 * PERF_RECORD_CGROUP named (interned once; the records' paths were
 * interned as they came).  KF_EINVAL when attr a records no cgroup (the
 * callers refuse their option), KF_ENOMEM. */
static int sample_cgroup(struct kf_session *s, const struct kf_attr *a,
			 const struct kf_sample *smp, uint32_t *sid)
{
	const char *none;

	if (!(a->sample_type & KF_SAMPLE_CGROUP))
		return KF_EINVAL;
	if (smp->cgroup && kf_map64_get(&s->cgroups, smp->cgroup, sid) && *sid) {
		(*sid)--;
		return 0;
	}
	none = smp->cgroup ? "unknown" : "N/A";
	return kf_strtab_intern(&s->strings, none, strlen(none), sid) ? 0 : KF_ENOMEM;
}

/* Whether perf script's filters leave the sample out (*out), in perf
 * 6.1's order (process_sample_event): its time, then its thread (comm,
 * pid, tid: thread__is_filtered), then its CPU; then kfold's --cgroups.
 * A capture whose samples carry no CPU is refused with --cpus, as perf
 * refuses it, and one whose samples carry no cgroup with --cgroups. */
static int filtered(struct kf_session *s, const struct kf_attr *a, int evidx,
		    const struct kf_sample *smp, bool *out)
{
	const struct kf_filter *f = &s->filters;
	int32_t pid = smp->has_tid ? (int32_t)smp->pid : -1;
	int32_t tid = smp->has_tid ? (int32_t)smp->tid : -1;
	const char *comm = NULL;

	*out = true;
	if (kf_filter_time_out(f, smp->has_time ? smp->time : 0))
		return 0;
	if (f->comms_set) {
		struct kf_thread *th = kf_tasks_findnew(&s->tasks, pid, tid);

		if (!th)
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		comm = kf_thread_comm(&s->tasks, th);
	}
	if (kf_filter_thread_out(f, pid, tid, comm))
		return 0;
	if (f->cpus_set && !(a->sample_type & KF_SAMPLE_CPU))
		return kf_fail(&s->err, KF_EINVAL, "--cpus: the samples of event %s "
			       "record no CPU (perf record without -a or --sample-cpu)",
			       kf_pd_event_name(s->pd, (size_t)(evidx >= 0 ? evidx : 0)));
	if (kf_filter_cpu_out(f, smp->cpu))
		return 0;
	if (f->cgroups_set) {
		uint32_t sid;
		int r = sample_cgroup(s, a, smp, &sid);

		if (r == KF_EINVAL)
			return kf_fail(&s->err, r, "--cgroups: the samples of event %s "
				       "record no cgroup (perf record without "
				       "--all-cgroups)", kf_pd_event_name(s->pd, (size_t)evidx));
		if (r)
			return kf_fail(&s->err, r, "out of memory");
		*out = kf_filter_cgroup_out(f, kf_strtab_get(&s->strings, sid));
		return 0;
	}
	*out = false;
	return 0;
}

/* ---- --off-cpu ------------------------------------------------------------ */

/* Attr i as --off-cpu sees it: sched:sched_switch with a raw payload
 * whose prev_pid, next_pid and prev_state the tracing data locates (kind
 * 1), with --off-cpu=wakers sched:sched_waking or sched_wakeup with its
 * pid (kind 3), or NULL. */
static const struct kf_oc_attr *oc_attr(struct kf_session *s, int i,
					const struct kf_attr *a)
{
	struct kf_oc_attr *oa;

	if (i < 0)
		return NULL;
	if ((size_t)i >= s->n_oc_attrs) {
		size_t n = (size_t)i + 1;
		struct kf_oc_attr *v = kf_reallocarray(s->oc_attrs, n, sizeof(*v));

		if (!v)
			return NULL;
		memset(v + s->n_oc_attrs, 0, (n - s->n_oc_attrs) * sizeof(*v));
		s->oc_attrs = v;
		s->n_oc_attrs = n;
	}
	oa = &s->oc_attrs[i];
	if (oa->kind)
		return oa->kind != 2 ? oa : NULL;
	oa->kind = 2;
	if (s->o.off_cpu_wakers &&
	    (event_matches(kf_pd_event_name(s->pd, (size_t)i), "sched:sched_waking") ||
	     event_matches(kf_pd_event_name(s->pd, (size_t)i), "sched:sched_wakeup"))) {
		if ((a->sample_type & KF_SAMPLE_RAW) &&
		    kf_pd_tp_field(s->pd, (size_t)i, "pid", &oa->pid) && oa->pid.size == 4) {
			oa->kind = 3;
			return oa;
		}
		logf_(s, KF_LOG_WARN, "--off-cpu=wakers: the capture's %s samples have "
		      "no raw data or no format that places their pid field: their "
		      "wakeups are not read", kf_pd_event_name(s->pd, (size_t)i));
		return NULL;
	}
	if (!event_matches(kf_pd_event_name(s->pd, (size_t)i), KF_OFFCPU_EVENT))
		return NULL;
	if ((a->sample_type & KF_SAMPLE_RAW) &&
	    kf_pd_tp_field(s->pd, (size_t)i, "prev_pid", &oa->prev_pid) &&
	    kf_pd_tp_field(s->pd, (size_t)i, "next_pid", &oa->next_pid) &&
	    oa->prev_pid.size == 4 &&
	    kf_pd_tp_field(s->pd, (size_t)i, "prev_state", &oa->prev_state) &&
	    oa->next_pid.size == 4 && oa->prev_state.size >= 1 &&
	    oa->prev_state.size <= 8) {
		oa->kind = 1;
		return oa;
	}
	logf_(s, KF_LOG_WARN, "--off-cpu: the capture's %s samples %s: their "
	      "switches cannot be weighed", KF_OFFCPU_EVENT,
	      !(a->sample_type & KF_SAMPLE_RAW) ? "carry no raw data (PERF_SAMPLE_RAW)" :
	      "have no format in the capture's tracing data that gives the "
	      "fields prev_pid and next_pid (4 bytes) and prev_state");
	return NULL;
}

/* An unsigned or sign-extended field of a tracepoint sample's raw data,
 * in the byte order the tracing data gives; false when the data is too
 * short. */
static bool raw_field(const struct kf_sample *smp, const struct kf_tp_field *f,
		      uint64_t *out)
{
	const uint8_t *b;
	uint64_t v = 0;
	uint32_t i;

	if (!smp->raw || f->size == 0 || f->size > 8 || f->offset > smp->raw_size ||
	    f->size > smp->raw_size - f->offset)
		return false;
	b = smp->raw + f->offset;
	for (i = 0; i < f->size; i++)
		v |= (uint64_t)b[f->big_endian ? f->size - 1 - i : i] << (8 * i);
	if (f->is_signed && f->size < 8 && (v >> (8 * f->size - 1) & 1))
		v |= ~(uint64_t)0 << (8 * f->size);
	*out = v;
	return true;
}

/* Adds a stack to the trie, or hands it to the feed's worker. */
static int add_stack(struct kf_session *s, const struct kf_frame *root,
		     const struct kf_frame *frames, size_t n, uint64_t weight,
		     uint32_t thread)
{
	uint32_t node;

	if (s->feeding) {
		/* the worker walks it in (feed.h): the same trie */
		if (!kf_feed_push(&s->feed, root, frames, n, weight, thread))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		return 0;
	}
	node = kf_stacks_path(&s->stacks, root, frames, n);
	if (!node)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	if (!kf_stacks_add(&s->stacks, node, weight) ||
	    (s->use_tsums && !kf_tsums_add(&s->tsums, node, thread, weight)))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	return 0;
}

/* A waiting stack's thread runs again at `time`: the stack weighs the
 * nanoseconds between (with --samples, 1); a switch-in with the
 * switch-out's own timestamp weighs 1 ns, so that the stack stays. */
static int oc_weigh(struct kf_session *s, const struct kf_offcpu_wait *w, uint64_t time)
{
	uint64_t dt = time > w->time ? time - w->time : 1, weight;
	struct kf_stack_root rd;
	struct kf_frame root;
	uint32_t thread = w->thread;

	s->stats.offcpu_weighed++;
	s->stats.offcpu_ns += dt;
	weight = s->o.count_samples ? 1 : dt;
	if (!s->o.off_cpu_wakers)
		return add_stack(s, &w->root, w->frames, w->n, weight, w->thread);
	/* the waker's stack on the waiting thread's root, which names the
	 * waker and takes what the classifier reads from the waker's
	 * sample; a wait no wakeup ended (preemption) is the root alone */
	root = w->root;
	if (w->woken) {
		rd = *kf_roots_get(&s->roots, w->root.root);
		s->stats.offcpu_woken++;
		rd.waker = w->waker.comm + 1;
		rd.ctx = w->waker.ctx;
		rd.cpumode = w->waker.cpumode;
		if (!(root.root = kf_roots_intern(&s->roots, &rd)))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		if (s->use_tsums && !kf_tsums_thread(&s->tsums, w->pid, w->tid, root.root, &thread))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	}
	return add_stack(s, &root, w->wframes, w->wn, weight, thread);
}

/* --off-cpu=wakers: a wakeup (sched_waking, sched_wakeup) of a waiting
 * thread, taken on the waker's stack: the first one of a wait is kept
 * with it. */
static int oc_wakeup(struct kf_session *s, const struct kf_attr *a,
		     const struct kf_oc_attr *oa, const struct kf_sample *smp)
{
	struct kf_stack_root wr;
	struct kf_thread *th;
	struct kf_chain ch;
	uint64_t v;

	if (!raw_field(smp, &oa->pid, &v) || !kf_offcpu_wants_waker(&s->offcpu, (int32_t)v))
		return 0;
	th = kf_tasks_findnew(&s->tasks, smp->has_tid ? (int32_t)smp->pid : -1,
			      smp->has_tid ? (int32_t)smp->tid : -1);
	if (!th || kf_callchain_build(&s->cc, th, a, smp, &ch))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	memset(&wr, 0, sizeof(wr));
	wr.comm = th->comm;
	wr.pid = wr.tid = -1;
	if (s->o.classify)
		ctx_root(s, th, a, smp, &ch, &wr);
	if (!kf_offcpu_woken(&s->offcpu, (int32_t)v, &wr, ch.frames, ch.n))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	return 0;
}

static int oc_switch_in(struct kf_session *s, int32_t tid, uint64_t time)
{
	const struct kf_offcpu_wait *w;

	s->stats.offcpu_switch_ins++;
	w = kf_offcpu_take(&s->offcpu, tid);
	return w ? oc_weigh(s, w, time) : 0;
}

/* The end of the capture: the threads still off their CPU weigh the
 * time until its last sample. */
static int oc_end(struct kf_session *s)
{
	const struct kf_offcpu_wait *w;
	size_t it = 0;
	int r;

	while ((w = kf_offcpu_next_waiting(&s->offcpu, &it)) != NULL) {
		s->stats.offcpu_at_end++;
		if ((r = oc_weigh(s, w, s->last_time)) != 0)
			return r;
	}
	/* no switch-in ever ended a wait: a capture of some tasks, whose
	 * sched_switch samples are their switch-outs only */
	if (s->o.off_cpu_wakers && s->stats.offcpu_weighed && !s->stats.offcpu_woken)
		logf_(s, KF_LOG_WARN, "--off-cpu=wakers: no wait was ended by a "
		      "recorded wakeup: record sched:sched_waking (or sched_wakeup) "
		      "with -g beside sched:sched_switch");
	if (s->stats.offcpu_weighed + s->stats.offcpu_unmatched >
	    s->stats.offcpu_at_end && s->stats.offcpu_weighed == s->stats.offcpu_at_end)
		logf_(s, KF_LOG_WARN, "--off-cpu: no switched-out thread was seen "
		      "switching back in (%" PRIu64 " switch-outs not weighed, %" PRIu64
		      " weighed to the capture's end): record system-wide (perf record "
		      "-a) or with --switch-events", s->stats.offcpu_unmatched,
		      s->stats.offcpu_at_end);
	else if (s->stats.offcpu_unmatched)
		logf_(s, KF_LOG_WARN, "--off-cpu: %" PRIu64 " switch-outs were followed "
		      "by another of the same thread with no switch-in between (lost "
		      "events, or a capture of some CPUs only): not weighed",
		      s->stats.offcpu_unmatched);
	return 0;
}

/* --stitch, --stitch-lbr: a sample that is not folded is its thread's
 * reference all the same (kf_callchain_reference). */
static int stitch_reference(struct kf_session *s, const struct kf_attr *a,
			    const struct kf_sample *smp)
{
	struct kf_thread *th;

	if (!(s->o.stitch && (a->sample_type & KF_SAMPLE_STACK_USER)) &&
	    !(s->o.stitch_lbr && (a->sample_type & KF_SAMPLE_BRANCH_STACK)))
		return 0;
	th = kf_tasks_findnew(&s->tasks, smp->has_tid ? (int32_t)smp->pid : -1,
			      smp->has_tid ? (int32_t)smp->tid : -1);
	if (!th || kf_callchain_reference(&s->cc, th, a, smp))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	return 0;
}

/* A thread that has unhashed its pid on its way out (release_task in
 * do_exit) is sampled with tid -1, and pid -1 too once its process is
 * gone (the kernel's perf_event_pid_type).  Its sched_switch's prev_pid
 * still names it: that thread, when it is known and of the sample's
 * process (or the sample names none); else th. */
static struct kf_thread *offcpu_thread(struct kf_session *s, const struct kf_attr *a,
				       int evidx, const struct kf_sample *smp,
				       struct kf_thread *th)
{
	const struct kf_oc_attr *oa = oc_attr(s, evidx, a);
	struct kf_thread *named;
	uint64_t v;

	if (!oa || oa->kind != 1 || !raw_field(smp, &oa->prev_pid, &v) || (int32_t)v <= 0)
		return th;
	named = kf_tasks_find(&s->tasks, (int32_t)v);
	if (!named || (th->pid != -1 && named->pid != th->pid))
		return th;
	s->stats.offcpu_renamed++;
	return named;
}

/* Folds one delivered sample: `a` is the attr that laid the record out,
 * `evidx` the event it is delivered as (a member's for a group value, see
 * deliver_read) and smp->period its weight. */
static int fold_sample(struct kf_session *s, const struct kf_attr *a, int evidx,
		       const struct kf_sample *smp)
{
	struct kf_thread *th;
	const char *evname, *comm;
	uint64_t weight;
	struct kf_chain ch;
	uint32_t rid, comm_id, thread = KF_FEED_NO_THREAD;
	enum kf_offcpu_state oc_state = KF_OFFCPU_PREEMPTED;
	int32_t oc_tid = 0;
	int r = 0;
	bool kept;
	struct kf_frame root;
	struct kf_stack_root rd;
	size_t i;

	if (s->filters.on) {
		bool out;

		if ((r = filtered(s, a, evidx, smp, &out)) != 0)
			return r;
		if (out) {
			s->stats.samples_filtered++;
			return stitch_reference(s, a, smp);
		}
	}
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
	/* (the name compared below is the event's: one answer an event) */
	kept = evidx >= 0 && s->kept_ev == (size_t)evidx + 1;
	evname = kept ? NULL : kf_pd_event_name(s->pd, (size_t)evidx);
	/* annotate: the other events' samples, for their columns */
	if (!kept && s->event && !event_matches(evname, s->event))
		return s->o.annotate && evidx >= 0 ? count_event_ip(s, (size_t)evidx, smp) :
		       stitch_reference(s, a, smp);
	/* with --event, the first matching event's full name is the one
	 * folded (kf_session_folded_attr, the reports' notes) */
	if (s->event && !s->filter_set) {
		s->filter = kf_strndup(evname, strlen(evname));
		s->filter_set = true;
	}

	th = kf_tasks_findnew(&s->tasks, smp->has_tid ? (int32_t)smp->pid : -1,
			      smp->has_tid ? (int32_t)smp->tid : -1);
	if (!th)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	if (s->o.off_cpu && th->tid == -1)
		th = offcpu_thread(s, a, evidx, smp, th);
	if (smp->cgroup)
		th->cgroup = smp->cgroup;   /* --root CGROUP=DIR */
	comm = kf_thread_comm(&s->tasks, th);
	weight = smp->period;

	/* without a callchain perf script prints one line per sample,
	 * which stackcollapse-perf.pl does not fold */
	if (s->pol->drop_chainless_samples && !(a->sample_type & KF_SAMPLE_CALLCHAIN))
		return 0;
	if (s->pol->perf_script_header) {
		struct kf_perf_header_read hr;

		/* the comm and the period and event stackcollapse reads from
		 * the line */
		if (kf_perf_header_read(&s->perfhdr, s->pd, evidx, smp, evname, comm, &hr))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		if (!hr.matched)
			return 0;   /* the header regex did not match */
		/* the comm group may end inside the comm or run past it
		 * into the numbers: then it is a string of its own */
		if (hr.comm_len == strlen(comm))
			comm_id = th->comm;
		else if (!kf_strtab_intern(&s->strings, hr.comm, hr.comm_len, &comm_id))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		weight = hr.period;
		if (hr.has_event && !s->event) {
			if (!s->filter_set) {
				s->filter = kf_strndup(hr.event, hr.event_len);
				s->filter_set = true;
			} else if (!s->filter || strlen(s->filter) != hr.event_len ||
				   memcmp(s->filter, hr.event, hr.event_len) != 0) {
				return 0;
			}
		}
		if (weight == 0)
			weight = 1;
		/* perf script's default fields for a tracepoint read from a
		 * pipe print no file on the callchain lines ("ip sym", no
		 * "(dso)"), which stackcollapse-perf.pl does not recognize:
		 * it folds the comm alone (docs/perf-compat.md F9).  A file's
		 * tracepoints with callchains print the file */
		if (s->pol->tracepoint_comm_only && a->type == 2 && kf_pd_is_pipe(s->pd))
			memset(&ch, 0, sizeof(ch));
		else
			r = kf_callchain_build(&s->cc, th, a, smp, &ch);
	} else {
		if (!s->event && !kept) {
			if (!s->filter_set) {
				s->filter = kf_strndup(evname, strlen(evname));
				s->filter_set = true;
			} else if (!s->filter || strcmp(s->filter, evname) != 0) {
				return s->o.annotate && evidx >= 0 ?
				       count_event_ip(s, (size_t)evidx, smp) :
				       stitch_reference(s, a, smp);
			}
		}
		/* (kept only here: perf's header above reads the name) */
		if (!kept && evidx >= 0 && s->filter)
			s->kept_ev = (size_t)evidx + 1;
		comm_id = th->comm;
		if (s->o.annotate && s->o.ips_only)
			return count_ip(s, th, a, smp);
		r = kf_callchain_build(&s->cc, th, a, smp, &ch);
		if (weight == 0)
			weight = 1;
	}
	if (r)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	/* branch records with flags: counted by branch site */
	if (smp->n_branches && (a->sample_type & KF_SAMPLE_BRANCH_STACK) &&
	    !(a->branch_sample_type & KF_BRANCH_NO_FLAGS) && !s->o.annotate) {
		s->brsites.samples++;
		for (i = 0; i < smp->n_branches; i++) {
			struct kf_branch br;
			struct kf_frame bf;

			kf_sample_branch(smp, i, &br);
			kf_callchain_resolve_branch(&s->cc, th, smp, br.from, &bf);
			if (!kf_brsites_add(&s->brsites, &bf, &br))
				return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		}
	}
	if (s->o.off_cpu) {
		const struct kf_oc_attr *oa = oc_attr(s, evidx, a);
		uint64_t v, w;

		/* the thread is the tracepoint's prev_pid, the kernel's
		 * number as next_pid is (a sample's tid is the one in
		 * perf's pid namespace, and -1 for an exiting thread) */
		if (!oa || oa->kind != 1 || !smp->has_time)
			return 0;
		if (!raw_field(smp, &oa->prev_pid, &v) ||
		    !raw_field(smp, &oa->prev_state, &w)) {
			if (s->stats.offcpu_unreadable++ == 0)
				logf_(s, KF_LOG_WARN, "--off-cpu: a %s sample's raw data "
				      "(%" PRIu32 " bytes) does not hold the fields its "
				      "format places (prev_pid at %" PRIu32 ", prev_state at "
				      "%" PRIu32 "): not weighed", KF_OFFCPU_EVENT,
				      smp->raw_size, oa->prev_pid.offset, oa->prev_state.offset);
			return 0;
		}
		oc_tid = (int32_t)v;
		if (oc_tid == 0) {
			s->stats.offcpu_idle++;   /* the idle task */
			return 0;
		}
		oc_state = kf_offcpu_state_of(w);
		if (oc_state == KF_OFFCPU_DEAD) {
			s->stats.offcpu_dead++;
			return 0;
		}
	}
	if (s->o.count_samples)
		weight = 1;
	s->stats.samples_folded++;
	if (s->o.annotate && (r = count_ip(s, th, a, smp)) != 0)
		return r;
	if (s->o.annotate && s->o.call_sites) {
		/* every return address of the chain: the call it returns to */
		s->site_stamp++;
		for (i = 0; i < ch.n; i++) {
			const struct kf_frame *f = &ch.frames[i];

			if (!(f->flags & KF_FRAME_RA) || !f->module)
				continue;
			if (kf_ipcounts_add_once(&s->sites, f->module, f->addr,
						 (f->flags & KF_FRAME_KERNEL) != 0, smp->period,
						 s->site_stamp))
				return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		}
	}

	/* the root keeps the thread only where something tells threads
	 * apart: --pid, --tid, the context classifier */
	memset(&rd, 0, sizeof(rd));
	rd.comm = comm_id;
	rd.pid = s->o.root == KF_ROOT_PID || s->o.root == KF_ROOT_TID ? th->pid : -1;
	rd.tid = s->o.root == KF_ROOT_TID ? th->tid : -1;
	if (s->o.classify)
		ctx_root(s, th, a, smp, &ch, &rd);
	if (s->o.off_cpu)
		rd.offcpu = (uint8_t)(oc_state + 1);
	if (s->o.cgroup_root) {
		uint32_t sid;

		if ((r = sample_cgroup(s, a, smp, &sid)) == KF_EINVAL)
			return kf_fail(&s->err, r, "--cgroup: the samples of event %s "
				       "record no cgroup (perf record without "
				       "--all-cgroups)", kf_pd_event_name(s->pd, (size_t)
				       (evidx >= 0 ? evidx : 0)));
		if (r)
			return kf_fail(&s->err, r, "out of memory");
		rd.cgroup = sid + 1;
	}
	rid = kf_roots_intern(&s->roots, &rd);
	if (!rid)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	memset(&root, 0, sizeof(root));
	root.flags = KF_FRAME_ROOT;
	if ((a->sample_type & KF_SAMPLE_CALLCHAIN) &&
	    !((a->sample_type & KF_SAMPLE_REGS_USER) &&
	      (a->sample_type & KF_SAMPLE_STACK_USER)))
		root.flags |= KF_FRAME_FPCHAIN;
	root.root = rid;
	if (s->use_tsums && !kf_tsums_thread(&s->tsums, th->pid, th->tid, rid, &thread))
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	if (s->o.off_cpu) {
		/* weighed when the thread runs again (oc_switch_in) */
		bool replaced;

		/* with =wakers the waker's stack stands for the wait: the
		 * thread's own frames are not kept */
		if (!kf_offcpu_hold(&s->offcpu, oc_tid, smp->time, &root, ch.frames,
				    s->o.off_cpu_wakers ? 0 : ch.n, thread, th->pid, th->tid,
				    &replaced))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
		s->stats.offcpu_unmatched += replaced;
		return 0;
	}
	return add_stack(s, &root, ch.frames, ch.n, weight, thread);
}

/* The slot of the last counter value seen for a group value's id (perf
 * 6.1's perf_sample_id.period, one per id of the header), or, when the
 * event counts per thread, for (id, tid).  -1 on ENOMEM. */
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
		int ev, r;

		KF_WORK(1);
		kf_sample_read_value(smp, i, &value, &id);
		ev = kf_pd_attr_of_id(s->pd, id);
		if (ev < 0) {
			s->stats.samples_unknown_id++;
			continue;
		}
		va = kf_pd_attr(s->pd, (size_t)ev);
		per_thread = !s->pol->read_values_per_id && smp->has_tid &&
			     (va->sample_type & KF_SAMPLE_READ) &&
			     (va->sample_type & KF_SAMPLE_TID) &&
			     kf_attr_flag(va, KF_ATTR_INHERIT);
		if (kf_counters_update(&s->counters, id, per_thread, smp->tid, value,
				       &smp->period))
			return kf_fail(&s->err, KF_ENOMEM, "out of memory");
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
	s->cc.key = rec->seq;        /* --symbols-only: its unwind's key */
	/* perf script filters guest samples (perf_guest is off) */
	if ((smp.misc & KF_MISC_CPUMODE_MASK) >= KF_MISC_GUEST_KERNEL &&
	    s->pol->drop_guest_samples)
		return 0;
	if (smp.has_time && smp.time) {
		if (!s->first_time || smp.time < s->first_time)
			s->first_time = smp.time;
		if (smp.time > s->last_time)
			s->last_time = smp.time;
		s->dsos.last_time = s->last_time;
		s->dsos.has_time = true;
	}
	if (s->o.off_cpu && smp.has_time) {
		const struct kf_oc_attr *oa = oc_attr(s, rec->attr, a);
		uint64_t next;
		int r;

		/* a switch-in of next_pid (pid 0: the idle task) */
		if (oa && oa->kind == 1 && raw_field(&smp, &oa->next_pid, &next) &&
		    (int32_t)next != 0 && (r = oc_switch_in(s, (int32_t)next, smp.time)) != 0)
			return r;
		if (oa && oa->kind == 3 && (r = oc_wakeup(s, a, oa, &smp)) != 0)
			return r;
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
	case KF_REC_LOST_SAMPLES: {
		uint64_t n;

		if (kf_rec_lost(rec, kf_pd_swapped(s->pd), &n))
			*(rec->type == KF_REC_LOST ? &s->stats.lost_events :
			  &s->stats.lost_samples) += n;
		return 0;
	}
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
	case KF_REC_KSYMBOL:
	case KF_REC_BPF_EVENT:
	case KF_REC_NAMESPACES: {
		int r = kf_tasks_apply(&s->tasks, rec);

		return r ? kf_fail(&s->err, r, "out of memory") : 0;
	}
	case KF_REC_SWITCH:
	case KF_REC_SWITCH_CPU_WIDE: {
		struct kf_sample_id sid;

		/* --off-cpu: a switch-in (misc without PERF_RECORD_MISC_
		 * SWITCH_OUT) of the task its sample_id names */
		if (s->o.off_cpu && !(rec->misc & KF_MISC_SWITCH_OUT) &&
		    kf_pd_sample_id(s->pd, rec, &sid) && sid.has_tid && sid.has_time &&
		    sid.tid != 0)
			return oc_switch_in(s, (int32_t)sid.tid, sid.time);
		return 0;
	}
	case KF_REC_CGROUP:
		return on_cgroup(s, rec);
	case KF_REC_READ:
	case KF_REC_AUX:
	case KF_REC_ITRACE_START:
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

static void progress(struct kf_session *s, enum kf_phase phase, uint64_t offset)
{
	kf_progress p;

	p.phase = phase;
	p.offset = offset;
	p.end = kf_pd_data_end(s->pd);
	p.samples = s->stats.samples;
	s->o.progress(s->o.progress_payload, &p);
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
	if (!s->dwarf_events)
		return 0;
	r = kf_callchain_unwinding(&s->cc);
	if (r == KF_EUNSUPP) {
		logf_(s, KF_LOG_WARN, "user stacks of a %s capture cannot be "
		      "unwound yet; only the kernel part of each stack is shown",
		      kf_pd_env(s->pd)->arch);
		return 0;
	}
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	return 0;
}

static int setup_stages(struct kf_session *s)
{
	struct kf_dso_opts dopts;
	int r;

	/* perf 6.1 keeps a process's mappings across exec */
	r = kf_tasks_init(&s->tasks, &s->strings, &s->modules, kf_pd_swapped(s->pd),
			  false);
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	s->tasks_ready = true;
	/* --buildid-dir perf.data.tar.bz2: read in place (perfarchive.h) */
	r = kf_perfarchive_attach(&s->parchive, &s->fs, s->buildid_dir, dso_warn, s,
				  &s->err);
	if (r)
		return r;
	memset(&dopts, 0, sizeof(dopts));
	dopts.symfs = s->symfs;
	dopts.buildid_dir = s->buildid_dir;
	dopts.kallsyms = s->kallsyms;
	dopts.vmlinux = s->vmlinux;
	dopts.perf_map_dir = s->perf_map_dir;
	dopts.pol = s->pol;
	dopts.debug_dirs = (const char *const *)s->debug_dirs;
	dopts.n_debug_dirs = s->n_debug_dirs;
	dopts.host = s->o.host;
	dopts.root_of = module_root;
	dopts.root_ctx = s;
	kf_dsos_init(&s->dsos, &dopts, &s->fs, &s->modules, kf_pd_env(s->pd),
		     dso_warn, s);
	if (s->names)
		kf_nametab_attach(s->names, &s->dsos);
	/* the samples' clock: perf's default (sched_clock) unless the first
	 * event was recorded with -k CLOCKID */
	s->dsos.clockid = -1;
	if (kf_pd_n_attrs(s->pd) &&
	    kf_attr_flag(kf_pd_attr(s->pd, 0), KF_ATTR_USE_CLOCKID))
		s->dsos.clockid = kf_pd_attr(s->pd, 0)->clockid;
	s->dsos_ready = true;
	r = kf_namer_init(&s->namer, &s->dsos, &s->modules, s->pol,
			  s->o.inline_frames, s->o.srcline);
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	s->fold = (struct kf_fold_style){
		.pol = s->pol,
		.root_mode = (int)s->o.root,
		.suffixes = s->o.suffixes,
		.show_addrs = s->o.show_addrs,
		/* the namer gives lines only in kfold's own naming */
		.srcline = s->namer.srcline,
	};
	r = kf_fold_texts_init(&s->texts, &s->namer, &s->fold);
	if (r) {
		kf_namer_fini(&s->namer);
		return kf_fail(&s->err, r, "out of memory");
	}
	s->namer_ready = true;
	kf_callchain_init(&s->cc, &s->tasks, &s->modules, &s->dsos, kf_pd_env(s->pd),
			  s->pol, s->namer.a2l_inline ? &s->namer : NULL);
	s->cc.uw_record = s->uw_record;
	s->cc.uw_replay = s->uw_replay;
	s->cc.stitch = s->o.stitch;
	s->cc.stitch_lbr = s->o.stitch_lbr;
	if (s->o.stitch && s->uw_record)
		return kf_fail(&s->err, KF_EINVAL, "--stitch: kfold archive "
			       "--symbols-only keeps each unwind as it ends; give "
			       "--stitch when reading the bundle");
	if (s->o.stitch && s->uw_replay)
		logf_(s, KF_LOG_WARN, "--stitch: a --symbols-only bundle's unwinds "
		      "keep no stack pointers: nothing is stitched");
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
 * recorded address (the map's pgoff), for relocating kallsyms. */
static void note_kernel_ref(struct kf_session *s, const struct kf_rec *rec)
{
	struct kf_mmap_view v;
	char ref[64];
	char *br;

	if ((rec->misc & KF_MISC_CPUMODE_MASK) != KF_MISC_KERNEL ||
	    !kf_rec_mmap(rec, kf_pd_swapped(s->pd), &v))
		return;
	if (v.filename_len < 17 || memcmp(v.filename, "[kernel.kallsyms]", 17) != 0)
		return;
	snprintf(ref, sizeof(ref), "%.*s", (int)(v.filename_len - 17), v.filename + 17);
	br = strchr(ref, ']');
	if (br)
		*br = '\0';
	kf_dsos_kernel_ref(&s->dsos, ref, v.pgoff);
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
	} else if (s->stats.samples_folded == 0 && s->stats.samples_filtered) {
		logf_(s, KF_LOG_WARN, "the filters left out all %" PRIu64 " samples they "
		      "saw: the output is empty", s->stats.samples_filtered);
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
/* The callchain stage counts what its chains needed; the stats say it. */
static void chain_counts(struct kf_session *s)
{
	s->stats.samples_dwarf = s->cc.counts.samples_dwarf;
	s->stats.samples_unwound = s->cc.counts.samples_unwound;
	s->stats.frames_guessed = s->cc.counts.frames_guessed;
	s->stats.stitch_cut = s->cc.counts.samples_cut;
	s->stats.stitch_samples = s->cc.counts.samples_stitched;
	s->stats.stitch_frames = s->cc.counts.frames_stitched;
	s->stats.stitch_still_cut = s->cc.counts.samples_still_cut;
	s->stats.lbr_samples = s->cc.counts.samples_lbr;
	s->stats.lbr_full = s->cc.counts.samples_lbr_full;
	s->stats.lbr_stopped = s->cc.counts.samples_lbr_stopped;
	s->stats.lbr_empty = s->cc.counts.samples_lbr_empty;
	s->stats.lbr_stitched = s->cc.counts.samples_lbr_stitched;
	s->stats.lbr_stitched_frames = s->cc.counts.frames_lbr_stitched;
	s->stats.lbr_depth = kf_pd_env(s->pd) ? kf_pd_env(s->pd)->max_branches : 0;
}

static void warn_not_unwound(struct kf_session *s)
{
	int k;

	for (k = 0; k < KF_UWS_N; k++) {
		if (s->cc.counts.uw_skipped[k])
			logf_(s, KF_LOG_WARN, "%" PRIu64 " of %" PRIu64 " samples "
			      "recorded with --call-graph dwarf were not unwound "
			      "(no user frames): %s; %s", s->cc.counts.uw_skipped[k],
			      s->stats.samples_dwarf,
			      kf_diag_skip_reason((enum kf_uw_skip)k) +
			      strlen("not unwound: "),
			      kf_diag_skip_hint((enum kf_uw_skip)k));
	}
}

/* What the end of a run says of the counts a reader would want to know,
 * each with its count (a kf_stats field) when it is not 0. */
static const struct {
	size_t count;            /* offsetof(kf_stats, ...) */
	const char *fmt;         /* takes the count */
} end_warnings[] = {
	{ offsetof(kf_stats, lost_events), "%" PRIu64 " events were lost while "
	  "recording (the ring buffer overflowed); stacks are incomplete" },
	{ offsetof(kf_stats, lost_samples), "%" PRIu64 " samples were lost while "
	  "recording" },
	{ offsetof(kf_stats, throttles), "sampling was throttled %" PRIu64 " times" },
	{ offsetof(kf_stats, out_of_order), "%" PRIu64 " records arrived more than "
	  "one round late (out of order)" },
	{ offsetof(kf_stats, samples_unknown_id), "%" PRIu64 " samples have an event "
	  "id the header does not list; skipped" },
	{ offsetof(kf_stats, samples_bad), "%" PRIu64 " samples could not be "
	  "decoded; skipped" },
};

/* What the ordering queue no longer holds is not needed again. */
static void release_behind(struct kf_session *s)
{
	uint64_t off;
	const uint8_t *keep = kf_order_min_stable(s->order, &off);

	kf_pd_release(s->pd, keep, off);
}

/* The records from the one open() read ahead to the end of the stream. */
static int run(struct kf_session *s)
{
	struct kf_rec rec = s->first;
	const char *w;
	size_t i;
	int r;

	for (r = s->first_r; r > 0; r = kf_pd_next(s->pd, &rec)) {
		struct kf_sample_id sid;

		if (s->o.progress && (s->stats.records & 4095) == 0)
			progress(s, s->dwarf_events ? KF_PHASE_UNWINDING : KF_PHASE_READING,
				 rec.offset);
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
			release_behind(s);
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
				release_behind(s);
			}
			continue;
		}
		r = deliver(s, &rec);
		if (r)
			return r;
	}
	if (r < 0)
		return r;
	while ((w = kf_pd_take_warning(s->pd)))
		logf_(s, KF_LOG_WARN, "%s", w);
	kf_order_flush(s->order, KF_ORDER_FINAL);
	r = drain(s);
	if (r)
		return r;
	if (s->o.off_cpu && (r = oc_end(s)) != 0)
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
	for (i = 0; i < sizeof(end_warnings) / sizeof(end_warnings[0]); i++) {
		const uint64_t *n = (const uint64_t *)(const void *)
				    ((const char *)&s->stats + end_warnings[i].count);

		if (*n)
			logf_(s, KF_LOG_WARN, end_warnings[i].fmt, *n);
	}
	if (s->tasks.bad_records)
		logf_(s, KF_LOG_WARN, "%" PRIu64 " sideband records were too short; skipped",
		      s->tasks.bad_records);
	chain_counts(s);
	warn_not_unwound(s);
	return check_selection(s);
}

/* Opening reads the header, attrs and features (kf_pd_open_*), sets the
 * stages up from them and reads ahead to the first record that is not
 * metadata, so that in pipe mode the attrs and features sent in front of
 * the data are known too; that record waits in s->first for the run.
 * The stages are set up before the read-ahead because that is what they
 * saw when load was one step (in pipe mode: no attrs yet), and the
 * reader's warnings are said after it, in the order a load said them. */
static int after_open(struct kf_session *s, int r, uint64_t w0)
{
	const char *w;

	if (r) {
		if (s->pd)
			while ((w = kf_pd_take_warning(s->pd)))
				logf_(s, KF_LOG_WARN, "%s", w);
		s->stats.work = kf_work_flush(&s->work, w0);
		return r;
	}
	r = setup_stages(s);
	if (r == 0) {
		s->first_r = kf_pd_next(s->pd, &s->first);
		if (s->first_r < 0)
			r = s->first_r;
	}
	if (r == 0) {
		while ((w = kf_pd_take_warning(s->pd)))
			logf_(s, KF_LOG_WARN, "%s", w);
		s->opened = true;
	}
	s->stats.work = kf_work_flush(&s->work, w0);
	return r;
}

static int begin_open(kf_session *s)
{
	if (s->pd || s->opened)
		return kf_fail(&s->err, KF_EINVAL, "a session opens one capture");
	return 0;
}

/* Whether fd's first bytes are a bundle's (pread: a pipe is none). */
static bool fd_is_bundle(int fd)
{
	unsigned char head[512];
	ssize_t n = pread(fd, head, sizeof(head), 0);

	return n > 0 && kf_bundle_sniff(head, (size_t)n);
}

/* A bundle read into the session (bundle.h), then its capture opened. */
static int open_bundle(kf_session *s, int fd, const void *buf, size_t len,
		       const char *name, uint64_t w0)
{
	int r = buf ? kf_bundle_open_mem(s, buf, len, name) :
		kf_bundle_open_fd(s, fd, name);

	if (r)
		return after_open(s, r, w0);
	{
		const int *fds;
		const char *const *names;
		size_t n;

		if (kf_bundle_capture_parts(s->bundle, &fds, &names, &n))
			return after_open(s, kf_pd_open_parts(&s->pd,
					  kf_bundle_capture_fd(s->bundle), fds, names, n,
					  name, &s->err), w0);
	}
	return after_open(s, kf_pd_open_fd(&s->pd, kf_bundle_capture_fd(s->bundle),
					   name, &s->err), w0);
}

/* Whether standard input, a pipe, starts with a bundle: its first bytes
 * are looked at without being taken (tee(2) copies what the pipe holds),
 * so a capture streamed there is read as it is. */
static bool stdin_pipe_is_bundle(void)
{
	unsigned char head[512];
	ssize_t n, got = 0;
	int p[2];

	if (pipe2(p, O_CLOEXEC) != 0)
		return false;
	n = tee(0, p[1], sizeof(head), 0);
	if (n > 0)
		got = read(p[0], head, (size_t)n);
	close(p[0]);
	close(p[1]);
	return got > 0 && kf_bundle_sniff(head, (size_t)got);
}

int kf_session_open_path(kf_session *s, const char *path)
{
	uint64_t w0 = kf_work;
	int r = begin_open(s);
	struct stat st;

	if (r)
		return r;
	/* a bundle on standard input: a file (kfold - < B) or a pipe, copied
	 * into memory first (a bundle is read whole anyway) */
	if (strcmp(path, "-") == 0 && fstat(0, &st) == 0) {
		if (S_ISREG(st.st_mode) && fd_is_bundle(0))
			return open_bundle(s, 0, NULL, 0, "-", w0);
		if (S_ISFIFO(st.st_mode) && stdin_pipe_is_bundle()) {
			int fd = kf_bundle_spool(0);

			if (fd < 0)
				return kf_fail(&s->err, KF_EIO, "standard input: %s",
					       strerror(errno));
			r = open_bundle(s, fd, NULL, 0, "-", w0);
			close(fd);
			return r;
		}
	}
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

		if (fd >= 0 && fd_is_bundle(fd)) {
			r = open_bundle(s, fd, NULL, 0, path, w0);
			close(fd);
			return r;
		}
		if (fd >= 0)
			close(fd);
	}
	return after_open(s, kf_pd_open_path(&s->pd, path, &s->err), w0);
}

int kf_session_open_fd(kf_session *s, int fd, const char *name)
{
	uint64_t w0 = kf_work;
	int r = begin_open(s);

	if (r)
		return r;
	if (fd_is_bundle(fd))
		return open_bundle(s, fd, NULL, 0, name ? name : "bundle", w0);
	return after_open(s, kf_pd_open_fd(&s->pd, fd, name, &s->err), w0);
}

int kf_session_open_mem(kf_session *s, const void *buf, size_t len)
{
	uint64_t w0 = kf_work;
	int r = begin_open(s);

	if (r)
		return r;
	if (kf_bundle_sniff(buf, len))
		return open_bundle(s, -1, buf, len, "bundle", w0);
	return after_open(s, kf_pd_open_mem(&s->pd, buf, len, &s->err), w0);
}


int kf_session_run(kf_session *s)
{
	uint64_t w0 = kf_work;
	int r;

	if (!s->opened)
		return kf_fail(&s->err, KF_EINVAL, "no capture opened");
	if (s->ran)
		return kf_fail(&s->err, KF_EINVAL, "a session reads its samples once");
	s->ran = true;
	if (s->filters.time_percent) {
		const struct kf_env *env = kf_pd_env(s->pd);
		char msg[256];

		/* perf takes the span from the header too, and refuses a
		 * span of 0 .. 0, which pipe mode writes (perf 6.1's
		 * perf_time__parse_for_ranges) */
		if (!(env->features[0] >> KF_FEAT_SAMPLE_TIME & 1) ||
		    (!env->first_sample_time && !env->last_sample_time))
			return kf_fail(&s->err, KF_EINVAL, "--time %s: percentages are of "
				       "the span from the first to the last sample, which "
				       "this capture's header does not give (perf record "
				       "writes it to a file, not to a pipe)",
				       s->filters.given[KF_FILTER_TIME]);
		if ((r = kf_filter_time_span(&s->filters, env->first_sample_time,
					     env->last_sample_time, msg, sizeof(msg))) != 0)
			return kf_fail(&s->err, r, "%s", msg);
	}
	/* --jobs: the trie on a thread of its own; if that thread cannot
	 * be had, this one builds it */
	if (s->o.jobs > 1 &&
	    kf_feed_start(&s->feed, &s->stacks, s->use_tsums ? &s->tsums : NULL, &s->work) == 0)
		s->feeding = true;
	r = run(s);
	/* read to the end and drained: a file read in chunks lets them go */
	if (r == 0)
		kf_pd_release(s->pd, NULL, 0);
	if (s->feeding) {
		int fr = kf_feed_finish(&s->feed);

		s->feeding = false;
		if (fr && r == 0)
			r = kf_fail(&s->err, fr, "out of memory");
	}
	/* the samples are in: the trie's lookup index is not needed again
	 * (a later insert would rebuild it), and the emitters' own tables
	 * can have its memory */
	kf_stacks_drop_index(&s->stacks);
	/* each node's threads, listed for the reports' walks */
	if (r == 0 && s->use_tsums && !kf_tsums_index(&s->tsums, s->stacks.n))
		r = kf_fail(&s->err, KF_ENOMEM, "out of memory");
	/* the trie is complete: its frames are numbered for the naming on
	 * another thread while this one loads the symbol files below */
	if (r == 0 && s->namer_ready && !s->o.annotate &&
	    kf_fold_number_ahead(&s->texts, &s->stacks, s->o.jobs, &s->work))
		r = kf_fail(&s->err, KF_ENOMEM, "out of memory");
	if (s->o.progress)
		progress(s, KF_PHASE_NAMING, kf_pd_data_end(s->pd));
	chain_counts(s);
	/* the prepare step (dso.h): every hit module's files, loaded here,
	 * after the samples and before any output, so that everything after
	 * (names, reports, kf_session_module) only reads */
	if (r == 0 && s->namer_ready) {
		r = kf_session_list_hit(s);
		if (r == 0)
			r = kf_dsos_prepare(&s->dsos, s->hit, s->n_hit, kf_namer_wants,
					    &s->namer);
		if (r)
			r = kf_fail(&s->err, r, "out of memory");
	}
	s->stats.work = kf_work_flush(&s->work, w0);
	return r;
}

int kf_session_load_path(kf_session *s, const char *path)
{
	int r = kf_session_open_path(s, path);

	return r ? r : kf_session_run(s);
}

int kf_session_load_fd(kf_session *s, int fd, const char *name)
{
	int r = kf_session_open_fd(s, fd, name);

	return r ? r : kf_session_run(s);
}

int kf_session_load_mem(kf_session *s, const void *buf, size_t len)
{
	int r = kf_session_open_mem(s, buf, len);

	return r ? r : kf_session_run(s);
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

/* The naming of the input trie's frames, beside the rewrite (arg: the
 * session). */
struct prename {
	struct kf_session *s;
	uint32_t *text;          /* per node of s->stacks, or NULL */
	int r;
};

static void *prename_main(void *arg)
{
	struct prename *pn = arg;
	struct kf_session *s = pn->s;
	uint64_t w0 = kf_work;

	pn->r = kf_fold_name_nodes(&s->texts, &s->stacks, &s->roots, &s->strings, 1, NULL,
				   pn->text, NULL);
	kf_work_flush(&s->work, w0);
	return NULL;
}

/* The rewritten trie of --context/--exclude into *out.  Without
 * --exclude it holds the input's frames and no other real ones, so the
 * input's nodes are named while it is made (on a thread of their own
 * when jobs > 1: the rewrite no longer needs the namer once it began),
 * and *text gets each output node's text from its origin's: the emitter
 * need not name 1.7 M nodes again (NULL when that could not be had: the
 * emitter then names them).  With --exclude the stacks left out may
 * hold frames nothing else has, which are not named, as before. */
static int rewrite_named(struct kf_session *s, struct kf_stacks *out, uint32_t **text)
{
	struct kf_ctx_rewriter *rw;
	struct prename pn = { .s = s };
	uint32_t *origin = NULL;
	pthread_t th;
	bool thread = false;
	int r;

	*text = NULL;
	r = kf_ctx_rewrite_begin(&rw, &s->stacks, &s->namer, &s->roots, s->rules,
				 s->o.context, s->o.exclude, s->o.jobs, out);
	if (r)
		return r;
	if (!s->o.exclude) {
		pn.text = kf_fold_name_array(&s->texts, &s->stacks);
		if (s->o.jobs > 1 && pthread_create(&th, NULL, prename_main, &pn) == 0)
			thread = true;
		else
			prename_main(&pn);
	}
	r = kf_ctx_rewrite_end(rw, pn.text ? &origin : NULL);
	if (thread)
		pthread_join(th, NULL);
	/* an error of the naming is met again, and reported, by the
	 * emitter, which then names every node */
	if (!r && origin && !pn.r) {
		*text = kf_calloc(out->n ? out->n : 1, sizeof(**text));
		if (*text && kf_fold_name_derived(&s->texts, out, origin, pn.text, *text)) {
			free(*text);
			*text = NULL;
		}
	}
	free(origin);
	kf_fold_name_array_free(&s->texts, pn.text);
	return r;
}

int kf_session_write_folded(kf_session *s, FILE *out)
{
	const struct kf_stacks *st = &s->stacks;
	struct kf_stacks rewritten;
	uint32_t *text = NULL;
	bool rewrite = s->o.context != KF_CONTEXT_NONE || s->o.exclude;
	uint64_t lines = 0, w0 = kf_work;
	int r;

	if (!s->namer_ready)
		return 0;
	if (rewrite) {
		r = rewrite_named(s, &rewritten, &text);
		if (r)
			return kf_fail(&s->err, r, "out of memory");
		kf_stacks_drop_index(&rewritten);
		st = &rewritten;
		if (kf_attr_is_soft_clock(kf_session_folded_attr(s)))
			logf_(s, KF_LOG_WARN, "event %s %s", s->filter, kf_soft_clock_note);
	}
	/* the piece trie beside the naming: worth a thread where frames
	 * are expected to be inline chains (perf's rare "->" splits take
	 * the one-thread path, which also handles them) */
	r = kf_emit_folded(st, &s->texts, &s->roots, &s->strings, text, s->o.jobs,
			   s->o.inline_frames, &s->work, out, &lines);
	free(text);
	if (rewrite)
		kf_stacks_fini(&rewritten);
	kf_session_note_unverified(s);
	s->stats.stacks = lines;
	s->stats.work = kf_work_flush(&s->work, w0);
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

/* A kernel module's entry, which perf names by its .ko path: 1 + its
 * index, 0 for none. */
static uint32_t kmodule_bid_entry(const struct kf_env *e, const struct kf_module *mod)
{
	char kname[256];
	size_t k;

	for (k = 0; k < e->n_buildids; k++) {
		const struct kf_buildid_entry *b = &e->buildids[k];

		KF_WORK(1);
		if (b->cpumode != 1 || b->filename[0] != '/')
			continue;
		kf_kmodule_name(b->filename, strlen(b->filename), kname, sizeof(kname));
		if (strcmp(kname, mod->name) == 0)
			return (uint32_t)k + 1;
	}
	return 0;
}

int kf_session_list_hit(kf_session *s)
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
		if (!mod->bid_len && e->n_buildids && !kf_dso_bid_ambiguous(&s->dsos, mod->id))
			s->hit_bid[n] = (uint32_t)(bid_entry(e, &by_name, all_in_map,
							     mod->name) + 1);
		if (!s->hit_bid[n] && mod->kind == KF_MOD_KMODULE)
			s->hit_bid[n] = kmodule_bid_entry(e, mod);
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
	if (kf_session_list_hit(s))
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
	dinfod = mi.build_id[0] && !s->pol->no_debuginfod && !s->dsos.dinfod.enabled;
	kf_buf_fini(&s->advice);
	kf_buf_init(&s->advice);
	kf_diag_debuginfo_advice(&s->advice, mi.name, mi.build_id, dinfod);
	return s->advice.oom ? NULL : kf_buf_cstr(&s->advice);
}

const char *kf_fp_break_hint(void)
{
	return kf_diag_fp_hint_stats;
}

const char *kf_lbr_full_hint(void)
{
	return kf_diag_lbr_full_hint;
}

/* ---- the capture's header ------------------------------------------------------ */

int kf_session_write_header(kf_session *s, FILE *out)
{
	struct kf_header_event *ev;
	struct kf_header_facts h;
	size_t i, n;
	int r, err;

	if (!s->opened)
		return kf_fail(&s->err, KF_EINVAL, "no capture opened");
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

/* ---- the capture's facts, for a program ------------------------------------------ */

int kf_session_capture(const kf_session *s, kf_capture_info *out)
{
	const struct kf_env *e;

	memset(out, 0, sizeof(*out));
	if (!s->opened)
		return KF_EINVAL;
	e = kf_pd_env(s->pd);
	out->hostname = e->hostname;
	out->os_release = e->osrelease;
	out->perf_version = e->version;
	out->arch = e->arch;
	out->cpu_desc = e->cpudesc;
	out->cpuid = e->cpuid;
	out->has_nr_cpus = e->features[0] >> KF_FEAT_NRCPUS & 1;
	out->nr_cpus_online = e->nr_cpus_online;
	out->nr_cpus_avail = e->nr_cpus_avail;
	if (e->features[0] >> KF_FEAT_TOTAL_MEM & 1)
		out->total_mem_kb = e->total_mem_kb;
	if (e->cmdline) {
		out->cmdline = (const char *const *)e->cmdline;
		out->n_cmdline = e->n_cmdline;
	}
	out->has_sample_time = e->features[0] >> KF_FEAT_SAMPLE_TIME & 1;
	out->first_sample_time = e->first_sample_time;
	out->last_sample_time = e->last_sample_time;
	out->compressed = e->has_compressed;
	out->pipe = kf_pd_is_pipe(s->pd);
	out->n_events = kf_pd_n_attrs(s->pd);
	out->n_buildids = e->n_buildids;
	return 0;
}

size_t kf_session_n_events(const kf_session *s)
{
	return s->opened ? kf_pd_n_attrs(s->pd) : 0;
}

int kf_session_event(const kf_session *s, size_t i, kf_event_info *out)
{
	const struct kf_attr *a;

	memset(out, 0, sizeof(*out));
	if (i >= kf_session_n_events(s))
		return KF_EINVAL;
	a = kf_pd_attr(s->pd, i);
	out->name = kf_pd_event_name(s->pd, i);
	out->type = a->type;
	out->config = a->config;
	out->sample_type = a->sample_type;
	out->sample_period = a->sample_period;
	out->freq = kf_attr_flag(a, KF_ATTR_FREQ);
	return 0;
}

size_t kf_session_n_buildids(const kf_session *s)
{
	return s->opened ? kf_pd_env(s->pd)->n_buildids : 0;
}

int kf_session_buildid(const kf_session *s, size_t i, kf_buildid_info *out)
{
	const struct kf_buildid_entry *e;

	memset(out, 0, sizeof(*out));
	if (i >= kf_session_n_buildids(s))
		return KF_EINVAL;
	e = &kf_pd_env(s->pd)->buildids[i];
	out->path = e->filename;
	kf_bid_hex(e->id, e->len, out->build_id);
	out->kernel = e->cpumode == KF_MISC_KERNEL || e->cpumode == KF_MISC_GUEST_KERNEL;
	out->pid = e->pid;
	return 0;
}

/* ---- why unwinds stopped -------------------------------------------------------- */

size_t kf_session_n_unwind_stops(const kf_session *s)
{
	return s->stops.ranked ? s->stops.n :
	       kf_diag_count_stops(s->cc.counts.uw_skipped, kf_callchain_unwinder(&s->cc), s->modules.n);
}

int kf_session_unwind_stop(kf_session *s, size_t i, kf_unwind_stop *out)
{
	const struct kf_uw_stop *v;

	memset(out, 0, sizeof(*out));
	if (kf_diag_rank_stops(&s->stops, s->cc.counts.uw_skipped, kf_callchain_unwinder(&s->cc), s->modules.n))
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

static const char *fp_frame_text(void *ctx, const struct kf_frame *f)
{
	struct kf_session *s = ctx;
	uint32_t tid;

	if (kf_fold_text_id(&s->texts, f, false, &tid))
		return NULL;
	return kf_strtab_get(&s->texts.texts, tid);
}

static void count_fp_breaks(kf_session *s)
{
	if (s->namer_ready)
		kf_diag_count_fp(&s->fp, &s->stacks, fp_frame_text, s, s->modules.n);
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

/* ---- the JSON report and --explain (report.h) ---------------------------------- */

/* What the report's writers read, listed from the session (report.h).
 * The lists are taken after the gather, in the order the writers used
 * to ask for them: modules, then unwinding, then the unverified note. */
struct report_lists {
	kf_module_info *mods;
	uint32_t *mod_ids;
	kf_fp_break *fp_breaks;
	kf_unwind_stop *stops;
	bool *soft_clock;
	char unverified[512];
};

static void report_in(kf_session *s, struct kf_report_in *in, struct report_lists *l)
{
	const struct kf_attr *a = kf_session_folded_attr(s);

	memset(in, 0, sizeof(*in));
	memset(l, 0, sizeof(*l));
	in->stacks = &s->stacks;
	in->roots = &s->roots;
	in->tsums = s->use_tsums ? &s->tsums : NULL;
	in->comms = &s->strings;
	in->namer = s->namer_ready ? &s->namer : NULL;
	in->jobs = s->o.jobs;
	in->work = &s->work;
	in->texts = &s->texts;
	in->fold = &s->fold;
	in->modules = &s->modules;
	in->dsos = &s->dsos;
	in->rules = s->o.classify ? s->rules : NULL;
	in->exclude = s->o.exclude;
	in->pd = s->pd;
	in->stats = &s->stats;
	in->filter = s->filter;
	in->folded_attr = a;
	in->folded_soft_clock = kf_attr_is_soft_clock(a);
	in->soft_clock_note = kf_soft_clock_note;
	in->first_time = s->first_time;
	in->last_time = s->last_time;
	in->filters = &s->filters;
	in->count_samples = s->o.count_samples;
	in->off_cpu = s->o.off_cpu;
	in->stitch = s->o.stitch;
	in->brsites = &s->brsites;
	in->lines_looked_for = s->o.inline_frames || s->o.srcline;
	in->version = kf_version();
}

/* modules: the JSON report's list (--explain has none: listing them
 * would look for debug info it does not print) */
static int report_lists(kf_session *s, struct kf_report_in *in, struct report_lists *l,
			bool modules)
{
	size_t i, n = modules ? kf_session_n_modules(s) : 0;
	size_t np = s->pd ? kf_pd_n_attrs(s->pd) : 0;
	size_t nb, nu;

	l->mods = kf_calloc(n + 1, sizeof(*l->mods));
	l->mod_ids = kf_calloc(n + 1, sizeof(*l->mod_ids));
	l->soft_clock = kf_calloc(np + 1, sizeof(*l->soft_clock));
	if (!l->mods || !l->mod_ids || !l->soft_clock)
		return KF_ENOMEM;
	for (i = 0; i < n; i++) {
		if (kf_session_module(s, i, &l->mods[in->n_mods]) != 0)
			continue;
		l->mod_ids[in->n_mods++] = s->hit[i];
	}
	in->mods = l->mods;
	in->mod_ids = l->mod_ids;
	for (i = 0; i < np; i++)
		l->soft_clock[i] = kf_attr_is_soft_clock(kf_pd_attr(s->pd, i));
	in->soft_clock = l->soft_clock;
	kf_session_fp_chains(s, &in->fp_samples, &in->fp_broken);
	nb = kf_session_n_fp_breaks(s);
	nu = kf_session_n_unwind_stops(s);
	l->fp_breaks = kf_calloc(nb + 1, sizeof(*l->fp_breaks));
	l->stops = kf_calloc(nu + 1, sizeof(*l->stops));
	if (!l->fp_breaks || !l->stops)
		return KF_ENOMEM;
	for (i = 0; i < nb; i++)
		if (kf_session_fp_break(s, i, &l->fp_breaks[in->n_fp_breaks]) == 0)
			in->n_fp_breaks++;
	for (i = 0; i < nu; i++)
		if (kf_session_unwind_stop(s, i, &l->stops[in->n_stops]) == 0)
			in->n_stops++;
	in->fp_breaks = l->fp_breaks;
	in->stops = l->stops;
	if (kf_session_unverified_text(s, l->unverified, sizeof(l->unverified)))
		in->unverified = l->unverified;
	return 0;
}

/* note: the output was written (or its end failed), so the warning on
 * unverified files is due */
static int report_finish(kf_session *s, struct kf_report *rp, struct report_lists *l,
			 int r, bool note, uint64_t w0)
{
	if (note)
		kf_session_note_unverified(s);
	s->stats.work = kf_work_flush(&s->work, w0);
	kf_report_fini(rp);
	free(l->mods);
	free(l->mod_ids);
	free(l->fp_breaks);
	free(l->stops);
	free(l->soft_clock);
	if (r == KF_EINVAL)
		return kf_fail(&s->err, r, "kernel contexts need the capture loaded "
			       "with classify set");
	if (r == KF_EIO)
		return kf_fail(&s->err, r, "writing the output: %s", strerror(errno));
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	return 0;
}

int kf_session_write_json(kf_session *s, FILE *out)
{
	uint64_t w0 = kf_work, stacks = 0;
	struct kf_report_in in;
	struct report_lists l;
	struct kf_report rp;
	int r;

	report_in(s, &in, &l);
	r = kf_report_gather(&rp, &in, true);
	if (!r)
		r = kf_report_json_start(&rp);
	if (!r)
		r = report_lists(s, &in, &l, true);
	if (!r)
		r = kf_report_json(&rp, out, &stacks);
	if (!r)
		s->stats.stacks = stacks;
	return report_finish(s, &rp, &l, r, true, w0);
}

/* What pprof and the flame graph are made from: the session's stacks and
 * modules and, when it classifies, each stack's verdict and leaf
 * context. */
struct stack_in {
	kf_session *s;
	struct kf_map64 of_node;      /* trie node -> ent */
	struct stack_ctx {
		uint32_t leaf;            /* id in labels */
		uint8_t verdict;          /* enum kf_ctx_verdict */
	} *ent;
	size_t n, cap;
	struct kf_strtab labels;
	struct kf_buf tmp;
};

static int in_stack(void *ctx, size_t i, kf_stack_info *out)
{
	return kf_session_stack(((struct stack_in *)ctx)->s, i, out);
}

static int in_module(void *ctx, size_t i, kf_module_info *out)
{
	return kf_session_module(((struct stack_in *)ctx)->s, i, out);
}

static int in_visit(void *payload, const struct kf_ctx_stack *cs)
{
	struct stack_in *in = payload;

	in->tmp.len = 0;
	kf_ctx_label(&cs->ctx->leaf, true, &in->tmp);
	if (in->n >= UINT32_MAX || !KF_GROW(in->ent, in->cap, in->n + 1) || in->tmp.oom ||
	    !kf_strtab_intern(&in->labels, in->tmp.p, in->tmp.len, &in->ent[in->n].leaf) ||
	    !kf_map64_put(&in->of_node, cs->node, (uint32_t)in->n))
		return KF_ENOMEM;
	in->ent[in->n++].verdict = cs->ctx->verdict;
	return 0;
}

static void in_contexts(void *ctx, size_t i, const char **verdict, const char **leaf)
{
	struct stack_in *in = ctx;
	uint32_t k;

	if (i < in->s->walk.n && kf_map64_get(&in->of_node, in->s->walk.nodes[i], &k)) {
		*verdict = kf_ctx_verdict_name(in->ent[k].verdict);
		*leaf = kf_strtab_get(&in->labels, in->ent[k].leaf);
	}
}

static void stack_in_fini(struct stack_in *in)
{
	kf_map64_fini(&in->of_node);
	kf_strtab_fini(&in->labels);
	kf_buf_fini(&in->tmp);
	free(in->ent);
}

/* Sets up in and src over the session's stacks; when it classifies,
 * every stack is classified first (the walk the report makes). */
static int stack_in_init(kf_session *s, struct stack_in *in, struct kf_stack_src *src)
{
	struct kf_ctx_prep *prep = NULL;
	int r;

	memset(in, 0, sizeof(*in));
	in->s = s;
	kf_map64_init(&in->of_node);
	kf_buf_init(&in->tmp);
	*src = (struct kf_stack_src){ in, kf_session_n_stacks(s), kf_session_n_modules(s),
				      in_stack, in_module, NULL, false, NULL };
	if (!s->o.classify || !s->rules || !s->namer_ready)
		return 0;
	if (!kf_strtab_init(&in->labels))
		return KF_ENOMEM;
	r = kf_ctx_prepare_begin(&prep, &s->stacks, &s->roots, &s->namer, s->rules);
	if (!r) {
		kf_ctx_prepare_nodes(prep);
		r = kf_ctx_walk_range(prep, 1, s->stacks.n, in_visit, in);
	}
	kf_ctx_prep_free(prep);
	src->contexts = in_contexts;
	return r;
}

/* the samples' time range: the header's (perf record writes it), else
 * the samples' own */
static void time_range(const kf_session *s, uint64_t *first, uint64_t *last)
{
	const struct kf_env *e = kf_pd_env(s->pd);
	bool header = e->first_sample_time || e->last_sample_time;

	*first = header ? e->first_sample_time : s->first_time;
	*last = header ? e->last_sample_time : s->last_time;
}

/* the end of a writer over stack_in: its error, errno of the write */
static int stack_out_end(kf_session *s, int r, int err, uint64_t w0, const char *what)
{
	s->stats.work = kf_work_flush(&s->work, w0);
	if (r == KF_EIO)
		return kf_fail(&s->err, KF_EIO, "writing the %s: %s", what, strerror(err));
	if (r == KF_ENOMEM)
		return kf_fail(&s->err, KF_ENOMEM, "out of memory");
	if (r == KF_EUNSUPP)
		return kf_fail(&s->err, KF_EUNSUPP, "the %s cannot hold this many names", what);
	return r;
}

int kf_session_write_pprof(kf_session *s, FILE *out)
{
	struct kf_stack_src src;
	struct stack_in in;
	const struct kf_attr *a = kf_session_folded_attr(s);
	const struct kf_env *e;
	struct kf_pprof_facts f;
	char note[512], host[300], lost[100];
	const char *comments[4];
	uint64_t first, last, w0 = kf_work;
	int r, err;

	if (!s->ran)
		return kf_fail(&s->err, KF_EINVAL, "no capture run");
	e = kf_pd_env(s->pd);
	memset(&f, 0, sizeof(f));
	f.event = s->filter ? s->filter : "samples";
	f.unit = (a && kf_attr_is_soft_clock(a)) || s->o.off_cpu ? "nanoseconds" : "count";
	if (s->o.off_cpu)
		f.event = "off-cpu";
	f.count_samples = s->o.count_samples;
	if (a && !kf_attr_flag(a, KF_ATTR_FREQ) && a->sample_period <= INT64_MAX)
		f.period = (int64_t)a->sample_period;
	time_range(s, &first, &last);
	if (last > first && last - first <= INT64_MAX)
		f.duration_ns = (int64_t)(last - first);
	snprintf(note, sizeof(note), "kfold %s", kf_version());
	comments[f.n_comments++] = note;
	if (e->hostname) {
		snprintf(host, sizeof(host), "host %s", e->hostname);
		comments[f.n_comments++] = host;
	}
	if (s->stats.lost_samples || s->stats.lost_events) {
		snprintf(lost, sizeof(lost), "lost: %" PRIu64 " samples, %" PRIu64 " events",
			 s->stats.lost_samples, s->stats.lost_events);
		comments[f.n_comments++] = lost;
	}
	f.comments = comments;
	r = stack_in_init(s, &in, &src);
	if (!r)
		r = kf_pprof_write(&src, &f, out);
	err = errno;
	stack_in_fini(&in);
	return stack_out_end(s, r, err, w0, "profile");
}

int kf_session_write_flamegraph(kf_session *s, FILE *out, enum kf_flame_format fmt)
{
	struct kf_stack_src src;
	struct stack_in in;
	const struct kf_attr *a = kf_session_folded_attr(s);
	const struct kf_env *e;
	struct kf_flame_facts f;
	char title[300], sub[1024], lost[200], clock[300];
	const char *notes[3];
	uint64_t first, last, w0 = kf_work;
	int r, err, len;

	if (!s->ran)
		return kf_fail(&s->err, KF_EINVAL, "no capture run");
	e = kf_pd_env(s->pd);
	memset(&f, 0, sizeof(f));
	snprintf(title, sizeof(title), "%s%s%s", s->filter ? s->filter : "samples",
		 e->hostname ? " on " : "", e->hostname ? e->hostname : "");
	f.title = title;
	time_range(s, &first, &last);
	len = snprintf(sub, sizeof(sub), "%" PRIu64 " samples", s->stats.samples_folded);
	if (last > first && len > 0 && (size_t)len < sizeof(sub))
		len += snprintf(sub + len, sizeof(sub) - (size_t)len,
				", %.3f s (%" PRIu64 ".%06" PRIu64 " to %" PRIu64 ".%06" PRIu64 ")",
				(double)(last - first) / 1e9, first / 1000000000u,
				first % 1000000000u / 1000u, last / 1000000000u,
				last % 1000000000u / 1000u);
	if (e->osrelease && len > 0 && (size_t)len < sizeof(sub))
		len += snprintf(sub + len, sizeof(sub) - (size_t)len, ", kernel %s", e->osrelease);
	if (len > 0 && (size_t)len < sizeof(sub))
		snprintf(sub + len, sizeof(sub) - (size_t)len, ", kfold %s", kf_version());
	f.subtitle = sub;
	f.notes = notes;
	if (a && kf_attr_is_soft_clock(a)) {
		snprintf(clock, sizeof(clock), "%s %s", s->filter ? s->filter : "the event",
			 "is a software clock: code that runs with interrupts disabled "
			 "(hard IRQs, NMIs) has no samples of its own");
		notes[f.n_notes++] = clock;
	}
	if (s->stats.lost_samples || s->stats.lost_events) {
		snprintf(lost, sizeof(lost), "lost: %" PRIu64 " samples and %" PRIu64
			 " events the kernel could not record are not in the graph",
			 s->stats.lost_samples, s->stats.lost_events);
		notes[f.n_notes++] = lost;
	}
	f.unit = s->o.count_samples ? "samples" :
		 (a && kf_attr_is_soft_clock(a)) || s->o.off_cpu ? "ns" : "count";
	f.svg = fmt == KF_FLAME_SVG;
	r = stack_in_init(s, &in, &src);
	if (!r)
		r = kf_flame_write(&src, &f, out);
	err = errno;
	stack_in_fini(&in);
	return stack_out_end(s, r, err, w0, "flame graph");
}

int kf_session_write_explain(kf_session *s, FILE *out)
{
	uint64_t w0 = kf_work;
	struct kf_report_in in;
	struct report_lists l;
	struct kf_report rp;
	int r;

	report_in(s, &in, &l);
	r = kf_report_gather(&rp, &in, false);
	if (!r)
		r = report_lists(s, &in, &l, false);
	if (r)
		return report_finish(s, &rp, &l, r, false, w0);
	r = kf_report_explain(&rp, out);
	return report_finish(s, &rp, &l, r, !r || r == KF_EIO, w0);
}
