/* report.c - implements kfold.h's JSON report and --explain.
 *
 * One pass over the classified stacks (context.h) gathers everything:
 * per thread, the samples and periods by verdict and leaf context; per
 * distinct folded line and context, the stack; per module, the samples
 * whose frames it left unnamed or without source lines.  Both outputs are
 * made from that.  Memory grows with the number of distinct stacks and
 * threads, never with the number of samples.  What the diagnostics say
 * (why a module stayed unnamed, what would give it lines, the unwinding
 * hints) is diagnose.h's.
 *
 * The JSON schema is docs/kfold-report.schema.json; a change to what is
 * written here changes that file and, if a consumer could notice,
 * SCHEMA_VERSION.
 */
#include "kfold.h"

#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "folded.h"
#include "session.h"

#define SCHEMA_VERSION 1

struct bucket {
	uint64_t samples, period;
};

static void add(struct bucket *b, uint64_t samples, uint64_t period)
{
	b->samples = samples > UINT64_MAX - b->samples ? UINT64_MAX : b->samples + samples;
	b->period = period > UINT64_MAX - b->period ? UINT64_MAX : b->period + period;
}

/* (thread, verdict, label) -> samples: the per-thread breakdown */
struct cell {
	uint32_t thread, label;  /* label: id in labels (the leaf context, or
				    for unknown the reason) */
	uint8_t verdict;
	struct bucket b;
};

struct thread {
	int32_t pid, tid;
	uint32_t comm;           /* id in labels */
	struct bucket total;
};

/* a distinct (folded line, context) */
struct line {
	uint32_t text;           /* id in lines */
	uint32_t leaf, base, via;/* ids in labels */
	uint8_t verdict, why, guess;
	struct bucket b;
	uint32_t node;           /* the heaviest stack merged into the line
				    (the first of equals): its frame_info */
	uint64_t node_samples;
};

/* samples a module left unnamed or without lines */
struct modgap {
	uint32_t module;         /* 0: no mapping */
	struct bucket unnamed, nolines;
};

struct report {
	struct kf_session *s;
	struct kf_strtab labels, lines;
	struct kf_buf tmp, text;
	struct kf_map64 thread_ix, cell_ix, line_ix, gap_ix;
	struct thread *threads;
	size_t n_threads, cap_threads;
	struct cell *cells;
	size_t n_cells, cap_cells;
	struct line *lv;
	size_t n_lines, cap_lines;
	struct modgap *gaps;
	size_t n_gaps, cap_gaps;
	struct kf_fold_frame *ff;/* scratch: one stack's folded frames */
	size_t cap_ff;
	char (*bid)[41];         /* per module id: its build-id as modules
				    shows it (recorded, else the header's
				    table by name), "" for none */
	bool want_lines;         /* JSON: keep the stacks */
	struct bucket verdicts[KF_CTX_NVERDICTS], total, excluded;
	struct bucket leaf_named, kernel_cut, kernel_stopped, unnamed, nolines;
	int err;
};

static uint64_t key3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = kf_hash64(a * 0x9e3779b97f4a7c15u ^ kf_hash64(b ^ kf_hash64(c)));

	return h == UINT64_MAX ? 0 : h;
}

static int intern(struct kf_strtab *t, const char *p, size_t n, uint32_t *id)
{
	return kf_strtab_intern(t, p, n, id) ? 0 : KF_ENOMEM;
}

/* The maps below are keyed by a 64-bit hash of what an entry is; two
 * different entries with the same hash take the keys after it.  find()
 * returns the index of the entry under *key that same() accepts, or false
 * with *key the first free key for a new one. */
typedef bool (*same_fn)(const struct report *rp, uint32_t i, const void *want);

static bool find(const struct report *rp, const struct kf_map64 *m, uint64_t *key,
		 same_fn same, const void *want, uint32_t *out)
{
	uint32_t i;

	while (kf_map64_get(m, *key, &i)) {
		if (same(rp, i, want)) {
			*out = i;
			return true;
		}
		*key = *key == UINT64_MAX - 1 ? 0 : *key + 1;
	}
	return false;
}

static bool same_thread(const struct report *rp, uint32_t i, const void *want)
{
	const struct thread *a = &rp->threads[i], *b = want;

	return a->pid == b->pid && a->tid == b->tid;
}

static bool same_cell(const struct report *rp, uint32_t i, const void *want)
{
	const struct cell *a = &rp->cells[i], *b = want;

	return a->thread == b->thread && a->verdict == b->verdict && a->label == b->label;
}

static bool same_line(const struct report *rp, uint32_t i, const void *want)
{
	const struct line *a = &rp->lv[i], *b = want;

	return a->text == b->text && a->leaf == b->leaf && a->base == b->base &&
	       a->via == b->via && a->verdict == b->verdict && a->why == b->why &&
	       a->guess == b->guess;
}

static int thread_of(struct report *rp, const struct kf_ctx_stack *cs, uint32_t *out)
{
	uint64_t key = key3((uint32_t)cs->pid, (uint32_t)cs->tid, 1);
	struct thread want = { cs->pid, cs->tid, 0, { 0, 0 } };
	uint32_t i;

	if (find(rp, &rp->thread_ix, &key, same_thread, &want, out))
		return 0;
	if (!KF_GROW(rp->threads, rp->cap_threads, rp->n_threads + 1))
		return KF_ENOMEM;
	i = (uint32_t)rp->n_threads;
	memset(&rp->threads[i], 0, sizeof(rp->threads[i]));
	rp->threads[i].pid = cs->pid;
	rp->threads[i].tid = cs->tid;
	{
		/* the comm as the stack's root names it (the first one seen:
		 * an exec changes it) */
		const struct kf_stack_root *root = kf_roots_get(&rp->s->roots,
				rp->s->stacks.nodes[cs->path[0]].frame.root);

		rp->tmp.len = 0;
		kf_fold_root_comm(&rp->s->fold, &rp->s->strings, root, &rp->tmp);
		if (rp->tmp.oom || intern(&rp->labels, kf_buf_cstr(&rp->tmp), rp->tmp.len,
					  &rp->threads[i].comm))
			return KF_ENOMEM;
	}
	if (!kf_map64_put(&rp->thread_ix, key, i))
		return KF_ENOMEM;
	rp->n_threads++;
	*out = i;
	return 0;
}

static int add_cell(struct report *rp, uint32_t thread, unsigned verdict,
		    uint32_t label, const struct kf_ctx_stack *cs)
{
	uint64_t key = key3(thread, verdict, label);
	struct cell want = { thread, label, (uint8_t)verdict, { 0, 0 } };
	uint32_t i;

	if (find(rp, &rp->cell_ix, &key, same_cell, &want, &i)) {
		add(&rp->cells[i].b, cs->samples, cs->weight);
		return 0;
	}
	if (!KF_GROW(rp->cells, rp->cap_cells, rp->n_cells + 1))
		return KF_ENOMEM;
	i = (uint32_t)rp->n_cells;
	rp->cells[i] = want;
	add(&rp->cells[i].b, cs->samples, cs->weight);
	if (!kf_map64_put(&rp->cell_ix, key, i))
		return KF_ENOMEM;
	rp->n_cells++;
	return 0;
}

static struct modgap *gap_of(struct report *rp, uint32_t module)
{
	uint64_t key = module;   /* 32 bits: never the map's empty key */
	uint32_t i;

	if (kf_map64_get(&rp->gap_ix, key, &i))
		return &rp->gaps[i];
	if (!KF_GROW(rp->gaps, rp->cap_gaps, rp->n_gaps + 1))
		return NULL;
	i = (uint32_t)rp->n_gaps;
	memset(&rp->gaps[i], 0, sizeof(rp->gaps[i]));
	rp->gaps[i].module = module;
	if (!kf_map64_put(&rp->gap_ix, key, i))
		return NULL;
	rp->n_gaps++;
	return &rp->gaps[i];
}

/* Charges a stack's samples to module's unnamed or no-lines count, once
 * per stack: seen[0..*n) are the modules charged so far (at most 8 are
 * remembered; a stack through more is not charged to the others). */
static int charge(struct report *rp, uint32_t *seen, size_t *n, uint32_t mod,
		  bool nolines, const struct kf_ctx_stack *cs)
{
	struct modgap *g;
	size_t k;

	for (k = 0; k < *n; k++)
		if (seen[k] == mod)
			return 0;
	if (*n == 8)
		return 0;
	if (!(g = gap_of(rp, mod)))
		return KF_ENOMEM;
	add(nolines ? &g->nolines : &g->unnamed, cs->samples, cs->weight);
	seen[(*n)++] = mod;
	return 0;
}

/* Where this stack's attribution chain broke: frames without a name, and
 * frames of modules whose debug info was looked for and not found. */
static int stack_gaps(struct report *rp, const struct kf_ctx_stack *cs)
{
	uint32_t seen_u[8], seen_l[8];
	size_t nu = 0, nl = 0, i;
	int r = 0;

	for (i = 1; i < cs->n_path && !r; i++) {
		const struct kf_frame *f = &rp->s->stacks.nodes[cs->path[i]].frame;
		uint32_t mod = (f->flags & KF_FRAME_NOMAP) ? 0 : f->module;
		bool looked = false;

		if (f->flags & KF_FRAME_TRUNCATED)
			continue;
		if (!cs->syms[i])
			r = charge(rp, seen_u, &nu, mod, false, cs);
		if (!r && mod && !kf_dso_debuginfo_file(&rp->s->dsos, mod, &looked) && looked)
			r = charge(rp, seen_l, &nl, mod, true, cs);
	}
	if (nu)
		add(&rp->unnamed, cs->samples, cs->weight);
	if (nl)
		add(&rp->nolines, cs->samples, cs->weight);
	return r;
}

/* The folded line of a stack, as folded.c writes it. */
static int stack_text(struct report *rp, const struct kf_ctx_stack *cs, uint32_t *id)
{
	const struct kf_stacks *st = &rp->s->stacks;
	const struct kf_stack_root *root = kf_roots_get(&rp->s->roots,
						  st->nodes[cs->path[0]].frame.root);
	bool java = kf_fold_root_java(&rp->s->strings, root);
	size_t i;

	rp->text.len = 0;
	kf_fold_root(&rp->s->fold, &rp->s->strings, root, &rp->text);
	for (i = 1; i < cs->n_path; i++) {
		uint32_t t;
		int r = kf_fold_text_id(&rp->s->texts, &st->nodes[cs->path[i]].frame,
					java, &t);

		if (r)
			return r;
		if (t == 0)
			continue;
		kf_buf_put(&rp->text, ";", 1);
		kf_buf_puts(&rp->text, kf_strtab_get(&rp->s->texts.texts, t));
	}
	if (rp->text.oom)
		return KF_ENOMEM;
	return intern(&rp->lines, rp->text.p, rp->text.len, id);
}

static int label_id(struct report *rp, const struct kf_ctx_level *l, uint32_t *id)
{
	rp->tmp.len = 0;
	kf_ctx_label(l, true, &rp->tmp);
	if (rp->tmp.oom)
		return KF_ENOMEM;
	return intern(&rp->labels, kf_buf_cstr(&rp->tmp), rp->tmp.len, id);
}

static int visit(void *payload, const struct kf_ctx_stack *cs)
{
	struct report *rp = payload;
	const struct kf_ctx *c = cs->ctx;
	uint32_t th, leaf, base, label;
	const char *why;
	int r;

	if (rp->s->o.exclude & (1u << c->verdict)) {
		add(&rp->excluded, cs->samples, cs->weight);
		return 0;
	}
	add(&rp->total, cs->samples, cs->weight);
	add(&rp->verdicts[c->verdict], cs->samples, cs->weight);
	if (cs->n_path > 1 && cs->syms[cs->n_path - 1])
		add(&rp->leaf_named, cs->samples, cs->weight);
	if (c->why == KF_CTX_WHY_TRUNCATED)
		add(&rp->kernel_cut, cs->samples, cs->weight);
	else if (c->why == KF_CTX_WHY_UNWIND_STOPPED)
		add(&rp->kernel_stopped, cs->samples, cs->weight);
	if ((r = thread_of(rp, cs, &th)) || (r = label_id(rp, &c->leaf, &leaf)) ||
	    (r = label_id(rp, &c->base, &base)))
		return r;
	add(&rp->threads[th].total, cs->samples, cs->weight);
	why = c->why ? kf_ctx_why_name(c->why) : "no_rule";
	if (c->verdict == KF_CTX_VERDICT_UNKNOWN)
		r = intern(&rp->labels, why, strlen(why), &label);
	else
		label = leaf;
	if (r || (r = add_cell(rp, th, c->verdict, label, cs)) ||
	    (r = stack_gaps(rp, cs)))
		return r;
	if (rp->want_lines) {
		struct line want;
		uint32_t i;
		uint64_t key;
		const char *v = kf_ctx_via_name(c->leaf.via);

		memset(&want, 0, sizeof(want));
		if ((r = stack_text(rp, cs, &want.text)) ||
		    (r = intern(&rp->labels, v, strlen(v), &want.via)))
			return r;
		want.leaf = leaf;
		want.base = base;
		want.verdict = c->verdict;
		want.why = c->why;
		want.guess = c->guess;
		key = key3(want.text, (uint64_t)leaf << 8 | c->verdict,
			   (uint64_t)base << 32 | want.via);
		want.node = cs->node;
		want.node_samples = cs->samples;
		if (find(rp, &rp->line_ix, &key, same_line, &want, &i)) {
			add(&rp->lv[i].b, cs->samples, cs->weight);
			if (cs->samples > rp->lv[i].node_samples) {
				rp->lv[i].node = cs->node;
				rp->lv[i].node_samples = cs->samples;
			}
			return 0;
		}
		if (!KF_GROW(rp->lv, rp->cap_lines, rp->n_lines + 1))
			return KF_ENOMEM;
		i = (uint32_t)rp->n_lines;
		rp->lv[i] = want;
		add(&rp->lv[i].b, cs->samples, cs->weight);
		if (!kf_map64_put(&rp->line_ix, key, i))
			return KF_ENOMEM;
		rp->n_lines++;
	}
	return 0;
}

static void report_fini(struct report *rp)
{
	kf_strtab_fini(&rp->labels);
	kf_strtab_fini(&rp->lines);
	kf_buf_fini(&rp->tmp);
	kf_buf_fini(&rp->text);
	kf_map64_fini(&rp->thread_ix);
	kf_map64_fini(&rp->cell_ix);
	kf_map64_fini(&rp->line_ix);
	kf_map64_fini(&rp->gap_ix);
	free(rp->threads);
	free(rp->cells);
	free(rp->lv);
	free(rp->gaps);
	free(rp->ff);
	free(rp->bid);
}

static int gather(struct kf_session *s, struct report *rp, bool lines)
{
	int r;

	memset(rp, 0, sizeof(*rp));
	rp->s = s;
	rp->want_lines = lines;
	kf_buf_init(&rp->tmp);
	kf_buf_init(&rp->text);
	kf_map64_init(&rp->thread_ix);
	kf_map64_init(&rp->cell_ix);
	kf_map64_init(&rp->line_ix);
	kf_map64_init(&rp->gap_ix);
	if (!kf_strtab_init(&rp->labels) || !kf_strtab_init(&rp->lines))
		return KF_ENOMEM;
	if (!s->o.classify || !s->rules)
		return KF_EINVAL;
	if (!s->namer_ready)
		return 0;
	r = kf_ctx_walk(&s->stacks, &s->roots, &s->namer, s->rules, visit, rp);
	return r;
}

/* ---- shared bits of both outputs ------------------------------------------------ */

static const char *module_name(struct report *rp, uint32_t module)
{
	return module ? kf_modules_at(&rp->s->modules, module)->name : "[unknown]";
}

/* Why a module's frames stayed unnamed, and what would name them. */
static void unnamed_reason(struct report *rp, uint32_t module, const char **why,
			   const char **hint)
{
	const struct kf_module *m = module ? kf_modules_at(&rp->s->modules, module) : NULL;
	enum kf_dso_status st = module ? kf_dso_status(&rp->s->dsos, module) : KF_DSO_UNTRIED;
	bool syms = module && kf_dso_symtab(&rp->s->dsos, module) != NULL;

	kf_diag_unnamed(module, m ? m->kind : KF_MOD_NONE, st, syms, why, hint);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}


/* ---- JSON ---------------------------------------------------------------------- */

/* jansson takes UTF-8 only; names from a capture may be anything: bytes
 * that are not UTF-8 become U+FFFD */
static json_t *jstr(struct report *rp, const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	size_t i = 0, n = strlen(p);
	json_t *j = json_stringn(p, n);

	if (j)
		return j;
	rp->tmp.len = 0;
	while (i < n) {
		unsigned c = u[i];
		size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 :
			     (c >> 3) == 30 ? 4 : 0;
		size_t k;
		bool ok = len && i + len <= n;

		for (k = 1; ok && k < len; k++)
			ok = (u[i + k] & 0xc0) == 0x80;
		if (ok && len > 1) {
			/* overlong forms and surrogates are not UTF-8 */
			unsigned v = c & (0x7f >> len);

			for (k = 1; k < len; k++)
				v = v << 6 | (u[i + k] & 0x3f);
			ok = (len == 2 && v >= 0x80) || (len == 3 && v >= 0x800 &&
			     (v < 0xd800 || v > 0xdfff)) || (len == 4 && v >= 0x10000 &&
			     v <= 0x10ffff);
		}
		if (ok && c) {
			kf_buf_put(&rp->tmp, p + i, len);
			i += len;
		} else {
			kf_buf_puts(&rp->tmp, "\xef\xbf\xbd");
			i++;
		}
	}
	return json_stringn(rp->tmp.p ? rp->tmp.p : "", rp->tmp.len);
}

static json_t *jint(uint64_t v)
{
	return json_integer(v > (uint64_t)INT64_MAX ? INT64_MAX : (json_int_t)v);
}

static json_t *jbucket(const struct bucket *b)
{
	return json_pack("{s:o,s:o}", "samples", jint(b->samples), "period", jint(b->period));
}

/* json_object_set_new that remembers a failure */
static void put(struct report *rp, json_t *obj, const char *key, json_t *v)
{
	if (!obj || !v || json_object_set_new(obj, key, v))
		rp->err = KF_ENOMEM;
}

static void append(struct report *rp, json_t *arr, json_t *v)
{
	if (!arr || !v || json_array_append_new(arr, v))
		rp->err = KF_ENOMEM;
}

static json_t *capture_json(struct report *rp)
{
	struct kf_session *s = rp->s;
	const struct kf_env *env = kf_pd_env(s->pd);
	const kf_stats *st = &s->stats;
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
	for (i = 0; i < kf_pd_n_attrs(s->pd); i++) {
		const struct kf_attr *a = kf_pd_attr(s->pd, i);
		bool freq = kf_attr_flag(a, 10);
		json_t *e = json_object();

		put(rp, e, "name", jstr(rp, kf_pd_event_name(s->pd, i)));
		put(rp, e, "type", jint(a->type));
		put(rp, e, "config", jint(a->config));
		put(rp, e, freq ? "sample_freq" : "sample_period", jint(a->sample_period));
		put(rp, e, "sample_type", jint(a->sample_type));
		put(rp, e, "callchain", json_boolean(a->sample_type & KF_SAMPLE_CALLCHAIN));
		put(rp, e, "user_stack", json_boolean((a->sample_type & KF_SAMPLE_STACK_USER) &&
						       a->sample_stack_user));
		put(rp, e, "software_clock", json_boolean(kf_attr_is_soft_clock(a)));
		put(rp, e, "folded", json_boolean(s->filter &&
			strcmp(kf_pd_event_name(s->pd, i), s->filter) == 0));
		append(rp, evs, e);
	}
	put(rp, c, "events", evs);
	/* the header's range (perf record writes it), else the samples' */
	if (env->first_sample_time || env->last_sample_time)
		put(rp, c, "time_ns", json_pack("{s:o,s:o}", "first", jint(env->first_sample_time),
						 "last", jint(env->last_sample_time)));
	else if (s->first_time)
		put(rp, c, "time_ns", json_pack("{s:o,s:o}", "first", jint(s->first_time),
						 "last", jint(s->last_time)));
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
	return c;
}

static json_t *modules_json(struct report *rp)
{
	json_t *arr = json_array();
	size_t i, n = kf_session_n_modules(rp->s);

	for (i = 0; i < n; i++) {
		kf_module_info mi;
		json_t *m;

		if (kf_session_module(rp->s, i, &mi) != 0)
			continue;
		m = json_object();
		put(rp, m, "name", jstr(rp, mi.name));
		put(rp, m, "build_id", mi.build_id[0] ? jstr(rp, mi.build_id) : json_null());
		put(rp, m, "verified", json_boolean(mi.verified));
		put(rp, m, "status", jstr(rp, mi.status));
		put(rp, m, "verification", jstr(rp, mi.verification));
		put(rp, m, "symbols_from", mi.file ? jstr(rp, mi.file) : json_null());
		put(rp, m, "symbols_from_debuginfod", json_boolean(mi.file_debuginfod));
		put(rp, m, "debuginfo_from", mi.debuginfo ? jstr(rp, mi.debuginfo) : json_null());
		put(rp, m, "debuginfo_from_debuginfod", json_boolean(mi.debuginfo_debuginfod));
		put(rp, m, "debuginfo_looked_for", json_boolean(mi.debuginfo_wanted));
		if (mi.minidebuginfo)
			put(rp, m, "minidebuginfo", jstr(rp, mi.minidebuginfo));
		if (mi.debuginfo_hint)
			put(rp, m, "hint", jstr(rp, mi.debuginfo_hint));
		append(rp, arr, m);
	}
	return arr;
}

/* sort context for cells: by thread rank, verdict, label */
struct cellsort {
	struct report *rp;
	const uint32_t *rank;    /* per thread index; NULL: ignore threads */
};

static int cmp_cells(const void *pa, const void *pb, void *ctx)
{
	const struct cell *a = pa, *b = pb;
	const struct cellsort *cs = ctx;

	if (cs->rank && cs->rank[a->thread] != cs->rank[b->thread])
		return cs->rank[a->thread] < cs->rank[b->thread] ? -1 : 1;
	if (a->verdict != b->verdict)
		return a->verdict < b->verdict ? -1 : 1;
	return strcmp(kf_strtab_get(&cs->rp->labels, a->label),
		      kf_strtab_get(&cs->rp->labels, b->label));
}

static int cmp_threads(const void *pa, const void *pb, void *ctx)
{
	const struct thread *v = ctx;
	const struct thread *a = &v[*(const uint32_t *)pa], *b = &v[*(const uint32_t *)pb];

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->tid < b->tid ? -1 : a->tid > b->tid;
}

/* Buckets by verdict from cells v[0..n) (sorted by verdict and label,
 * one cell per pair) into o: "user", "on_behalf" {classes}, ... */
static void breakdown(struct report *rp, json_t *o, const struct cell *v, size_t n)
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
	struct bucket sum[KF_CTX_NVERDICTS];
	json_t *sub[KF_CTX_NVERDICTS];
	size_t i;
	unsigned k;

	memset(sum, 0, sizeof(sum));
	for (k = 0; k < KF_CTX_NVERDICTS; k++)
		sub[k] = json_object();
	for (i = 0; i < n; i++) {
		add(&sum[v[i].verdict], v[i].b.samples, v[i].b.period);
		put(rp, sub[v[i].verdict], kf_strtab_get(&rp->labels, v[i].label),
		    jbucket(&v[i].b));
	}
	for (k = 0; k < sizeof(order); k++) {
		unsigned vd = order[k];
		json_t *b = jbucket(&sum[vd]);

		if (vd == KF_CTX_VERDICT_ON_BEHALF || vd == KF_CTX_VERDICT_ATTRIBUTED)
			put(rp, b, "classes", sub[vd]);
		else if (vd == KF_CTX_VERDICT_UNKNOWN)
			put(rp, b, "reasons", sub[vd]);
		else
			json_decref(sub[vd]);
		put(rp, o, keys[vd], b);
	}
}

/* cells v[0..n) of several threads, summed per (verdict, label) into
 * tmp (which must hold n) */
static size_t merge_cells(struct report *rp, const struct cell *v, size_t n,
			  struct cell *tmp)
{
	struct cellsort cs = { rp, NULL };
	size_t i, m = 0;

	if (n)
		memcpy(tmp, v, n * sizeof(*v));
	if (n > 1)
		qsort_r(tmp, n, sizeof(*tmp), cmp_cells, &cs);
	for (i = 0; i < n; i++) {
		if (m && tmp[m - 1].verdict == tmp[i].verdict &&
		    tmp[m - 1].label == tmp[i].label)
			add(&tmp[m - 1].b, tmp[i].b.samples, tmp[i].b.period);
		else
			tmp[m++] = tmp[i];
	}
	return m;
}

static json_t *processes_json(struct report *rp)
{
	json_t *procs = json_array();
	uint32_t *perm = kf_calloc(rp->n_threads + 1, sizeof(*perm));
	uint32_t *rank = kf_calloc(rp->n_threads + 1, sizeof(*rank));
	struct cell *tmp = kf_calloc(rp->n_cells + 1, sizeof(*tmp));
	struct cellsort cs = { rp, rank };
	size_t i, j, c = 0;

	if (!procs || !perm || !rank || !tmp) {
		rp->err = KF_ENOMEM;
		goto out;
	}
	for (i = 0; i < rp->n_threads; i++)
		perm[i] = (uint32_t)i;
	if (rp->n_threads > 1)
		qsort_r(perm, rp->n_threads, sizeof(*perm), cmp_threads, rp->threads);
	for (i = 0; i < rp->n_threads; i++)
		rank[perm[i]] = (uint32_t)i;
	if (rp->n_cells > 1)
		qsort_r(rp->cells, rp->n_cells, sizeof(*rp->cells), cmp_cells, &cs);

	/* one process: the threads perm[i..j) with the same pid */
	for (i = 0; i < rp->n_threads; i = j) {
		const struct thread *t0 = &rp->threads[perm[i]];
		struct bucket tot = { 0, 0 };
		json_t *proc = json_object(), *threads = json_array();
		size_t c0 = c, k;

		for (j = i; j < rp->n_threads && rp->threads[perm[j]].pid == t0->pid; j++) {
			const struct thread *t = &rp->threads[perm[j]];
			json_t *tj = json_object();
			size_t lo = c;

			while (c < rp->n_cells && rank[rp->cells[c].thread] == j)
				c++;
			add(&tot, t->total.samples, t->total.period);
			put(rp, tj, "tid", json_integer(t->tid));
			put(rp, tj, "comm", jstr(rp, kf_strtab_get(&rp->labels, t->comm)));
			put(rp, tj, "samples", jint(t->total.samples));
			put(rp, tj, "period", jint(t->total.period));
			breakdown(rp, tj, rp->cells + lo, c - lo);
			append(rp, threads, tj);
		}
		put(rp, proc, "pid", json_integer(t0->pid));
		put(rp, proc, "comm", jstr(rp, kf_strtab_get(&rp->labels, t0->comm)));
		put(rp, proc, "samples", jint(tot.samples));
		put(rp, proc, "period", jint(tot.period));
		k = merge_cells(rp, rp->cells + c0, c - c0, tmp);
		breakdown(rp, proc, tmp, k);
		put(rp, proc, "threads", threads);
		append(rp, procs, proc);
	}
out:
	free(perm);
	free(rank);
	free(tmp);
	return procs;
}

static int cmp_lines(const void *pa, const void *pb, void *ctx)
{
	const struct line *a = pa, *b = pb;
	const struct report *rp = ctx;
	int c = strcmp(kf_strtab_get(&rp->lines, a->text), kf_strtab_get(&rp->lines, b->text));

	if (c)
		return c;
	if (a->verdict != b->verdict)
		return a->verdict < b->verdict ? -1 : 1;
	c = strcmp(kf_strtab_get(&rp->labels, a->leaf), kf_strtab_get(&rp->labels, b->leaf));
	if (c)
		return c;
	c = strcmp(kf_strtab_get(&rp->labels, a->base), kf_strtab_get(&rp->labels, b->base));
	if (c)
		return c;
	c = strcmp(kf_strtab_get(&rp->labels, a->via), kf_strtab_get(&rp->labels, b->via));
	if (c)
		return c;
	if (a->why != b->why)
		return a->why < b->why ? -1 : 1;
	return (a->guess > b->guess) - (a->guess < b->guess);
}

/* One frame_info object: what the namer knows of one folded frame. */
static json_t *frame_json(struct report *rp, const struct kf_fold_frame *ff)
{
	const struct kf_symframe *sf = &ff->sf;
	const struct kf_namer *nm = &rp->s->namer;
	const struct kf_module *m = sf->module && sf->kind != KF_SYM_ROOT &&
				    sf->kind != KF_SYM_MARKER ?
				    kf_modules_at(&rp->s->modules, sf->module) : NULL;
	bool code = sf->kind == KF_SYM_USER || sf->kind == KF_SYM_KERNEL ||
		    sf->kind == KF_SYM_JIT;
	json_t *o = json_object();

	put(rp, o, "module", m ? jstr(rp, m->name) : json_null());
	put(rp, o, "build_id", json_string(m ? rp->bid[sf->module] : ""));
	put(rp, o, "verified", json_boolean(sf->flags & KF_SYMF_VERIFIED));
	/* perf's "(inlined)" lines from addr2line carry no offset */
	if (code && sf->name && !(sf->flags & KF_SYMF_INLINED))
		put(rp, o, "offset", jint(sf->offset));
	if (code && (sf->flags & KF_SYMF_FILE)) {
		put(rp, o, "file", jstr(rp, kf_strtab_get(&nm->strings, sf->file)));
		if (sf->line)
			put(rp, o, "line", jint(sf->line));
	}
	put(rp, o, "inlined", json_boolean(sf->inline_depth > 0));
	put(rp, o, "kind", json_string(kf_symkind_name(sf->kind)));
	if (code || sf->kind == KF_SYM_UNKNOWN) {
		if (!sf->name && sf->why)
			put(rp, o, "why", json_string(kf_symwhy_name(sf->why)));
	}
	return o;
}

/* frame_info: one object per entry of frames, from the folded frames of
 * the line's heaviest stack.  frames splits the line at ';' (an empty
 * last piece dropped); the line is the root's text, then ";" and the
 * text of each raw frame whose text is not empty, a raw frame's text
 * being its symbol frames' texts joined by ';'.  So each folded frame
 * stands for the pieces of its own text, but the lone frame of a raw
 * frame that folds to nothing stands for none. */
static json_t *frame_info_json(struct report *rp, const struct line *ln, const char *line)
{
	struct kf_session *s = rp->s;
	json_t *arr = json_array();
	size_t n = 0, i, len = strlen(line);
	int r = kf_fold_stack_frames(&s->texts, &s->stacks, &s->roots, &s->strings,
				     ln->node, &rp->ff, &n, &rp->cap_ff);

	if (r) {
		rp->err = r;
		json_decref(arr);
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const struct kf_fold_frame *f = &rp->ff[i];
		const char *t = kf_strtab_get(&s->texts.texts, f->text);
		bool lone = (i == 0 || rp->ff[i - 1].node != f->node) &&
			    (i + 1 == n || rp->ff[i + 1].node != f->node);
		size_t pieces = 1;
		json_t *o;

		KF_WORK(1);
		if (!*t && lone && f->sf.kind != KF_SYM_ROOT)
			continue;
		for (; *t; t++)
			pieces += *t == ';';
		o = frame_json(rp, f);
		while (o && --pieces)
			append(rp, arr, json_deep_copy(o));
		append(rp, arr, o);
	}
	if ((!len || line[len - 1] == ';') && json_array_size(arr))
		json_array_remove(arr, json_array_size(arr) - 1);
	return arr;
}

/* The stacks, written one compact object per line as they are made: a
 * capture's stack list can be large, and a tree of JSON values for all of
 * it would take several times the memory of the text. */
static int write_stacks(struct report *rp, FILE *out)
{
	size_t i;

	if (rp->n_lines > 1)
		qsort_r(rp->lv, rp->n_lines, sizeof(*rp->lv), cmp_lines, rp);
	if (!(rp->bid = kf_calloc(rp->s->modules.n + 1, sizeof(*rp->bid))))
		return KF_ENOMEM;
	for (i = 0; i < kf_session_n_modules(rp->s); i++) {
		kf_module_info mi;

		if (kf_session_module(rp->s, i, &mi) == 0)
			memcpy(rp->bid[rp->s->hit[i]], mi.build_id, sizeof(rp->bid[0]));
	}
	if (fputs("[", out) == EOF)
		return KF_EIO;
	for (i = 0; i < rp->n_lines && !rp->err; i++) {
		const struct line *ln = &rp->lv[i];
		const char *t = kf_strtab_get(&rp->lines, ln->text);
		json_t *o = json_object(), *frames = json_array();
		const char *via = kf_strtab_get(&rp->labels, ln->via);
		int bad;

		/* a frame's text never holds ';' (names have it replaced):
		 * ';' only separates frames and inlined pieces */
		while (*t) {
			size_t n = strcspn(t, ";");

			rp->text.len = 0;
			kf_buf_put(&rp->text, t, n);
			append(rp, frames, jstr(rp, kf_buf_cstr(&rp->text)));
			t += n;
			if (*t)
				t++;
		}
		put(rp, o, "frames", frames);
		put(rp, o, "frame_info", frame_info_json(rp, ln,
				kf_strtab_get(&rp->lines, ln->text)));
		put(rp, o, "samples", jint(ln->b.samples));
		put(rp, o, "period", jint(ln->b.period));
		put(rp, o, "verdict", json_string(kf_ctx_verdict_name(ln->verdict)));
		put(rp, o, "leaf", jstr(rp, kf_strtab_get(&rp->labels, ln->leaf)));
		put(rp, o, "base", jstr(rp, kf_strtab_get(&rp->labels, ln->base)));
		if (*via)
			put(rp, o, "via", json_string(via));
		if (ln->why)
			put(rp, o, "why", json_string(kf_ctx_why_name(ln->why)));
		if (ln->verdict == KF_CTX_VERDICT_UNKNOWN && ln->guess != KF_CTX_UNKNOWN)
			put(rp, o, "guess", json_string(kf_ctx_class_name(ln->guess)));
		bad = rp->err || fputs(i ? ",\n  " : "\n  ", out) == EOF ||
		      json_dumpf(o, out, JSON_COMPACT | JSON_ENSURE_ASCII);
		json_decref(o);
		if (bad)
			return rp->err ? rp->err : KF_EIO;
	}
	return fputs(rp->n_lines ? "\n ]" : "]", out) == EOF ? KF_EIO : 0;
}

static int cmp_gaps_unnamed(const void *pa, const void *pb)
{
	const struct modgap *a = pa, *b = pb;

	if (a->unnamed.samples != b->unnamed.samples)
		return a->unnamed.samples > b->unnamed.samples ? -1 : 1;
	return (a->module > b->module) - (a->module < b->module);
}

static int cmp_gaps_nolines(const void *pa, const void *pb)
{
	const struct modgap *a = pa, *b = pb;

	if (a->nolines.samples != b->nolines.samples)
		return a->nolines.samples > b->nolines.samples ? -1 : 1;
	return (a->module > b->module) - (a->module < b->module);
}

static const char *nolines_hint(struct report *rp, uint32_t module)
{
	return kf_diag_nolines_hint(kf_dso_debuginfo_hint(&rp->s->dsos, module));
}

static json_t *diagnostics_json(struct report *rp)
{
	struct kf_session *s = rp->s;
	json_t *d = json_object(), *uw = json_object(), *sym = json_object();
	json_t *src = json_object(), *arr;
	uint64_t fps, fpb;
	size_t i, n;

	put(rp, d, "samples", jint(rp->total.samples));
	put(rp, d, "leaf_named", jbucket(&rp->leaf_named));

	/* unwinding: user stacks by frame pointers and DWARF, kernel chains */
	kf_session_fp_chains(s, &fps, &fpb);
	arr = json_array();
	n = kf_session_n_fp_breaks(s);
	for (i = 0; i < n; i++) {
		kf_fp_break b;

		if (kf_session_fp_break(s, i, &b) == 0)
			append(rp, arr, json_pack("{s:o,s:o}", "module", jstr(rp, b.module),
						  "samples", jint(b.samples)));
	}
	put(rp, uw, "frame_pointer", json_pack("{s:o,s:o,s:o,s:s}",
		"samples", jint(fps), "broken", jint(fpb), "broke_in", arr,
		"hint", kf_diag_fp_hint));
	arr = json_array();
	n = kf_session_n_unwind_stops(s);
	for (i = 0; i < n; i++) {
		kf_unwind_stop us;

		if (kf_session_unwind_stop(s, i, &us) != 0)
			continue;
		append(rp, arr, json_pack("{s:o,s:o,s:o,s:o}", "reason", jstr(rp, us.reason),
					  "module", jstr(rp, us.module),
					  "samples", jint(us.samples), "hint", jstr(rp, us.hint)));
	}
	put(rp, uw, "dwarf", json_pack("{s:o,s:o,s:o,s:o}", "samples",
		jint(s->stats.samples_unwound), "recorded",
		jint(s->stats.samples_dwarf), "frames_guessed",
		jint(s->stats.frames_guessed), "stopped", arr));
	put(rp, uw, "kernel", json_pack("{s:o,s:o,s:s}",
		"truncated", jbucket(&rp->kernel_cut),
		"unwinder_stopped", jbucket(&rp->kernel_stopped),
		"hint", kf_diag_kernel_hint));
	put(rp, d, "unwinding", uw);

	/* symbolization: samples with an unnamed frame, by module */
	if (rp->n_gaps > 1)
		qsort(rp->gaps, rp->n_gaps, sizeof(*rp->gaps), cmp_gaps_unnamed);
	arr = json_array();
	for (i = 0; i < rp->n_gaps && rp->gaps[i].unnamed.samples; i++) {
		const char *why, *hint;

		unnamed_reason(rp, rp->gaps[i].module, &why, &hint);
		append(rp, arr, json_pack("{s:o,s:o,s:o,s:s,s:s}",
			"module", jstr(rp, module_name(rp, rp->gaps[i].module)),
			"samples", jint(rp->gaps[i].unnamed.samples),
			"period", jint(rp->gaps[i].unnamed.period), "why", why, "hint", hint));
	}
	put(rp, sym, "samples_with_unnamed_frames", jbucket(&rp->unnamed));
	put(rp, sym, "by_module", arr);
	put(rp, d, "symbolization", sym);

	/* source lines: frames of modules whose DWARF was not found */
	if (rp->n_gaps > 1)
		qsort(rp->gaps, rp->n_gaps, sizeof(*rp->gaps), cmp_gaps_nolines);
	arr = json_array();
	for (i = 0; i < rp->n_gaps && rp->gaps[i].nolines.samples; i++)
		append(rp, arr, json_pack("{s:o,s:o,s:o,s:o}",
			"module", jstr(rp, module_name(rp, rp->gaps[i].module)),
			"samples", jint(rp->gaps[i].nolines.samples),
			"period", jint(rp->gaps[i].nolines.period),
			"hint", jstr(rp, nolines_hint(rp, rp->gaps[i].module))));
	put(rp, src, "looked_for", json_boolean(s->o.inline_frames || s->o.srcline));
	put(rp, src, "samples_without_lines", jbucket(&rp->nolines));
	put(rp, src, "by_module", arr);
	put(rp, d, "source_lines", src);
	return d;
}

static json_t *totals_json(struct report *rp)
{
	static const char *const names[] = { "user", "on-behalf", "attributed",
					     "idle", "kthread", "unknown" };
	static const uint8_t v[] = {
		KF_CTX_VERDICT_USER, KF_CTX_VERDICT_ON_BEHALF, KF_CTX_VERDICT_ATTRIBUTED,
		KF_CTX_VERDICT_IDLE, KF_CTX_VERDICT_KTHREAD, KF_CTX_VERDICT_UNKNOWN,
	};
	json_t *t = jbucket(&rp->total), *vd = json_object();
	size_t i;

	for (i = 0; i < sizeof(v); i++)
		put(rp, vd, names[i], jbucket(&rp->verdicts[v[i]]));
	put(rp, t, "verdicts", vd);
	put(rp, t, "excluded", jbucket(&rp->excluded));
	put(rp, t, "weight", json_string(rp->s->o.count_samples ? "samples" : "period"));
	return t;
}

static json_t *notes_json(struct report *rp)
{
	const struct kf_attr *a = kf_session_folded_attr(rp->s);
	json_t *arr = json_array();

	if (kf_attr_is_soft_clock(a)) {
		rp->tmp.len = 0;
		kf_buf_printf(&rp->tmp, "event %s %s", rp->s->filter, kf_soft_clock_note);
		append(rp, arr, jstr(rp, kf_buf_cstr(&rp->tmp)));
	}
	if (a && !(a->sample_type & KF_SAMPLE_CALLCHAIN))
		append(rp, arr, json_string("the capture has no call chains (record "
			"with -g): contexts are guessed from the leaf symbol and the task"));
	if (rp->s->stats.lost_samples || rp->s->stats.lost_events)
		append(rp, arr, json_string("the capture lost samples or events "
			"(see capture.lost_*): totals are lower than what ran"));
	if (rp->s->stats.input_damaged)
		append(rp, arr, json_string("part of the input could not be read: "
			"this report covers its readable part"));
	{
		char note[512];

		if (kf_session_unverified_text(rp->s, note, sizeof(note)))
			append(rp, arr, jstr(rp, note));
	}
	return arr;
}

static int finish(struct kf_session *s, struct report *rp, int r, uint64_t w0)
{
	s->stats.work = kf_work_flush(&s->work, w0);
	if (!r)
		r = rp->err;
	report_fini(rp);
	if (r == KF_EINVAL)
		return kf_fail(&s->err, r, "kernel contexts need the capture loaded "
			       "with classify set");
	if (r == KF_EIO)
		return kf_fail(&s->err, r, "writing the output: %s", strerror(errno));
	if (r)
		return kf_fail(&s->err, r, "out of memory");
	return 0;
}

/* One member of the top-level object: `"key": value` (value consumed). */
static int member(struct report *rp, FILE *out, const char *key, json_t *v)
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

int kf_session_write_json(kf_session *s, FILE *out)
{
	uint64_t w0 = kf_work;
	struct report rp;
	int r = gather(s, &rp, true);

	/* written member by member in schema order; the stacks are streamed */
	if (!r && fprintf(out, "{\n \"schema\": \"kfold-report\",\n \"schema_version\": %d,\n"
			  " \"kfold_version\": \"%s\"", SCHEMA_VERSION, kf_version()) < 0)
		r = KF_EIO;
	if (!r)
		r = member(&rp, out, "capture", capture_json(&rp));
	if (!r)
		r = member(&rp, out, "totals", totals_json(&rp));
	if (!r)
		r = member(&rp, out, "processes", processes_json(&rp));
	if (!r)
		r = fputs(",\n \"stacks\": ", out) == EOF ? KF_EIO : write_stacks(&rp, out);
	if (!r)
		r = member(&rp, out, "modules", modules_json(&rp));
	if (!r)
		r = member(&rp, out, "diagnostics", diagnostics_json(&rp));
	if (!r)
		r = member(&rp, out, "notes", notes_json(&rp));
	if (!r && (fputs("\n}\n", out) == EOF || fflush(out) != 0))
		r = KF_EIO;
	if (!r)
		s->stats.stacks = rp.n_lines;
	kf_session_note_unverified(s);
	return finish(s, &rp, r, w0);
}

/* ---- --explain ---------------------------------------------------------------------- */

/* The labels of one verdict over all threads, most period first. */
struct lab {
	uint32_t label;
	struct bucket b;
};

static int cmp_lab(const void *pa, const void *pb)
{
	const struct lab *a = pa, *b = pb;

	if (a->b.period != b->b.period)
		return a->b.period > b->b.period ? -1 : 1;
	return (a->label > b->label) - (a->label < b->label);
}

/* One verdict's line: its share and its most common leaf contexts, from
 * the cells of all threads merged per (verdict, label) (merge_cells). */
static int explain_verdict(struct report *rp, FILE *out, const struct cell *merged,
			   size_t nm, unsigned v, const char *name)
{
	struct lab *labs = kf_calloc(nm + 1, sizeof(*labs));
	const struct bucket *b = &rp->verdicts[v];
	size_t i, n = 0;

	if (!labs)
		return KF_ENOMEM;
	for (i = 0; i < nm; i++) {
		if (merged[i].verdict != v)
			continue;
		labs[n].label = merged[i].label;
		labs[n].b = merged[i].b;
		n++;
	}
	if (n > 1)
		qsort(labs, n, sizeof(*labs), cmp_lab);
	fprintf(out, "  %-11s %12" PRIu64 " samples %6.1f%%", name, b->samples,
		pct(b->period, rp->total.period));
	for (i = 0; i < n && i < 4 && (v == KF_CTX_VERDICT_ON_BEHALF ||
				       v == KF_CTX_VERDICT_ATTRIBUTED ||
				       v == KF_CTX_VERDICT_UNKNOWN); i++)
		fprintf(out, "%s %s %.1f%%", i ? "," : "  ", kf_strtab_get(&rp->labels, labs[i].label),
			pct(labs[i].b.period, rp->total.period));
	if (i < n && i == 4)
		fputs(", ...", out);
	fputc('\n', out);
	free(labs);
	return 0;
}

/* per process: its kernel work on its behalf and attributed to it */
struct pk {
	int32_t pid;
	uint32_t comm;
	struct bucket ob, at;
};

static int cmp_pk(const void *pa, const void *pb)
{
	const struct pk *a = pa, *b = pb;
	uint64_t x = a->ob.period + a->at.period, y = b->ob.period + b->at.period;

	if (x != y)
		return x > y ? -1 : 1;
	return (a->pid > b->pid) - (a->pid < b->pid);
}

/* The processes with the most kernel time (idle and kthreads aside), on
 * behalf vs attributed. */
static int explain_processes(struct report *rp, FILE *out)
{
	struct pk *v = kf_calloc(rp->n_threads + 1, sizeof(*v));
	struct kf_map64 ix;
	size_t i, n = 0;

	if (!v)
		return KF_ENOMEM;
	kf_map64_init(&ix);
	for (i = 0; i < rp->n_cells; i++) {
		const struct cell *c = &rp->cells[i];
		const struct thread *t = &rp->threads[c->thread];
		uint32_t k;

		if (c->verdict != KF_CTX_VERDICT_ON_BEHALF &&
		    c->verdict != KF_CTX_VERDICT_ATTRIBUTED)
			continue;
		if (!kf_map64_get(&ix, (uint32_t)t->pid, &k)) {
			k = (uint32_t)n++;
			v[k].pid = t->pid;
			v[k].comm = t->comm;
			if (!kf_map64_put(&ix, (uint32_t)t->pid, k)) {
				kf_map64_fini(&ix);
				free(v);
				return KF_ENOMEM;
			}
		}
		add(c->verdict == KF_CTX_VERDICT_ON_BEHALF ? &v[k].ob : &v[k].at,
		    c->b.samples, c->b.period);
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_pk);
	if (n)
		fputs("processes with the most kernel time (on behalf / attributed):\n", out);
	for (i = 0; i < n && i < 5; i++)
		fprintf(out, "  %-24s pid %-8d %6.1f%% / %.1f%%\n",
			kf_strtab_get(&rp->labels, v[i].comm), v[i].pid,
			pct(v[i].ob.period, rp->total.period),
			pct(v[i].at.period, rp->total.period));
	kf_map64_fini(&ix);
	free(v);
	return 0;
}

int kf_session_write_explain(kf_session *s, FILE *out)
{
	uint64_t w0 = kf_work;
	struct report rp;
	int r = gather(s, &rp, false);
	const struct kf_attr *a = kf_session_folded_attr(s);
	uint64_t fps = 0, fpb = 0;
	size_t i, k, n;

	if (r)
		return finish(s, &rp, r, w0);
	fprintf(out, "%" PRIu64 " samples of %s in %zu thread%s; where they were "
		"(shares by %s):\n", rp.total.samples, s->filter ? s->filter : "no event",
		rp.n_threads, rp.n_threads == 1 ? "" : "s",
		s->o.count_samples ? "samples" : "period");
	{
		static const struct { uint8_t v; const char *name; } rows[] = {
			{ KF_CTX_VERDICT_USER, "user" },
			{ KF_CTX_VERDICT_ON_BEHALF, "on-behalf" },
			{ KF_CTX_VERDICT_ATTRIBUTED, "attributed" },
			{ KF_CTX_VERDICT_IDLE, "idle" },
			{ KF_CTX_VERDICT_KTHREAD, "kthread" },
			{ KF_CTX_VERDICT_UNKNOWN, "unknown" },
		};
		struct cell *merged = kf_calloc(rp.n_cells + 1, sizeof(*merged));
		size_t nm = merged ? merge_cells(&rp, rp.cells, rp.n_cells, merged) : 0;

		r = merged ? 0 : KF_ENOMEM;
		for (i = 0; i < sizeof(rows) / sizeof(rows[0]) && !r; i++)
			r = explain_verdict(&rp, out, merged, nm, rows[i].v, rows[i].name);
		free(merged);
	}
	if (r)
		return finish(s, &rp, r, w0);
	fputs("  (on-behalf: the task's own syscalls, faults and traps; attributed: "
	      "interrupts, softirqs\n   and preemption that only happened while it was "
	      "running)\n", out);
	if (rp.excluded.samples)
		fprintf(out, "  left out by --exclude: %" PRIu64 " samples\n",
			rp.excluded.samples);
	if ((r = explain_processes(&rp, out)))
		return finish(s, &rp, r, w0);
	if (kf_attr_is_soft_clock(a))
		fprintf(out, "note: %s %s.\n", s->filter, kf_soft_clock_note);
	if (a && !(a->sample_type & KF_SAMPLE_CALLCHAIN))
		fputs("note: no call chains (record with -g): contexts are guessed from "
		      "the leaf symbol.\n", out);

	fprintf(out, "stacks: leaf named in %" PRIu64 " of %" PRIu64 " samples (%.1f%%)\n",
		rp.leaf_named.samples, rp.total.samples,
		pct(rp.leaf_named.samples, rp.total.samples));
	kf_session_fp_chains(s, &fps, &fpb);
	if (fpb) {
		kf_fp_break b;

		fprintf(out, "  unwinding: %" PRIu64 " of %" PRIu64 " frame-pointer stacks "
			"stop before the program's entry", fpb, fps);
		if (kf_session_fp_break(s, 0, &b) == 0)
			fprintf(out, ", most in %s (%" PRIu64 ")", b.module, b.samples);
		fprintf(out, "; %s\n", kf_diag_fp_hint_explain);
	}
	/* DWARF unwinding: the ends that lost frames (they come with a hint;
	 * reaching the outermost frame does not) */
	n = kf_session_n_unwind_stops(s);
	for (i = 0, k = 0; i < n && k < 3; i++) {
		kf_unwind_stop us;

		if (kf_session_unwind_stop(s, i, &us) != 0 || !us.hint[0])
			continue;
		fprintf(out, "  unwinding: %" PRIu64 " samples: %s%s%s; %s\n", us.samples,
			us.reason, us.module[0] ? " in " : "", us.module, us.hint);
		k++;
	}
	if (rp.kernel_cut.samples || rp.kernel_stopped.samples)
		fprintf(out, "  kernel chains: %" PRIu64 " cut at the stack limit, %" PRIu64
			" stopped by the kernel's unwinder\n", rp.kernel_cut.samples,
			rp.kernel_stopped.samples);
	if (rp.n_gaps > 1)
		qsort(rp.gaps, rp.n_gaps, sizeof(*rp.gaps), cmp_gaps_unnamed);
	if (rp.unnamed.samples)
		fprintf(out, "  symbols: %" PRIu64 " samples have an unnamed frame\n",
			rp.unnamed.samples);
	for (i = 0; i < rp.n_gaps && i < 5 && rp.gaps[i].unnamed.samples; i++) {
		const char *why, *hint;

		unnamed_reason(&rp, rp.gaps[i].module, &why, &hint);
		fprintf(out, "    %10" PRIu64 "  %s: %s; %s\n", rp.gaps[i].unnamed.samples,
			module_name(&rp, rp.gaps[i].module), why, hint);
	}
	{
		char note[512];

		if (kf_session_unverified_text(s, note, sizeof(note)))
			fprintf(out, "  symbols: %s\n", note);
	}
	if (rp.n_gaps > 1)
		qsort(rp.gaps, rp.n_gaps, sizeof(*rp.gaps), cmp_gaps_nolines);
	if (rp.nolines.samples)
		fprintf(out, "  source lines: %" PRIu64 " samples have a frame without "
			"debug info (no inline frames or lines there)\n", rp.nolines.samples);
	for (i = 0; i < rp.n_gaps && i < 5 && rp.gaps[i].nolines.samples; i++)
		fprintf(out, "    %10" PRIu64 "  %s: %s\n", rp.gaps[i].nolines.samples,
			module_name(&rp, rp.gaps[i].module), nolines_hint(&rp, rp.gaps[i].module));
	if (fflush(out) != 0 || ferror(out))
		r = KF_EIO;
	kf_session_note_unverified(s);
	return finish(s, &rp, r, w0);
}
