/* json.c - the JSON report (report.h), the only user of jansson.
 *
 * Written member by member in schema order (docs/kfold-report.schema.json);
 * the stacks are streamed one compact object per line, and they and the
 * processes member are written straight as text (jsonw.h), the bytes
 * jansson would write for them.
 */
#include "report.h"
#include "annotated.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "diagnose.h"
#include "jsonw.h"

#define SCHEMA_VERSION 1

/* jansson takes UTF-8 only; names from a capture may be anything: bytes
 * that are not UTF-8 become U+FFFD (as kf_jsonw_str writes them) */
static json_t *jstr_buf(struct kf_buf *tmp, const char *p)
{
	size_t i = 0, n = strlen(p);
	json_t *j = json_stringn(p, n);

	if (j)
		return j;
	tmp->len = 0;
	while (i < n) {
		unsigned cp;
		size_t len = kf_jsonw_utf8(p + i, n - i, &cp);

		if (len) {
			kf_buf_put(tmp, p + i, len);
			i += len;
		} else {
			kf_buf_puts(tmp, "\xef\xbf\xbd");
			i++;
		}
	}
	return json_stringn(tmp->p ? tmp->p : "", tmp->len);
}

static json_t *jstr(struct kf_report *rp, const char *p)
{
	return jstr_buf(&rp->tmp, p);
}

static json_t *jint(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *jbucket(const struct kf_bucket *b)
{
	return json_pack("{s:o,s:o}", "samples", jint(b->samples), "period", jint(b->period));
}

/* json_object_set_new and json_array_append_new that remember a failure
 * in *err (both writers build objects this way) */
static void put_err(int *err, json_t *obj, const char *key, json_t *v)
{
	if (!obj || !v || json_object_set_new(obj, key, v))
		*err = KF_ENOMEM;
}

static void append_err(int *err, json_t *arr, json_t *v)
{
	if (!arr || !v || json_array_append_new(arr, v))
		*err = KF_ENOMEM;
}

static void put(struct kf_report *rp, json_t *obj, const char *key, json_t *v)
{
	put_err(&rp->err, obj, key, v);
}

static void append(struct kf_report *rp, json_t *arr, json_t *v)
{
	append_err(&rp->err, arr, v);
}

static json_t *capture_json(struct kf_report *rp)
{
	const struct kf_report_in *in = rp->in;
	const struct kf_env *env = kf_pd_env(in->pd);
	const kf_stats *st = in->stats;
	json_t *c = json_object(), *evs = json_array(), *cmd = json_array();
	size_t i;

	if (env->hostname)
		put(rp, c, "hostname", jstr(rp, env->hostname));
	if (env->osrelease)
		put(rp, c, "os_release", jstr(rp, env->osrelease));
	if (env->arch)
		put(rp, c, "arch", jstr(rp, env->arch));
	if (env->nr_cpus_online)
		put(rp, c, "cpus_online", jint(env->nr_cpus_online));
	if (env->nr_cpus_avail)
		put(rp, c, "cpus_available", jint(env->nr_cpus_avail));
	if (env->cpudesc)
		put(rp, c, "cpu", jstr(rp, env->cpudesc));
	if (env->version)
		put(rp, c, "perf_version", jstr(rp, env->version));
	for (i = 0; i < env->n_cmdline && env->cmdline; i++)
		append(rp, cmd, jstr(rp, env->cmdline[i]));
	put(rp, c, "command_line", cmd);
	for (i = 0; i < kf_pd_n_attrs(in->pd); i++) {
		const struct kf_attr *a = kf_pd_attr(in->pd, i);
		bool freq = kf_attr_flag(a, 10);
		json_t *e = json_object();

		put(rp, e, "name", jstr(rp, kf_pd_event_name(in->pd, i)));
		put(rp, e, "type", jint(a->type));
		put(rp, e, "config", jint(a->config));
		put(rp, e, freq ? "sample_freq" : "sample_period", jint(a->sample_period));
		put(rp, e, "sample_type", jint(a->sample_type));
		put(rp, e, "callchain", json_boolean(a->sample_type & KF_SAMPLE_CALLCHAIN));
		put(rp, e, "user_stack", json_boolean((a->sample_type & KF_SAMPLE_STACK_USER) &&
						       a->sample_stack_user));
		put(rp, e, "software_clock", json_boolean(in->soft_clock[i]));
		put(rp, e, "folded", json_boolean(in->filter &&
			strcmp(kf_pd_event_name(in->pd, i), in->filter) == 0));
		append(rp, evs, e);
	}
	put(rp, c, "events", evs);
	/* the header's range (perf record writes it), else the samples' */
	if (env->first_sample_time || env->last_sample_time)
		put(rp, c, "time_ns", json_pack("{s:o,s:o}", "first", jint(env->first_sample_time),
						 "last", jint(env->last_sample_time)));
	else if (in->first_time)
		put(rp, c, "time_ns", json_pack("{s:o,s:o}", "first", jint(in->first_time),
						 "last", jint(in->last_time)));
	put(rp, c, "records", jint(st->records));
	put(rp, c, "samples", jint(st->samples));
	put(rp, c, "samples_folded", jint(st->samples_folded));
	put(rp, c, "samples_undecodable", jint(st->samples_bad));
	put(rp, c, "lost_events", jint(st->lost_events));
	put(rp, c, "lost_samples", jint(st->lost_samples));
	put(rp, c, "throttled", jint(st->throttles));
	put(rp, c, "unthrottled", jint(st->unthrottles));
	put(rp, c, "input_cut", json_boolean(st->input_cut));
	put(rp, c, "input_damaged", json_boolean(st->input_damaged));
	if (in->filters && in->filters->on) {
		const struct kf_filter *f = in->filters;
		json_t *fo = json_object(), *ranges = json_array();
		int k;

		for (k = 0; k < KF_FILTER_NKINDS; k++)
			if (f->given[k])
				put(rp, fo, kf_filter_name((enum kf_filter_kind)k),
				    jstr(rp, f->given[k]));
		for (i = 0; i < f->n_ranges; i++)
			append(rp, ranges, json_pack("{s:o,s:o}",
				"start", jint(f->ranges[i].start), "end", jint(f->ranges[i].end)));
		if (f->time_set)
			put(rp, fo, "time_ns", ranges);
		else
			json_decref(ranges);
		put(rp, fo, "samples_left_out", jint(st->samples_filtered));
		put(rp, c, "filters", fo);
	}
	return c;
}

static json_t *modules_json(struct kf_report *rp)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < rp->in->n_mods; i++) {
		const kf_module_info *mp = &rp->in->mods[i];
		json_t *m = json_object();
		put(rp, m, "name", jstr(rp, mp->name));
		put(rp, m, "build_id", mp->build_id[0] ? jstr(rp, mp->build_id) : json_null());
		put(rp, m, "verified", json_boolean(mp->verified));
		put(rp, m, "status", jstr(rp, mp->status));
		put(rp, m, "verification", jstr(rp, mp->verification));
		put(rp, m, "symbols_from", mp->file ? jstr(rp, mp->file) : json_null());
		put(rp, m, "symbols_from_debuginfod", json_boolean(mp->file_debuginfod));
		put(rp, m, "debuginfo_from", mp->debuginfo ? jstr(rp, mp->debuginfo) : json_null());
		put(rp, m, "debuginfo_from_debuginfod", json_boolean(mp->debuginfo_debuginfod));
		put(rp, m, "debuginfo_looked_for", json_boolean(mp->debuginfo_wanted));
		if (mp->minidebuginfo)
			put(rp, m, "minidebuginfo", jstr(rp, mp->minidebuginfo));
		if (mp->debuginfo_hint)
			put(rp, m, "hint", jstr(rp, mp->debuginfo_hint));
		append(rp, arr, m);
	}
	return arr;
}

static int cmp_threads(const void *pa, const void *pb, void *ctx)
{
	const struct kf_gather_thread *v = ctx;
	const struct kf_gather_thread *a = &v[*(const uint32_t *)pa], *b = &v[*(const uint32_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* What making the processes member writes to: its own scratch and error,
 * so that it may run beside the rest of the report (report.h). */
struct kf_report_procs {
	struct kf_buf comm;
	struct kf_buf text;      /* the member's value, written */
	int err;
	pthread_t th;
	bool started;            /* th runs (until joined) */
};

/* The processes member is written straight into a buffer, as jansson
 * would dump its value with JSON_INDENT(1) | JSON_ENSURE_ASCII (the
 * member's value alone, at depth 0): a value opens with '{' or '[',
 * each member or element goes on a line of its own indented one space
 * deeper (a key then ": "), separated by ',', and the close goes on a
 * line at the value's own depth; an empty value is "{}" or "[]".  The
 * members in the order jansson keeps (insertion), the keys of one object
 * distinct (the gather's cells are one per verdict and label).  Made as
 * jansson values, its 1,700 processes took 160 ms, longer than the rest
 * of the report beside which its thread runs. */
static void w_indent(struct kf_buf *b, unsigned depth)
{
	static const char sp[] = "        ";

	kf_buf_put(b, "\n", 1);
	for (; depth > sizeof(sp) - 1; depth -= sizeof(sp) - 1)
		kf_buf_put(b, sp, sizeof(sp) - 1);
	kf_buf_put(b, sp, depth);
}

/* The next member of an object or element of an array at depth - 1:
 * its separator and indent (and key, if any).  *n: the members so far. */
static void w_next(struct kf_buf *b, unsigned depth, size_t *n, const char *key)
{
	if ((*n)++)
		kf_buf_put(b, ",", 1);
	w_indent(b, depth);
	if (key) {
		kf_jsonw_str(b, key, strlen(key));
		kf_buf_put(b, ": ", 2);
	}
}

/* The close of a value at depth with n members or elements. */
static void w_close(struct kf_buf *b, unsigned depth, size_t n, char c)
{
	if (n)
		w_indent(b, depth);
	kf_buf_put(b, &c, 1);
}

/* a pid or tid */
static void w_int(struct kf_buf *b, int32_t v)
{
	if (v < 0)
		kf_buf_put(b, "-", 1);
	kf_jsonw_uint(b, v < 0 ? (uint64_t)-(int64_t)v : (uint64_t)v);
}

static void w_uint_member(struct kf_buf *b, unsigned depth, size_t *n, const char *key,
			  uint64_t v)
{
	w_next(b, depth, n, key);
	kf_jsonw_uint(b, v);
}

static void w_str_member(struct kf_buf *b, unsigned depth, size_t *n, const char *key,
			 const char *v)
{
	w_next(b, depth, n, key);
	kf_jsonw_str(b, v, strlen(v));
}

/* {"samples": .., "period": ..} at depth, its close left open: *n its
 * members so far */
static void w_bucket_open(struct kf_buf *b, unsigned depth, const struct kf_bucket *k,
			  size_t *n)
{
	*n = 0;
	kf_buf_put(b, "{", 1);
	w_uint_member(b, depth + 1, n, "samples", k->samples);
	w_uint_member(b, depth + 1, n, "period", k->period);
}

/* Buckets by verdict from cells v[0..n) (sorted by verdict and label,
 * one cell per pair) as members of an object at depth - 1: "user",
 * "on_behalf" {classes}, ... *m: its members so far. */
static void breakdown(const struct kf_report *rp, struct kf_buf *b, unsigned depth,
		      size_t *m, const struct kf_gather_cell *v, size_t n)
{
	static const char *const keys[KF_CTX_NVERDICTS] = {
		[KF_CTX_VERDICT_UNKNOWN] = "unknown",
		[KF_CTX_VERDICT_ON_BEHALF] = "on_behalf",
		[KF_CTX_VERDICT_ATTRIBUTED] = "attributed",
		[KF_CTX_VERDICT_IDLE] = "idle",
		[KF_CTX_VERDICT_KTHREAD] = "kthread",
		[KF_CTX_VERDICT_USER] = "user",
	};
	static const uint8_t order[] = {
		KF_CTX_VERDICT_USER, KF_CTX_VERDICT_ON_BEHALF, KF_CTX_VERDICT_ATTRIBUTED,
		KF_CTX_VERDICT_IDLE, KF_CTX_VERDICT_KTHREAD, KF_CTX_VERDICT_UNKNOWN,
	};
	struct kf_bucket sum[KF_CTX_NVERDICTS];
	size_t first[KF_CTX_NVERDICTS + 1], i, k, nb, ns;

	/* v is sorted by verdict: each verdict's cells are one run */
	memset(sum, 0, sizeof(sum));
	for (k = 0, i = 0; k <= KF_CTX_NVERDICTS; k++) {
		first[k] = i;
		for (; k < KF_CTX_NVERDICTS && i < n && v[i].verdict == k; i++)
			kf_bucket_add(&sum[k], v[i].b.samples, v[i].b.period);
	}
	for (k = 0; k < sizeof(order); k++) {
		unsigned vd = order[k];

		w_next(b, depth, m, keys[vd]);
		w_bucket_open(b, depth, &sum[vd], &nb);
		if (vd == KF_CTX_VERDICT_ON_BEHALF || vd == KF_CTX_VERDICT_ATTRIBUTED ||
		    vd == KF_CTX_VERDICT_UNKNOWN) {
			w_next(b, depth + 1, &nb,
			       vd == KF_CTX_VERDICT_UNKNOWN ? "reasons" : "classes");
			kf_buf_put(b, "{", 1);
			ns = 0;
			for (i = first[vd]; i < first[vd + 1]; i++) {
				size_t nc;

				w_next(b, depth + 2, &ns,
				       kf_strtab_get(&rp->g.labels, v[i].label));
				w_bucket_open(b, depth + 2, &v[i].b, &nc);
				w_close(b, depth + 2, nc, '}');
			}
			w_close(b, depth + 1, ns, '}');
		}
		w_close(b, depth, nb, '}');
	}
}

/* The processes member's value into pj->text (sorts the gather's cells) */
static void *processes_text(void *arg)
{
	const struct kf_report *rp = arg;
	struct kf_report_procs *pj = rp->procs;
	struct kf_buf *b = &pj->text;
	uint32_t *perm = kf_calloc(rp->g.n_threads + 1, sizeof(*perm));
	uint32_t *rank = kf_calloc(rp->g.n_threads + 1, sizeof(*rank));
	struct kf_gather_cell *tmp = kf_calloc(rp->g.n_cells + 1, sizeof(*tmp));
	size_t i, j, c = 0, np = 0;

	if (!perm || !rank || !tmp) {
		pj->err = KF_ENOMEM;
		goto out;
	}
	for (i = 0; i < rp->g.n_threads; i++)
		perm[i] = (uint32_t)i;
	if (rp->g.n_threads > 1)
		qsort_r(perm, rp->g.n_threads, sizeof(*perm), cmp_threads, rp->g.threads);
	for (i = 0; i < rp->g.n_threads; i++)
		rank[perm[i]] = (uint32_t)i;
	kf_report_sort_cells(rp, rp->g.cells, rp->g.n_cells, rank);

	/* one process: the threads perm[i..j) with the same pid */
	kf_buf_put(b, "[", 1);
	for (i = 0; i < rp->g.n_threads; i = j) {
		const struct kf_gather_thread *t0 = &rp->g.threads[perm[i]];
		struct kf_bucket tot = { 0, 0 };
		size_t c0 = c, k, m = 0, nt = 0;

		for (j = i; j < rp->g.n_threads && rp->g.threads[perm[j]].pid == t0->pid; j++)
			kf_bucket_add(&tot, rp->g.threads[perm[j]].total.samples,
				      rp->g.threads[perm[j]].total.period);
		w_next(b, 1, &np, NULL);
		kf_buf_put(b, "{", 1);
		w_next(b, 2, &m, "pid");
		w_int(b, t0->pid);
		w_str_member(b, 2, &m, "comm", kf_report_comm(rp, perm[i], &pj->comm));
		w_uint_member(b, 2, &m, "samples", tot.samples);
		w_uint_member(b, 2, &m, "period", tot.period);
		for (k = i; k < j; k++)
			while (c < rp->g.n_cells && rank[rp->g.cells[c].thread] == k)
				c++;
		k = kf_report_merge_cells(rp, rp->g.cells + c0, c - c0, tmp);
		breakdown(rp, b, 2, &m, tmp, k);
		w_next(b, 2, &m, "threads");
		kf_buf_put(b, "[", 1);
		for (k = i, c = c0; k < j; k++) {
			const struct kf_gather_thread *t = &rp->g.threads[perm[k]];
			size_t lo = c, mt = 0;

			while (c < rp->g.n_cells && rank[rp->g.cells[c].thread] == k)
				c++;
			w_next(b, 3, &nt, NULL);
			kf_buf_put(b, "{", 1);
			w_next(b, 4, &mt, "tid");
			w_int(b, t->tid);
			w_str_member(b, 4, &mt, "comm", kf_report_comm(rp, perm[k], &pj->comm));
			w_uint_member(b, 4, &mt, "samples", t->total.samples);
			w_uint_member(b, 4, &mt, "period", t->total.period);
			breakdown(rp, b, 4, &mt, rp->g.cells + lo, c - lo);
			w_close(b, 3, mt, '}');
		}
		w_close(b, 2, nt, ']');
		w_close(b, 1, m, '}');
	}
	w_close(b, 0, np, ']');
	if (b->oom)
		pj->err = KF_ENOMEM;
out:
	free(perm);
	free(rank);
	free(tmp);
	return NULL;
}

int kf_report_json_start(struct kf_report *rp)
{
	struct kf_report_procs *pj;

	if (rp->procs)
		return 0;
	if (!(pj = kf_calloc(1, sizeof(*pj))))
		return KF_ENOMEM;
	kf_buf_init(&pj->comm);
	kf_buf_init(&pj->text);
	rp->procs = pj;
	if (rp->in->jobs > 1)
		pj->started = pthread_create(&pj->th, NULL, processes_text, rp) == 0;
	return 0;
}

/* The processes member: made now, or waited for. */
static int processes_member(struct kf_report *rp, FILE *out)
{
	struct kf_report_procs *pj;
	int r;

	if ((r = kf_report_json_start(rp)))
		return r;
	pj = rp->procs;
	if (pj->started) {
		pthread_join(pj->th, NULL);
		pj->started = false;
	} else if (!pj->text.len && !pj->err) {
		processes_text(rp);
	}
	if (pj->err)
		return pj->err;
	return fputs(",\n \"processes\": ", out) == EOF ||
	       fwrite(pj->text.p, 1, pj->text.len, out) != pj->text.len ? KF_EIO : 0;
}

void kf_report_procs_free(struct kf_report_procs *pj)
{
	if (!pj)
		return;
	if (pj->started)
		pthread_join(pj->th, NULL);
	kf_buf_fini(&pj->text);
	kf_buf_fini(&pj->comm);
	free(pj);
}

static int cmp_lines(const void *pa, const void *pb, void *ctx)
{
	const struct kf_gather_line *a = pa, *b = pb;
	const struct kf_report *rp = ctx;
	uint32_t ra = rp->lines.nodes[a->text].rank, rb = rp->lines.nodes[b->text].rank;
	int c;

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (a->verdict != b->verdict)
		return a->verdict < b->verdict ? -1 : 1;
	c = strcmp(kf_strtab_get(&rp->g.labels, a->leaf), kf_strtab_get(&rp->g.labels, b->leaf));
	if (c)
		return c;
	c = strcmp(kf_strtab_get(&rp->g.labels, a->base), kf_strtab_get(&rp->g.labels, b->base));
	if (c)
		return c;
	c = strcmp(kf_strtab_get(&rp->g.labels, a->via), kf_strtab_get(&rp->g.labels, b->via));
	if (c)
		return c;
	if (a->why != b->why)
		return a->why < b->why ? -1 : 1;
	return (a->guess > b->guess) - (a->guess < b->guess);
}

static void put_bool(struct kf_buf *b, const char *key, bool v)
{
	kf_buf_puts(b, key);
	kf_buf_puts(b, v ? "true" : "false");
}

static void put_key_str(struct kf_buf *b, const char *key, const char *v)
{
	kf_buf_puts(b, key);
	kf_jsonw_str(b, v, strlen(v));
}

/* One frame_table object, what the namer knows of one folded frame,
 * written to b as jansson would dump it (JSON_COMPACT |
 * JSON_ENSURE_ASCII, members in this order). */
static void put_frame(const struct kf_report *rp, const struct kf_fold_frame *ff,
		      struct kf_buf *b)
{
	const struct kf_symframe *sf = &ff->sf;
	const struct kf_namer *nm = rp->in->namer;
	const struct kf_module *m = sf->module && sf->kind != KF_SYM_ROOT &&
				    sf->kind != KF_SYM_MARKER ?
				    kf_modules_at(rp->in->modules, sf->module) : NULL;
	bool code = sf->kind == KF_SYM_USER || sf->kind == KF_SYM_KERNEL ||
		    sf->kind == KF_SYM_JIT;

	if (m)
		put_key_str(b, "{\"module\":", m->name);
	else
		kf_buf_puts(b, "{\"module\":null");
	put_key_str(b, ",\"build_id\":", m ? rp->bid[sf->module] : "");
	put_bool(b, ",\"verified\":", sf->flags & KF_SYMF_VERIFIED);
	/* perf's "(inlined)" lines from addr2line carry no offset */
	if (code && sf->name && !(sf->flags & KF_SYMF_INLINED)) {
		kf_buf_puts(b, ",\"offset\":");
		kf_jsonw_uint(b, sf->offset);
	}
	if (code && (sf->flags & KF_SYMF_FILE)) {
		put_key_str(b, ",\"file\":", kf_strtab_get(&nm->strings, sf->file));
		if (sf->line) {
			kf_buf_puts(b, ",\"line\":");
			kf_jsonw_uint(b, sf->line);
		}
	}
	put_bool(b, ",\"inlined\":", sf->inline_depth > 0);
	put_key_str(b, ",\"kind\":", kf_symkind_name(sf->kind));
	if (sf->flags & KF_SYMF_STITCHED)
		kf_buf_puts(b, ",\"stitched\":true");
	if ((code || sf->kind == KF_SYM_UNKNOWN) && !sf->name && sf->why)
		put_key_str(b, ",\"why\":", kf_symwhy_name(sf->why));
	kf_buf_put(b, "}", 1);
}

/* The index in frame_table of a frame's facts: each distinct object is
 * written once, after the stacks, and a stack's frame_info lists indices
 * (a capture's stacks repeat the same frames many times over: objects
 * inline made the report ten times the size of its stacks).  -1 on
 * ENOMEM. */
static long frame_index(struct kf_report *rp, const struct kf_fold_frame *ff)
{
	const struct kf_symframe *sf = &ff->sf;
	bool code = sf->kind == KF_SYM_USER || sf->kind == KF_SYM_KERNEL ||
		    sf->kind == KF_SYM_JIT;
	bool mod = sf->module && sf->kind != KF_SYM_ROOT && sf->kind != KF_SYM_MARKER;
	bool off = code && sf->name && !(sf->flags & KF_SYMF_INLINED);
	bool file = code && (sf->flags & KF_SYMF_FILE);
	bool why = (code || sf->kind == KF_SYM_UNKNOWN) && !sf->name && sf->why;
	uint64_t v[10];
	char key[10 * 11];
	size_t n = 0, k;
	uint32_t id, idx;

	/* exactly what put_frame writes, nothing more */
	v[0] = mod ? sf->module : 0;
	v[1] = !!(sf->flags & KF_SYMF_VERIFIED);
	v[2] = off;
	v[3] = off ? sf->offset : 0;
	v[4] = file ? sf->file : 0;
	v[5] = file ? sf->line : 0;
	v[6] = sf->inline_depth > 0;
	v[7] = sf->kind;
	v[8] = why ? sf->why : 0;
	v[9] = !!(sf->flags & KF_SYMF_STITCHED);
	/* each value in 6-bit groups, no byte 0 (the table holds C
	 * strings): 0x80 | group while more follow, group + 1 last */
	for (k = 0; k < 10; k++) {
		uint64_t x = v[k];

		for (; x >= 0x40; x >>= 6)
			key[n++] = (char)(0x80 | (x & 0x3f));
		key[n++] = (char)(x + 1);
	}
	if (!kf_strtab_intern(&rp->fkeys, key, n, &id))
		return -1;
	if (kf_map64_get(&rp->fidx, id, &idx))
		return idx;
	if (rp->n_ftab >= UINT32_MAX ||
	    !KF_GROW(rp->ftab, rp->cap_ftab, rp->n_ftab + 1) ||
	    !kf_map64_put(&rp->fidx, id, (uint32_t)rp->n_ftab))
		return -1;
	rp->ftab[rp->n_ftab] = *ff;
	return (long)rp->n_ftab++;
}

/* Room in fi_pool for `need` entries.  While a writer may read fi_pool
 * as it was (fi_keep: the infos are made beside the writing), the old
 * array is kept, not freed: what it holds is what the writer reads, and
 * its copy in the new one is what is read after. */
static bool pool_room(struct kf_report *rp, size_t need)
{
	uint32_t *v;
	size_t cap;

	if (need <= rp->cap_fi_pool)
		return true;
	if (!rp->fi_keep)
		return KF_GROW(rp->fi_pool, rp->cap_fi_pool, need);
	if (need > UINT32_MAX || !KF_GROW(rp->fi_old, rp->cap_fi_old, rp->n_fi_old + 1))
		return false;
	for (cap = rp->cap_fi_pool ? rp->cap_fi_pool : 1024; cap < need; cap *= 2)
		;
	if (!(v = kf_calloc(cap, sizeof(*v))))
		return false;
	if (rp->n_fi_pool)
		memcpy(v, rp->fi_pool, rp->n_fi_pool * sizeof(*v));
	if (rp->fi_pool)
		rp->fi_old[rp->n_fi_old++] = rp->fi_pool;
	rp->fi_pool = v;
	rp->cap_fi_pool = cap;
	return true;
}

/* Where fi_pool holds node x's frame_info entries (x's folded frames,
 * each standing for the pieces of its own text, but the lone frame of a
 * raw frame that folds to nothing standing for none); made the first time
 * a stack reaches x, so that frame_table keeps the order in which the
 * stacks first use its entries, and shared by the nodes of one namer
 * entry (their frames are the same). */
static int node_info(struct kf_report *rp, uint32_t x, bool java, size_t *at)
{
	const struct kf_report_in *in = rp->in;
	size_t n = 0, i, start = rp->n_fi_pool, ek, semis = 0;
	uint32_t entry, first;
	const char *whole = NULL, *t;
	bool one = false;
	int r;

	if (rp->fi_at[x]) {
		*at = rp->fi_at[x] - 1;
		return 0;
	}
	if (rp->node_entry)
		entry = rp->node_entry[x];
	else if ((r = kf_fold_node_entry(in->texts, in->stacks, x, &entry)))
		return r;
	ek = entry != UINT32_MAX ? (size_t)entry << 1 | java : SIZE_MAX;
	if (ek != SIZE_MAX && ek < rp->cap_fi_entry && (first = rp->fi_entry[ek]) != 0) {
		rp->fi_at[x] = first;
		*at = first - 1;
		return 0;
	}
	/* the node's text, its frames' joined by ';', was made by the
	 * naming: where it has no ';' of a frame's own, each frame is one
	 * piece and the frames' own texts need not be made */
	if (entry != UINT32_MAX && kf_fold_entry_text(in->texts, entry, java, &whole)) {
		for (t = whole; *t; t++)
			semis += *t == ';';
		if ((r = kf_fold_entry_frames(in->texts, x, entry, &rp->ff, &n, &rp->cap_ff)))
			return r;
		one = semis + 1 == n;
	}
	if (!one && (r = kf_fold_node_frames(in->texts, in->stacks, in->roots, in->comms, x,
					      java, &rp->ff, &n, &rp->cap_ff)))
		return r;
	if (start >= UINT32_MAX - 1 || !pool_room(rp, start + 1))
		return KF_ENOMEM;
	rp->n_fi_pool++;
	for (i = 0; i < n; i++) {
		const struct kf_fold_frame *f = &rp->ff[i];
		size_t pieces = 1;
		long ix;

		KF_WORK(1);
		t = one ? whole : kf_strtab_get(&in->texts->texts, f->text);
		if (!*t && n == 1 && f->sf.kind != KF_SYM_ROOT)
			continue;
		for (; *t && !one; t++)
			pieces += *t == ';';
		if ((ix = frame_index(rp, f)) < 0 || !pool_room(rp, rp->n_fi_pool + pieces))
			return KF_ENOMEM;
		while (pieces--)
			rp->fi_pool[rp->n_fi_pool++] = (uint32_t)ix;
	}
	if (rp->n_fi_pool > UINT32_MAX - 1)
		return KF_ENOMEM;
	rp->fi_pool[start] = (uint32_t)(rp->n_fi_pool - start - 1);
	rp->fi_at[x] = (uint32_t)start + 1;
	if (ek != SIZE_MAX) {
		if (!kf_grow_zeroed((void **)&rp->fi_entry, &rp->cap_fi_entry, ek + 1,
				    sizeof(*rp->fi_entry)))
			return KF_ENOMEM;
		rp->fi_entry[ek] = rp->fi_at[x];
	}
	*at = start;
	return 0;
}

/* Cuts p back to where the path to `leaf` leaves it (up: a node's parent,
 * 0 at the root) and sets p->fresh[0..*n) to the nodes below, leaf first;
 * *keep: how many steps are kept.  p->pos is made for `nodes` nodes. */
static int path_cut(struct kf_report_path *p, const struct kf_report *rp, uint32_t leaf,
		    size_t nodes, uint32_t (*up)(const struct kf_report *, uint32_t),
		    size_t *keep, size_t *n)
{
	uint32_t x;
	size_t i;

	if (!p->pos && !(p->pos = kf_calloc(nodes ? nodes : 1, sizeof(*p->pos))))
		return KF_ENOMEM;
	*n = 0;
	for (x = leaf; x && !p->pos[x]; x = up(rp, x)) {
		if (!KF_GROW(p->fresh, p->cap_fresh, *n + 1))
			return KF_ENOMEM;
		p->fresh[(*n)++] = x;
	}
	*keep = x ? p->pos[x] : 0;
	for (i = *keep; i < p->n; i++)
		p->pos[p->steps[i].node] = 0;
	p->n = *keep;
	p->text.len = *keep ? p->steps[*keep - 1].end : 0;
	return KF_GROW(p->steps, p->cap, *keep + *n) ? 0 : KF_ENOMEM;
}

/* Node x, whose text was just written, as the path's next step. */
static void path_push(struct kf_report_path *p, uint32_t x, uint32_t count)
{
	p->pos[x] = (uint32_t)p->n + 1;
	p->steps[p->n++] = (struct kf_report_step){ x, count, p->text.len };
}

static uint32_t node_up(const struct kf_report *rp, uint32_t x)
{
	return rp->in->stacks->nodes[x].parent;
}

static uint32_t lnode_up(const struct kf_report *rp, uint32_t x)
{
	return rp->lines.nodes[x].parent;
}

/* frames: the line's pieces (line node `at`), but an empty last one.
 * *dropped: one was. */
static int put_frames(const struct kf_report *rp, struct kf_report_writer *w, uint32_t at,
		      struct kf_buf *b, bool *dropped)
{
	struct kf_report_path *p = &w->fr;
	size_t keep, n, end;
	int r;

	if (!at || at >= rp->lines.n)
		return KF_EINVAL;
	if ((r = path_cut(p, rp, at, rp->lines.n, lnode_up, &keep, &n)))
		return r;
	while (n--) {
		uint32_t x = p->fresh[n];
		const char *s = kf_lines_piece_text(&rp->lines, rp->lines.nodes[x].piece);

		if (p->n)
			kf_buf_put(&p->text, ",", 1);
		kf_jsonw_str(&p->text, s, strlen(s));
		path_push(p, x, 0);
	}
	if (p->text.oom)
		return KF_ENOMEM;
	/* an empty last piece: the line is "" or ends in ';' */
	*dropped = !*kf_lines_piece_text(&rp->lines, rp->lines.nodes[at].piece);
	end = !*dropped ? p->text.len : p->n > 1 ? p->steps[p->n - 2].end : 0;
	kf_buf_put(b, p->text.p ? p->text.p : "", end);
	return 0;
}

/* frame_info: for each entry of frames, the index of its facts in
 * frame_table, from the folded frames of the line's heaviest stack.
 * frames splits the line at ';' (an empty last piece dropped); the line
 * is the root's text, then ";" and the text of each raw frame whose text
 * is not empty, a raw frame's text being its symbol frames' texts joined
 * by ';'.  So the entries are those of the stack's nodes (node_info) one
 * after the other, less the last when frames dropped the last piece.
 * Only the nodes below where the path leaves the last stack's are walked:
 * a node whose info was made has its ancestors' made (a path is made
 * root first), so frame_table's order is that of walking every path
 * whole.  The infos were made (make_infos) and are only read here, from
 * w's view of fi_pool. */
static int put_frame_info(const struct kf_report *rp, struct kf_report_writer *w,
			  const struct kf_gather_line *ln, bool drop, struct kf_buf *b)
{
	const struct kf_stacks *st = rp->in->stacks;
	const uint32_t *pool = w->pool;
	struct kf_report_path *p = &w->fi;
	size_t keep, n, end;
	int r;

	if (!ln->node || ln->node >= st->n)
		return KF_EINVAL;
	if ((r = path_cut(p, rp, ln->node, st->n, node_up, &keep, &n)))
		return r;
	while (n--) {
		uint32_t x = p->fresh[n], c = p->n ? p->steps[p->n - 1].count : 0;
		size_t at, k;

		if (!rp->fi_at[x])
			return KF_EINVAL;   /* not made: make_infos made every stack's */
		at = rp->fi_at[x] - 1;
		for (k = 0; k < pool[at]; k++, c++) {
			if (c)
				kf_buf_put(&p->text, ",", 1);
			kf_jsonw_uint(&p->text, pool[at + 1 + k]);
		}
		path_push(p, x, c);
	}
	if (p->text.oom)
		return KF_ENOMEM;
	/* the last entry left out: up to its comma */
	end = p->text.len;
	if (drop && p->steps[p->n - 1].count)
		while (end && p->text.p[--end] != ',')
			;
	kf_buf_put(b, "[", 1);
	kf_buf_put(b, p->text.p ? p->text.p : "", end);
	kf_buf_put(b, "]", 1);
	return 0;
}

/* Two writers of the stacks (write_stacks), the second of which first
 * makes the frame infos (make_infos) while the main thread writes the
 * stacks whose infos are made.  The stacks go in blocks; each block is
 * made by whichever writer takes it, in order: the main thread writes the
 * blocks it takes straight out, the second makes one into its buffer,
 * which the main thread writes in its place.  A block is a sixteenth of
 * the stacks, from 16 to 2048 of them: a small capture takes both
 * threads too (jobs.sh compares them with one), and a large one keeps
 * the second's buffer under a megabyte or so. */
struct stack_pair {
	struct kf_report *rp;
	size_t block;            /* stacks a block */
	size_t n_blocks;
	uint8_t *owner;          /* per block: 0 not taken yet, 1 the main
				    thread's, 2 the second's */
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	size_t made;             /* stacks whose frame infos are made */
	const uint32_t *pool;    /* fi_pool as it was then */
	size_t taken;            /* blocks [0, taken) have their writer */
	size_t held;             /* the block in the second's buffer */
	bool full;               /* ... unwritten */
	bool stop;               /* the main thread is done with the stacks */
	int err;                 /* the second's */
};

static size_t stack_block(size_t n)
{
	size_t b = n / 16;

	return b < 16 ? 16 : b > 2048 ? 2048 : b;
}

/* make_infos' progress: the first `lines` stacks have their infos, in
 * `pool`.  False once the main thread has stopped. */
static bool infos_made(struct stack_pair *sp, size_t lines, const uint32_t *pool)
{
	bool go;

	pthread_mutex_lock(&sp->mu);
	sp->made = lines;
	sp->pool = pool;
	go = !sp->stop;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	return go;
}

/* Every stack's frame infos made, in the stacks' order (which numbers
 * frame_table), before they are written (the writers only read them).
 * A node's info is made after its parent's (a path is made root first),
 * so a stack's unmade nodes are those below its nearest made one: only
 * they are walked (a node's Java tidying, that of its root, is kept
 * beside for the stacks that stop there).  That makes the same infos in
 * the same order as walking every path whole, with each stack node read
 * once instead of once per stack that passes it.  With sp, on the
 * second writer's thread, each block's are handed to the main thread as
 * they are made. */
static int make_infos(struct kf_report *rp, struct stack_pair *sp)
{
	const struct kf_report_in *in = rp->in;
	const struct kf_stacks *st = in->stacks;
	size_t nn = st->n ? st->n : 1, i, n, at, cap_fresh = 0;
	uint64_t *java = kf_calloc((nn + 63) / 64, sizeof(*java));   /* per node */
	uint32_t *fresh = NULL;   /* the stack's unmade nodes, leaf first */
	int r = 0;

	if (!java || (!rp->fi_at && !(rp->fi_at = kf_calloc(nn, sizeof(*rp->fi_at))))) {
		free(java);
		return KF_ENOMEM;
	}
	for (i = 0; i < rp->g.n_lines && !r; i++) {
		uint32_t x = rp->g.lines[i].node;
		bool j;

		if (sp && i && i % sp->block == 0 && !infos_made(sp, i, rp->fi_pool))
			break;
		if (!x || x >= st->n) {
			r = KF_EINVAL;
			break;
		}
		for (n = 0; x && !rp->fi_at[x]; x = st->nodes[x].parent) {
			KF_WORK(1);
			if (!KF_GROW(fresh, cap_fresh, n + 1)) {
				r = KF_ENOMEM;
				break;
			}
			fresh[n++] = x;
		}
		if (r || !n)
			continue;
		j = x ? java[x / 64] >> (x % 64) & 1 :
		    kf_fold_root_java(in->comms, kf_roots_get(in->roots,
				      st->nodes[fresh[n - 1]].frame.root));
		while (n-- && !r) {
			x = fresh[n];
			java[x / 64] |= (uint64_t)j << (x % 64);
			r = node_info(rp, x, j, &at);
		}
	}
	free(fresh);
	free(java);
	return r;
}

/* frame_table: the distinct frame objects frame_info points at, one per
 * line, in the order the stacks first used them. */
static int write_frame_table(struct kf_report *rp, FILE *out)
{
	struct kf_buf *b = &rp->w[0].out;
	size_t i;

	if (fputs(",\n \"frame_table\": [", out) == EOF)
		return KF_EIO;
	for (i = 0; i < rp->n_ftab; i++) {
		KF_WORK(1);
		b->len = 0;
		kf_buf_puts(b, i ? ",\n  " : "\n  ");
		put_frame(rp, &rp->ftab[i], b);
		if (b->oom)
			return KF_ENOMEM;
		if (fwrite(b->p, 1, b->len, out) != b->len)
			return KF_EIO;
	}
	return fputs(rp->n_ftab ? "\n ]" : "]", out) == EOF ? KF_EIO : 0;
}

/* The lines in cmp_lines order: placed by their line's rank (the ranks
 * are 1 .. the lines' count), then each run of one line sorted by the
 * rest. */
static int sort_lines(struct kf_report *rp)
{
	struct kf_gather_line *v = rp->g.lines, *out;
	size_t n = rp->g.n_lines, nr = rp->lines.n + 1, i, at = 0;
	uint32_t *start;

	if (n < 2)
		return 0;
	start = kf_calloc(nr + 1, sizeof(*start));
	out = kf_calloc(n, sizeof(*out));
	if (!start || !out) {
		free(start);
		free(out);
		return KF_ENOMEM;
	}
	for (i = 0; i < n; i++)
		start[rp->lines.nodes[v[i].text].rank]++;
	for (i = 0; i <= nr; i++) {
		uint32_t c = start[i];

		start[i] = (uint32_t)at;
		at += c;
	}
	for (i = 0; i < n; i++)
		out[start[rp->lines.nodes[v[i].text].rank]++] = v[i];
	for (i = 0; i < n; i = at) {
		KF_WORK(1);
		for (at = i + 1; at < n && out[at].text == out[i].text; at++)
			;
		if (at - i > 1)
			qsort_r(out + i, at - i, sizeof(*out), cmp_lines, rp);
	}
	free(start);
	free(rp->g.lines);
	rp->g.lines = out;
	rp->g.cap_lines = n;
	return 0;
}

/* Stack i's object, written to b by writer w. */
static int put_stack(struct kf_report *rp, struct kf_report_writer *w, size_t i,
		     struct kf_buf *b)
{
	const struct kf_gather_line *ln = &rp->g.lines[i];
	const char *via = kf_strtab_get(&rp->g.labels, ln->via);
	bool drop = false;
	int r;

	kf_buf_puts(b, i ? ",\n  {\"frames\":[" : "\n  {\"frames\":[");
	if ((r = put_frames(rp, w, ln->text, b, &drop)))
		return r;
	kf_buf_puts(b, "],\"frame_info\":");
	if ((r = put_frame_info(rp, w, ln, drop, b)))
		return r;
	kf_buf_puts(b, ",\"samples\":");
	kf_jsonw_uint(b, ln->b.samples);
	kf_buf_puts(b, ",\"period\":");
	kf_jsonw_uint(b, ln->b.period);
	put_key_str(b, ",\"verdict\":", kf_ctx_verdict_name(ln->verdict));
	put_key_str(b, ",\"leaf\":", kf_strtab_get(&rp->g.labels, ln->leaf));
	put_key_str(b, ",\"base\":", kf_strtab_get(&rp->g.labels, ln->base));
	if (*via)
		put_key_str(b, ",\"via\":", via);
	if (ln->why)
		put_key_str(b, ",\"why\":", kf_ctx_why_name(ln->why));
	if (ln->verdict == KF_CTX_VERDICT_UNKNOWN && ln->guess != KF_CTX_UNKNOWN)
		put_key_str(b, ",\"guess\":", kf_ctx_class_name(ln->guess));
	kf_buf_put(b, "}", 1);
	return b->oom ? KF_ENOMEM : 0;
}

/* The second writer: the frame infos, then the blocks it takes while
 * its buffer is free. */
static void *second_writer(void *arg)
{
	struct stack_pair *sp = arg;
	struct kf_report *rp = sp->rp;
	struct kf_report_writer *w = &rp->w[1];
	size_t n = rp->g.n_lines, bs = sp->block, k, i;
	uint64_t w0 = kf_work;
	int r = make_infos(rp, sp);

	pthread_mutex_lock(&sp->mu);
	sp->err = r;
	if (!r) {
		sp->made = n;
		sp->pool = rp->fi_pool;
	}
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	w->pool = rp->fi_pool;
	while (!r) {
		pthread_mutex_lock(&sp->mu);
		while (sp->full && !sp->stop)
			pthread_cond_wait(&sp->cv, &sp->mu);
		if (sp->stop || sp->taken >= sp->n_blocks) {
			pthread_mutex_unlock(&sp->mu);
			break;
		}
		k = sp->taken++;
		sp->owner[k] = 2;
		pthread_mutex_unlock(&sp->mu);
		w->out.len = 0;
		for (i = k * bs; i < n && i < (k + 1) * bs && !r; i++)
			r = put_stack(rp, w, i, &w->out);
		pthread_mutex_lock(&sp->mu);
		sp->err = r;
		sp->held = k;
		sp->full = true;
		pthread_cond_broadcast(&sp->cv);
		pthread_mutex_unlock(&sp->mu);
	}
	if (rp->in->work)
		kf_work_flush(rp->in->work, w0);
	return NULL;
}

/* The frame infos begun: on the second writer's thread when two write
 * (the stacks then wait for them block by block: sp->owner set), else
 * made here. */
static int stacks_begin(struct kf_report *rp, struct stack_pair *sp)
{
	size_t n = rp->g.n_lines;
	int steps = 0;

	memset(sp, 0, sizeof(*sp));
	sp->rp = rp;
	sp->block = stack_block(n);
	sp->n_blocks = (n + sp->block - 1) / sp->block;
	if (rp->in->jobs > 1 && n > sp->block &&
	    (sp->owner = kf_calloc(sp->n_blocks, sizeof(*sp->owner))) != NULL) {
		if (pthread_mutex_init(&sp->mu, NULL) == 0 && ++steps &&
		    pthread_cond_init(&sp->cv, NULL) == 0 && ++steps) {
			rp->fi_keep = true;   /* the main thread reads fi_pool as it was */
			if (pthread_create(&sp->th, NULL, second_writer, sp) == 0)
				return 0;
			rp->fi_keep = false;
		}
		if (steps >= 2)
			pthread_cond_destroy(&sp->cv);
		if (steps >= 1)
			pthread_mutex_destroy(&sp->mu);
		free(sp->owner);
		sp->owner = NULL;
	}
	return make_infos(rp, NULL);
}

/* The second writer stopped and waited for (if there is one): its error,
 * else r. */
static int stacks_end(struct stack_pair *sp, int r)
{
	if (!sp->owner)
		return r;
	pthread_mutex_lock(&sp->mu);
	sp->stop = true;
	pthread_cond_broadcast(&sp->cv);
	pthread_mutex_unlock(&sp->mu);
	pthread_join(sp->th, NULL);
	pthread_cond_destroy(&sp->cv);
	pthread_mutex_destroy(&sp->mu);
	free(sp->owner);
	sp->owner = NULL;
	return r ? r : sp->err;
}

/* The main thread's part: the blocks it takes, made and written stack
 * by stack once their infos are made; the second's written from its
 * buffer in their place. */
static int write_blocks(struct kf_report *rp, FILE *out, struct stack_pair *sp)
{
	struct kf_report_writer *w = &rp->w[0];
	struct kf_buf *b2 = &rp->w[1].out;
	size_t n = rp->g.n_lines, bs = sp->block, k, i, end;
	int r = 0;

	if (!sp->owner)
		w->pool = rp->fi_pool;
	for (k = 0; k < sp->n_blocks && !r; k++) {
		end = (k + 1) * bs < n ? (k + 1) * bs : n;
		if (sp->owner) {
			bool mine;

			pthread_mutex_lock(&sp->mu);
			if (!sp->owner[k]) {   /* the next not taken */
				sp->owner[k] = 1;
				sp->taken = k + 1;
			}
			mine = sp->owner[k] == 1;
			while (!sp->err && (mine ? sp->made < end : !(sp->full && sp->held == k)))
				pthread_cond_wait(&sp->cv, &sp->mu);
			r = sp->err;
			w->pool = sp->pool;
			pthread_mutex_unlock(&sp->mu);
			if (r)
				break;
			if (!mine) {
				if (fwrite(b2->p, 1, b2->len, out) != b2->len)
					r = KF_EIO;
				pthread_mutex_lock(&sp->mu);
				sp->full = false;
				/* the next block is this thread's, before the
				 * second takes it: it takes the one after */
				if (k + 1 < sp->n_blocks && !sp->owner[k + 1]) {
					sp->owner[k + 1] = 1;
					sp->taken = k + 2;
				}
				pthread_cond_broadcast(&sp->cv);
				pthread_mutex_unlock(&sp->mu);
				continue;
			}
		}
		for (i = k * bs; i < end && !r; i++) {
			w->out.len = 0;
			if (!(r = put_stack(rp, w, i, &w->out)) &&
			    fwrite(w->out.p, 1, w->out.len, out) != w->out.len)
				r = KF_EIO;
		}
	}
	return r;
}

/* The stacks, written one compact object per line as they are made: a
 * capture's stack list can be large, and a tree of JSON values for all of
 * it would take several times the memory of the text.  Each line as
 * jansson would write its object (JSON_COMPACT | JSON_ENSURE_ASCII,
 * members in this order), but straight into a buffer: 300,000 stacks
 * made as jansson values took most of a report's time. */
static int write_stacks(struct kf_report *rp, FILE *out, struct stack_pair *sp)
{
	size_t i;
	int r;

	if (!(rp->bid = kf_calloc(rp->in->modules->n + 1, sizeof(*rp->bid))))
		return KF_ENOMEM;
	for (i = 0; i < rp->in->n_mods; i++)
		memcpy(rp->bid[rp->in->mod_ids[i]], rp->in->mods[i].build_id, sizeof(rp->bid[0]));
	if (fputs("[", out) == EOF)
		return KF_EIO;
	if ((r = write_blocks(rp, out, sp)))
		return r;
	return fputs(rp->g.n_lines ? "\n ]" : "]", out) == EOF ? KF_EIO : 0;
}

static json_t *diagnostics_json(struct kf_report *rp)
{
	const struct kf_report_in *in = rp->in;
	json_t *d = json_object(), *uw = json_object(), *sym = json_object();
	json_t *src = json_object(), *arr;
	size_t i;

	put(rp, d, "samples", jint(rp->g.total.samples));
	put(rp, d, "leaf_named", jbucket(&rp->g.leaf_named));

	/* unwinding: user stacks by frame pointers and DWARF, kernel chains */
	arr = json_array();
	for (i = 0; i < in->n_fp_breaks; i++)
		append(rp, arr, json_pack("{s:o,s:o}", "module", jstr(rp, in->fp_breaks[i].module),
					  "samples", jint(in->fp_breaks[i].samples)));
	put(rp, uw, "frame_pointer", json_pack("{s:o,s:o,s:o,s:s}",
		"samples", jint(in->fp_samples), "broken", jint(in->fp_broken), "broke_in", arr,
		"hint", kf_diag_fp_hint));
	arr = json_array();
	for (i = 0; i < in->n_stops; i++) {
		const kf_unwind_stop *us = &in->stops[i];

		append(rp, arr, json_pack("{s:o,s:o,s:o,s:o}", "reason", jstr(rp, us->reason),
					  "module", jstr(rp, us->module),
					  "samples", jint(us->samples), "hint", jstr(rp, us->hint)));
	}
	{
		json_t *dw = json_pack("{s:o,s:o,s:o,s:o}", "samples",
				       jint(in->stats->samples_unwound), "recorded",
				       jint(in->stats->samples_dwarf), "frames_guessed",
				       jint(in->stats->frames_guessed), "stopped", arr);

		/* stopped is of the unwinds as they ended; --stitch went on */
		if (in->stitch)
			put(rp, dw, "stitch", json_pack("{s:o,s:o,s:o,s:o}",
				"cut", jint(in->stats->stitch_cut),
				"stitched", jint(in->stats->stitch_samples),
				"frames", jint(in->stats->stitch_frames),
				"still_cut", jint(in->stats->stitch_still_cut)));
		put(rp, uw, "dwarf", dw);
	}
	if (in->stats->lbr_samples) {
		/* the unwind-stop reason of an LBR stack: it was full */
		json_t *st = json_array();

		if (in->stats->lbr_stopped)
			append(rp, st, json_pack("{s:s,s:s,s:o,s:s}", "reason", "lbr_full",
						 "module", "", "samples",
						 jint(in->stats->lbr_stopped),
						 "hint", kf_diag_lbr_full_hint));
		put(rp, uw, "lbr", json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
			"samples", jint(in->stats->lbr_samples),
			"full", jint(in->stats->lbr_full),
			"empty", jint(in->stats->lbr_empty),
			"depth", jint(in->stats->lbr_depth),
			"stitched", jint(in->stats->lbr_stitched),
			"stitched_frames", jint(in->stats->lbr_stitched_frames),
			"stopped", st));
	}
	put(rp, uw, "kernel", json_pack("{s:o,s:o,s:s}",
		"truncated", jbucket(&rp->g.kernel_cut),
		"unwinder_stopped", jbucket(&rp->g.kernel_stopped),
		"hint", kf_diag_kernel_hint));
	put(rp, d, "unwinding", uw);

	/* symbolization: samples with an unnamed frame, by module */
	kf_report_sort_gaps(rp, false);
	arr = json_array();
	for (i = 0; i < rp->g.n_gaps && rp->g.gaps[i].unnamed.samples; i++) {
		const char *why, *hint;

		kf_report_unnamed_reason(rp, rp->g.gaps[i].module, &why, &hint);
		append(rp, arr, json_pack("{s:o,s:o,s:o,s:s,s:s}",
			"module", jstr(rp, kf_report_module_name(rp, rp->g.gaps[i].module)),
			"samples", jint(rp->g.gaps[i].unnamed.samples),
			"period", jint(rp->g.gaps[i].unnamed.period), "why", why, "hint", hint));
	}
	put(rp, sym, "samples_with_unnamed_frames", jbucket(&rp->g.unnamed));
	put(rp, sym, "by_module", arr);
	put(rp, d, "symbolization", sym);

	/* source lines: frames of modules whose DWARF was not found */
	kf_report_sort_gaps(rp, true);
	arr = json_array();
	for (i = 0; i < rp->g.n_gaps && rp->g.gaps[i].nolines.samples; i++)
		append(rp, arr, json_pack("{s:o,s:o,s:o,s:o}",
			"module", jstr(rp, kf_report_module_name(rp, rp->g.gaps[i].module)),
			"samples", jint(rp->g.gaps[i].nolines.samples),
			"period", jint(rp->g.gaps[i].nolines.period),
			"hint", jstr(rp, kf_report_nolines_hint(rp, rp->g.gaps[i].module))));
	put(rp, src, "looked_for", json_boolean(in->lines_looked_for));
	put(rp, src, "samples_without_lines", jbucket(&rp->g.nolines));
	put(rp, src, "by_module", arr);
	put(rp, d, "source_lines", src);
	return d;
}

static json_t *totals_json(struct kf_report *rp)
{
	static const char *const names[] = { "user", "on-behalf", "attributed",
					     "idle", "kthread", "unknown" };
	static const uint8_t v[] = {
		KF_CTX_VERDICT_USER, KF_CTX_VERDICT_ON_BEHALF, KF_CTX_VERDICT_ATTRIBUTED,
		KF_CTX_VERDICT_IDLE, KF_CTX_VERDICT_KTHREAD, KF_CTX_VERDICT_UNKNOWN,
	};
	json_t *t = jbucket(&rp->g.total), *vd = json_object();
	size_t i;

	for (i = 0; i < sizeof(v); i++)
		put(rp, vd, names[i], jbucket(&rp->g.verdicts[v[i]]));
	put(rp, t, "verdicts", vd);
	put(rp, t, "excluded", jbucket(&rp->g.excluded));
	put(rp, t, "weight", json_string(rp->in->count_samples ? "samples" :
					 rp->in->off_cpu ? "off-cpu-ns" : "period"));
	return t;
}

static json_t *notes_json(struct kf_report *rp)
{
	const struct kf_report_in *in = rp->in;
	const struct kf_attr *a = in->folded_attr;
	json_t *arr = json_array();

	if (in->folded_soft_clock) {
		rp->tmp.len = 0;
		kf_buf_printf(&rp->tmp, "event %s %s", in->filter, in->soft_clock_note);
		append(rp, arr, jstr(rp, kf_buf_cstr(&rp->tmp)));
	}
	if (a && !(a->sample_type & KF_SAMPLE_CALLCHAIN))
		append(rp, arr, json_string("the capture has no call chains (record "
			"with -g): contexts are guessed from the leaf symbol and the task"));
	if (in->stats->lost_samples || in->stats->lost_events)
		append(rp, arr, json_string("the capture lost samples or events "
			"(see capture.lost_*): totals are lower than what ran"));
	if (in->stats->input_damaged)
		append(rp, arr, json_string("part of the input could not be read: "
			"this report covers its readable part"));
	if (in->unverified)
		append(rp, arr, jstr(rp, in->unverified));
	return arr;
}

/* One member of the top-level object: `"key": value` (value consumed). */
static int member(struct kf_report *rp, FILE *out, const char *key, json_t *v)
{
	int r = 0;

	if (!v || rp->err)
		r = rp->err ? rp->err : KF_ENOMEM;
	else if (fprintf(out, ",\n \"%s\": ", key) < 0 ||
		 json_dumpf(v, out, JSON_INDENT(1) | JSON_ENSURE_ASCII))
		r = KF_EIO;
	json_decref(v);
	return r;
}

/* The branches object: branch records with flags (perf record -b, -j, an
 * LBR that gives them), counted by the branch instruction, the most
 * mispredicted first; at most KF_REPORT_MAX_SITES sites. */
#define KF_REPORT_MAX_SITES 100

static json_t *branches_json(struct kf_report *rp)
{
	const struct kf_brsites *b = rp->in->brsites;
	struct kf_namer *nm = rp->in->namer;
	json_t *sites = json_array();
	uint32_t *order = NULL;
	size_t i;

	if (!kf_brsites_order(b, &order)) {
		rp->err = KF_ENOMEM;
		return sites;
	}
	for (i = 0; i < b->n && i < KF_REPORT_MAX_SITES; i++) {
		const struct kf_brsite *st = &b->v[order[i]];
		const struct kf_module *m = st->frame.module ?
					    kf_modules_at(rp->in->modules, st->frame.module) : NULL;
		const struct kf_symframe *sf = NULL;
		const char *fn = NULL;
		uint32_t entry;
		size_t count = 0;
		json_t *o = json_object();

		/* the function that holds it: the outermost of its names */
		if (nm && kf_namer_name(nm, &st->frame, &entry) == 0) {
			sf = kf_namer_frames(nm, entry, &count);
			if (count && sf[0].name)
				fn = kf_strtab_get(&nm->strings, sf[0].name);
		}
		put(rp, o, "function", fn ? jstr(rp, fn) : json_null());
		put(rp, o, "module", m ? jstr(rp, m->name) : json_null());
		put(rp, o, "address", jint(st->frame.addr));
		if (fn && count)
			put(rp, o, "offset", jint(sf[0].offset));
		put(rp, o, "records", jint(st->records));
		put(rp, o, "mispredicted", jint(st->mispred));
		put(rp, o, "predicted", jint(st->predicted));
		put(rp, o, "cycles", jint(st->cycles));
		put(rp, o, "cycles_records", jint(st->cycles_records));
		append(rp, sites, o);
	}
	free(order);
	return json_pack("{s:o,s:o,s:o,s:o,s:o,s:o}", "samples", jint(b->samples),
			 "records", jint(b->records), "mispredicted", jint(b->mispred),
			 "predicted", jint(b->predicted), "n_sites", jint(b->n),
			 "sites", sites);
}

int kf_report_json(struct kf_report *rp, FILE *out, uint64_t *stacks)
{
	struct stack_pair sp;
	int r = 0;

	*stacks = 0;
	/* the stacks' order first; then their frame infos, made while the
	 * processes member is made on its thread (neither reads what the
	 * other writes: the frame infos, the processes' threads and cells)
	 * and, with two writers, on the second one while the main thread
	 * writes the members before the stacks and the stacks whose infos
	 * are made */
	if ((r = sort_lines(rp)) || (r = stacks_begin(rp, &sp)))
		return r;
	if (fprintf(out, "{\n \"schema\": \"kfold-report\",\n \"schema_version\": %d,\n"
		    " \"kfold_version\": \"%s\"", SCHEMA_VERSION, rp->in->version) < 0)
		r = KF_EIO;
	if (!r)
		r = member(rp, out, "capture", capture_json(rp));
	if (!r)
		r = member(rp, out, "totals", totals_json(rp));
	if (!r)
		r = processes_member(rp, out);
	if (!r)
		r = fputs(",\n \"stacks\": ", out) == EOF ? KF_EIO : write_stacks(rp, out, &sp);
	r = stacks_end(&sp, r);
	if (!r)
		r = write_frame_table(rp, out);
	if (!r)
		r = member(rp, out, "modules", modules_json(rp));
	if (!r)
		r = member(rp, out, "diagnostics", diagnostics_json(rp));
	if (!r && rp->in->brsites && rp->in->brsites->records)
		r = member(rp, out, "branches", branches_json(rp));
	if (!r)
		r = member(rp, out, "notes", notes_json(rp));
	if (!r && (fputs("\n}\n", out) == EOF || fflush(out) != 0))
		r = KF_EIO;
	if (!r)
		*stacks = rp->g.n_lines;
	return r ? r : rp->err;
}

/* ---- kfold annotate (annotated.h; docs/kfold-annotate.schema.json) ---------- */

#define ANNOTATE_SCHEMA_VERSION 1

struct ajson {
	struct kf_buf tmp;
	int err;
};

static json_t *astr(struct ajson *a, const char *p)
{
	json_t *j = p ? jstr_buf(&a->tmp, p) : json_null();

	if (!j)
		a->err = KF_ENOMEM;
	return j;
}

static void aput(struct ajson *a, json_t *obj, const char *key, json_t *v)
{
	put_err(&a->err, obj, key, v);
}

static void aappend(struct ajson *a, json_t *arr, json_t *v)
{
	append_err(&a->err, arr, v);
}

static json_t *ahex(uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%#" PRIx64, v);
	return json_string(buf);
}

/* two decimals, as the text (and perf, for an IPC) prints them */
static double round2(double v)
{
	return (double)(long long)(v * 100.0 + 0.5) / 100.0;
}

static json_t *apct(uint64_t part, uint64_t whole)
{
	return json_real(round2(whole ? 100.0 * (double)part / (double)whole : 0.0));
}

static json_t *insn_json(struct ajson *a, const struct kf_annot_insn *in, uint64_t whole,
			 size_t n_events)
{
	json_t *o = json_object();
	char bytes[2 * KF_INSN_MAX_BYTES + 1];
	unsigned k;

	aput(a, o, "addr", ahex(in->in.addr));
	aput(a, o, "size", jint(in->in.size));
	bytes[0] = '\0';
	for (k = 0; k < in->in.size && k < KF_INSN_MAX_BYTES; k++)
		snprintf(bytes + 2 * k, 3, "%02x", in->in.bytes[k]);
	aput(a, o, "bytes", in->in.size ? json_string(bytes) : json_null());
	aput(a, o, "text", in->in.size ? astr(a, in->in.text) : json_null());
	aput(a, o, "samples", jint(in->samples));
	aput(a, o, "period", jint(in->period));
	aput(a, o, "percent", apct(in->period, whole));
	aput(a, o, "exact_samples", jint(in->exact));
	aput(a, o, "skid_suspect", json_boolean(in->skid_suspect));
	aput(a, o, "shifted_samples", jint(in->shifted_samples));
	if (in->ev && n_events > 1) {
		json_t *ev = json_array();
		size_t e;

		for (e = 0; e < n_events; e++)
			aappend(a, ev, json_pack("{s:o,s:o}", "samples", jint(in->ev[2 * e]),
						 "period", jint(in->ev[2 * e + 1])));
		aput(a, o, "events", ev);
	}
	aput(a, o, "call_samples", jint(in->call_samples));
	aput(a, o, "call_period", jint(in->call_period));
	if (in->bb_records)
		aput(a, o, "block_cycles", json_pack("{s:o,s:o,s:o,s:o,s:o}",
			"records", jint(in->bb_records), "cycles", jint(in->bb_cycles),
			"average", jint(in->bb_cycles / in->bb_records),
			"min", jint(in->bb_min), "max", jint(in->bb_max)));
	if (in->ipc > 0.0)
		aput(a, o, "ipc", json_real(round2(in->ipc)));
	aput(a, o, "kind", in->in.size ? json_string(kf_insn_kind_name(in->in.kind)) : json_null());
	aput(a, o, "target", in->in.has_target ? ahex(in->in.target) : json_null());
	aput(a, o, "target_name", astr(a, in->target_name));
	if (in->n_chain) {
		const struct kf_annot_link *own = &in->chain[in->n_chain - 1];
		json_t *chain = json_array();

		aput(a, o, "line", json_pack("{s:o,s:o}", "file", astr(a, own->file),
					     "line", jint(own->line)));
		for (k = 0; k < in->n_chain; k++)
			aappend(a, chain, json_pack("{s:o,s:o,s:o}",
				"function", astr(a, in->chain[k].function),
				"file", astr(a, in->chain[k].file),
				"line", jint(in->chain[k].line)));
		aput(a, o, "inline", chain);
	} else {
		aput(a, o, "line", json_null());
		aput(a, o, "inline", json_array());
	}
	return o;
}

static json_t *totals_list(struct ajson *a, const struct kf_annot_total *v, size_t n,
			   bool lines, uint64_t whole)
{
	json_t *arr = json_array();
	size_t i;

	for (i = 0; i < n; i++) {
		json_t *o = json_object();

		aput(a, o, lines ? "file" : "function", astr(a, v[i].name));
		if (lines)
			aput(a, o, "line", jint(v[i].line));
		aput(a, o, "samples", jint(v[i].samples));
		aput(a, o, "period", jint(v[i].period));
		aput(a, o, "percent", apct(v[i].period, whole));
		aappend(a, arr, o);
	}
	return arr;
}

static json_t *func_json(struct ajson *a, const struct kf_annot_func *f,
			 const struct kf_annot *an, struct kf_dsos *d,
			 const struct kf_modules *mods, const struct kf_annot_print *p)
{
	const struct kf_module *m = kf_modules_at(mods, f->module);
	json_t *o = json_object(), *insns = json_array(), *loops = json_array();
	uint64_t whole = p->global ? an->period : f->period;
	char bid[41];
	size_t i;

	kf_annot_build_id(d, f->module, bid);
	aput(a, o, "symbol", astr(a, f->symbol));
	aput(a, o, "function", astr(a, f->function));
	aput(a, o, "cold_of", astr(a, f->cold_of));
	aput(a, o, "dso", astr(a, m->name));
	aput(a, o, "kind", json_string(f->kernel ? "kernel" :
				       m->kind == KF_MOD_JIT ? "jit" : "user"));
	aput(a, o, "named_by", json_string(f->fde ? "eh_frame" : "symbol"));
	aput(a, o, "build_id", bid[0] ? json_string(bid) : json_null());
	aput(a, o, "verified", json_boolean(strcmp(kf_dso_verification(d, f->module),
						   "build-id") == 0));
	aput(a, o, "verification", astr(a, kf_dso_verification(d, f->module)));
	aput(a, o, "code_from", astr(a, f->code_file));
	aput(a, o, "no_code", astr(a, f->no_code));
	aput(a, o, "lines_from", astr(a, f->lines_file));
	aput(a, o, "start", ahex(f->start));
	aput(a, o, "end", ahex(f->end));
	aput(a, o, "samples", jint(f->samples));
	aput(a, o, "period", jint(f->period));
	aput(a, o, "percent_of_event", apct(f->period, an->period));
	aput(a, o, "exact_samples", jint(f->exact));
	if (f->ev && an->n_events > 1) {
		json_t *ev = json_array();
		size_t e;

		for (e = 0; e < an->n_events; e++)
			aappend(a, ev, json_pack("{s:o,s:o,s:o}",
				"event", astr(a, p->event_names[e]),
				"samples", jint(f->ev[2 * e]), "period", jint(f->ev[2 * e + 1])));
		aput(a, o, "events", ev);
	}
	for (i = 0; i < f->n_insns && !a->err; i++) {
		KF_WORK(1);
		aappend(a, insns, insn_json(a, &f->insns[i], whole, an->n_events));
	}
	aput(a, o, "instructions", insns);
	aput(a, o, "lines", totals_list(a, f->lines, f->n_lines, true, f->period));
	aput(a, o, "inlinees", totals_list(a, f->inlinees, f->n_inlinees, false, f->period));
	for (i = 0; i < f->n_loops; i++)
		aappend(a, loops, json_pack("{s:o,s:o,s:o,s:o,s:o}", "head", ahex(f->loops[i].head),
			"end", ahex(f->loops[i].end), "samples", jint(f->loops[i].samples),
			"period", jint(f->loops[i].period),
			"percent", apct(f->loops[i].period, f->period)));
	aput(a, o, "loops", loops);
	if (f->bb_records) {
		json_t *blocks = json_array();

		for (i = 0; i < f->n_blocks; i++) {
			const struct kf_annot_block *b = &f->blocks[i];

			aappend(a, blocks, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
				"start", ahex(b->start), "end", ahex(b->end),
				"instructions", jint(b->insns), "covered", jint(b->covered),
				"records", jint(b->records), "cycles", jint(b->cycles),
				"ipc", json_real(round2(b->ipc))));
		}
		aput(a, o, "block_cycles", json_pack("{s:o,s:o,s:o,s:o}",
			"records", jint(f->bb_records),
			"ipc", f->hit_cycles ? json_real(round2((double)f->hit_insns /
						 (double)f->hit_cycles)) : json_null(),
			"coverage", apct(f->covered, f->n_insns), "blocks", blocks));
	}
	return o;
}

int kf_annot_write_json(FILE *out, const struct kf_annot *an, struct kf_dsos *d,
			const struct kf_modules *mods, const struct kf_annot_print *p)
{
	struct ajson a = { .err = 0 };
	json_t *skipped = json_array();
	size_t i;
	int r = 0;

	kf_buf_init(&a.tmp);
	if (fprintf(out, "{\n \"schema\": \"kfold-annotate\",\n \"schema_version\": %d,\n"
		    " \"kfold_version\": \"%s\",\n", ANNOTATE_SCHEMA_VERSION, p->version) < 0)
		r = KF_EIO;
	if (!r) {
		json_t *ev = json_pack("{s:o,s:o,s:o,s:s,s:b}", "event", astr(&a, p->event),
				       "samples", jint(an->samples), "period", jint(an->period),
				       "percent", p->global ? "global" : "local",
				       "call_sites", an->call_sites);
		char *t = ev ? json_dumps(ev, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

		/* the object's members, without its braces */
		if (!t)
			r = KF_ENOMEM;
		else if (fprintf(out, " %.*s,\n", (int)(strlen(t) - 2), t + 1) < 0)
			r = KF_EIO;
		free(t);
		json_decref(ev);
	}
	if (!r) {
		/* the events of the per-event counts, in their order */
		json_t *names = json_array();
		size_t e;
		char *t;

		for (e = 0; e < an->n_events; e++)
			aappend(&a, names, astr(&a, p->event_names[e]));
		t = a.err ? NULL : json_dumps(names, JSON_COMPACT | JSON_ENSURE_ASCII);
		if (!t)
			r = KF_ENOMEM;
		else if (fprintf(out, " \"events\": %s,\n \"functions_with_samples\": %zu,\n"
				 " \"functions\": [", t, an->n_candidates) < 0)
			r = KF_EIO;
		free(t);
		json_decref(names);
	}
	for (i = 0; i < an->n_funcs && !r; i++) {
		json_t *f = func_json(&a, &an->funcs[i], an, d, mods, p);

		if (a.err || !f)
			r = a.err ? a.err : KF_ENOMEM;
		else if (fputs(i ? ",\n  " : "\n  ", out) == EOF ||
			 json_dumpf(f, out, JSON_COMPACT | JSON_ENSURE_ASCII))
			r = KF_EIO;
		json_decref(f);
	}
	for (i = 0; i < an->n_skipped && !r; i++) {
		const struct kf_annot_skip *k = &an->skipped[i];

		aappend(&a, skipped, json_pack("{s:o,s:o,s:o,s:o,s:o,s:o,s:o}",
			"what", astr(&a, k->what),
			"dso", k->module ? astr(&a, kf_modules_at(mods, k->module)->name) : json_null(),
			"addr", ahex(k->addr), "samples", jint(k->samples),
			"period", jint(k->period), "reason", astr(&a, k->reason),
			"fix", astr(&a, k->fix)));
	}
	if (!r && a.err)
		r = a.err;
	if (!r && (fputs("\n ],\n \"not_annotated\": ", out) == EOF ||
		   json_dumpf(skipped, out, JSON_INDENT(1) | JSON_ENSURE_ASCII) ||
		   fputs("\n}\n", out) == EOF || fflush(out) != 0))
		r = KF_EIO;
	json_decref(skipped);
	kf_buf_fini(&a.tmp);
	return r;
}
