/* gather.c - the sums behind the JSON report and --explain (gather.h).
 *
 * The maps below are keyed by a 64-bit hash of what an entry is, not by
 * the entry: a thread, cell or line is a few ids, and a hash of them is
 * one probe per stack (never per sample).
 */
#include "gather.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

void kf_bucket_add(struct kf_bucket *b, uint64_t samples, uint64_t period)
{
	b->samples = samples > UINT64_MAX - b->samples ? UINT64_MAX : b->samples + samples;
	b->period = period > UINT64_MAX - b->period ? UINT64_MAX : b->period + period;
}

static uint64_t key3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = kf_hash64(a * 0x9e3779b97f4a7c15u ^ kf_hash64(b ^ kf_hash64(c)));

	return h == UINT64_MAX ? 0 : h;
}

static int intern(struct kf_strtab *t, const char *p, size_t n, uint32_t *id)
{
	return kf_strtab_intern(t, p, n, id) ? 0 : KF_ENOMEM;
}

/* Two different entries with the same hash take the keys after it.
 * find() returns the index of the entry under *key that same() accepts,
 * or false with *key the first free key for a new one. */
typedef bool (*same_fn)(const struct kf_gather *g, uint32_t i, const void *want);

static bool find(const struct kf_gather *g, const struct kf_map64 *m, uint64_t *key,
		 same_fn same, const void *want, uint32_t *out)
{
	uint32_t i;

	while (kf_map64_get(m, *key, &i)) {
		if (same(g, i, want)) {
			*out = i;
			return true;
		}
		*key = *key == UINT64_MAX - 1 ? 0 : *key + 1;
	}
	return false;
}

static bool same_thread(const struct kf_gather *g, uint32_t i, const void *want)
{
	const struct kf_gather_thread *a = &g->threads[i], *b = want;

	return a->pid == b->pid && a->tid == b->tid;
}

static bool same_cell(const struct kf_gather *g, uint32_t i, const void *want)
{
	const struct kf_gather_cell *a = &g->cells[i], *b = want;

	return a->thread == b->thread && a->verdict == b->verdict && a->label == b->label;
}

static bool same_line(const struct kf_gather *g, uint32_t i, const void *want)
{
	const struct kf_gather_line *a = &g->lines[i], *b = want;

	return a->text == b->text && a->leaf == b->leaf && a->base == b->base &&
	       a->via == b->via && a->verdict == b->verdict && a->why == b->why &&
	       a->guess == b->guess;
}

/* The entries below are found by key, or appended with what `want` is
 * and an empty sum; then the caller's sum is added.  The walk adds one
 * stack at a time, the merge of two walks a whole entry. */

/* Thread want (pid, tid; its root if new) plus its total: its index. */
static int add_thread(struct kf_gather *g, const struct kf_gather_thread *want, uint32_t *out)
{
	uint64_t key = key3((uint32_t)want->pid, (uint32_t)want->tid, 1);

	if (!find(g, &g->thread_ix, &key, same_thread, want, out)) {
		if (!KF_GROW(g->threads, g->cap_threads, g->n_threads + 1) ||
		    !kf_map64_put(&g->thread_ix, key, (uint32_t)g->n_threads))
			return KF_ENOMEM;
		*out = (uint32_t)g->n_threads++;
		g->threads[*out] = *want;
		memset(&g->threads[*out].total, 0, sizeof(want->total));
	}
	kf_bucket_add(&g->threads[*out].total, want->total.samples, want->total.period);
	return 0;
}

static int add_cell(struct kf_gather *g, const struct kf_gather_cell *want)
{
	uint64_t key = key3(want->thread, want->verdict, want->label);
	uint32_t i;

	if (!find(g, &g->cell_ix, &key, same_cell, want, &i)) {
		if (!KF_GROW(g->cells, g->cap_cells, g->n_cells + 1) ||
		    !kf_map64_put(&g->cell_ix, key, (uint32_t)g->n_cells))
			return KF_ENOMEM;
		i = (uint32_t)g->n_cells++;
		g->cells[i] = *want;
		memset(&g->cells[i].b, 0, sizeof(want->b));
	}
	kf_bucket_add(&g->cells[i].b, want->b.samples, want->b.period);
	return 0;
}

/* Line want plus its sum; its node becomes the line's if it has more
 * samples than the line's (the first of equals stays: the older). */
static int add_line_entry(struct kf_gather *g, const struct kf_gather_line *want)
{
	uint64_t key = key3(want->text, (uint64_t)want->leaf << 8 | want->verdict,
			    (uint64_t)want->base << 32 | want->via);
	uint32_t i;

	if (!find(g, &g->line_ix, &key, same_line, want, &i)) {
		if (!KF_GROW(g->lines, g->cap_lines, g->n_lines + 1) ||
		    !kf_map64_put(&g->line_ix, key, (uint32_t)g->n_lines))
			return KF_ENOMEM;
		i = (uint32_t)g->n_lines++;
		g->lines[i] = *want;
		memset(&g->lines[i].b, 0, sizeof(want->b));
	} else if (want->node_samples > g->lines[i].node_samples) {
		g->lines[i].node = want->node;
		g->lines[i].node_samples = want->node_samples;
	}
	kf_bucket_add(&g->lines[i].b, want->b.samples, want->b.period);
	return 0;
}

static struct kf_gather_gap *gap_of(struct kf_gather *g, uint32_t module)
{
	uint64_t key = module;   /* 32 bits: never the map's empty key */
	uint32_t i;

	if (kf_map64_get(&g->gap_ix, key, &i))
		return &g->gaps[i];
	if (!KF_GROW(g->gaps, g->cap_gaps, g->n_gaps + 1))
		return NULL;
	i = (uint32_t)g->n_gaps;
	memset(&g->gaps[i], 0, sizeof(g->gaps[i]));
	g->gaps[i].module = module;
	if (!kf_map64_put(&g->gap_ix, key, i))
		return NULL;
	g->n_gaps++;
	return &g->gaps[i];
}

/* Charges a stack's samples (b) to module's unnamed or no-lines count,
 * once per stack: seen[0..*n) are the modules charged so far (at most 8
 * are remembered; a stack through more is not charged to the others). */
static int charge(struct kf_gather *g, uint32_t *seen, size_t *n, uint32_t mod,
		  bool nolines, const struct kf_bucket *b)
{
	struct kf_gather_gap *gap;
	size_t k;

	for (k = 0; k < *n; k++)
		if (seen[k] == mod)
			return 0;
	if (*n == 8)
		return 0;
	if (!(gap = gap_of(g, mod)))
		return KF_ENOMEM;
	kf_bucket_add(nolines ? &gap->nolines : &gap->unnamed, b->samples, b->period);
	seen[(*n)++] = mod;
	return 0;
}

/* Whether module mod's frames count as without source lines: its debug
 * info was looked for and not found, and naming asked for it (as before
 * the load step existed: the load step's notes). */
static bool no_lines(const struct kf_gather *g, uint32_t mod)
{
	bool looked = false;

	return mod && !kf_dso_debuginfo_file(g->dsos, mod, &looked) && looked &&
	       g->namer && kf_namer_asked_debuginfo(g->namer, mod);
}

/* The list at *at of the modules mod_list[0..n): an offset in g->mods,
 * each distinct list stored once. */
static int intern_mods(struct kf_gather *g, size_t n, uint32_t *at)
{
	uint64_t h = kf_hash64(n + 1), key;
	size_t i;
	uint32_t k;

	for (i = 0; i < n; i++)
		h = kf_hash64(h ^ g->mod_list[i]);
	key = h == UINT64_MAX ? 0 : h;
	while (kf_map64_get(&g->mods_ix, key, &k)) {
		if (g->mods[k] == n &&
		    memcmp(&g->mods[k + 1], g->mod_list, n * sizeof(*g->mods)) == 0) {
			*at = k;
			return 0;
		}
		key = key == UINT64_MAX - 1 ? 0 : key + 1;
	}
	if (g->n_mods + n + 1 > UINT32_MAX ||
	    !KF_GROW(g->mods, g->cap_mods, g->n_mods + n + 1) ||
	    !kf_map64_put(&g->mods_ix, key, (uint32_t)g->n_mods))
		return KF_ENOMEM;
	*at = (uint32_t)g->n_mods;
	g->mods[g->n_mods++] = (uint32_t)n;
	if (n)
		memcpy(&g->mods[g->n_mods], g->mod_list, n * sizeof(*g->mods));
	g->n_mods += n;
	return 0;
}

/* Where this stack's attribution chain broke: frames without a name, and
 * frames of modules whose debug info was looked for and not found.  With
 * g->defer the second waits for kf_gather_finish: *mods is then the list
 * of the stack's modules, in the order its frames first meet them. */
static int stack_gaps(struct kf_gather *g, const struct kf_ctx_stack *cs, uint32_t *mods)
{
	const struct kf_bucket b = { cs->samples, cs->weight };
	uint32_t seen_u[8], seen_l[8];
	size_t nu = 0, nl = 0, nm = 0, i, k;
	int r = 0;

	if (g->defer && !KF_GROW(g->mod_list, g->cap_mod_list, cs->n_path))
		return KF_ENOMEM;
	for (i = 1; i < cs->n_path && !r; i++) {
		uint32_t mod = cs->mods[i];

		if (mod == KF_CTX_MOD_CUT)
			continue;
		if (!cs->syms[i])
			r = charge(g, seen_u, &nu, mod, false, &b);
		if (!mod)
			continue;
		if (!g->defer) {
			if (!r && no_lines(g, mod))
				r = charge(g, seen_l, &nl, mod, true, &b);
			continue;
		}
		for (k = 0; k < nm && g->mod_list[k] != mod; k++)
			;
		if (k == nm)
			g->mod_list[nm++] = mod;
	}
	if (nu)
		kf_bucket_add(&g->unnamed, cs->samples, cs->weight);
	if (nl)
		kf_bucket_add(&g->nolines, cs->samples, cs->weight);
	return r || !g->defer ? r : intern_mods(g, nm, mods);
}

static int label_id(struct kf_gather *g, const struct kf_ctx_level *l, uint32_t *id)
{
	g->tmp.len = 0;
	kf_ctx_label(l, true, &g->tmp);
	if (g->tmp.oom)
		return KF_ENOMEM;
	return intern(&g->labels, kf_buf_cstr(&g->tmp), g->tmp.len, id);
}

static bool same_combo(const struct kf_gather *g, uint32_t i, const void *want)
{
	const struct kf_gather_combo *a = &g->combos[i], *b = want;

	return a->leaf == b->leaf && a->base == b->base && a->via == b->via &&
	       a->verdict == b->verdict && a->why == b->why && a->guess == b->guess;
}

/* With g->defer: what kf_gather_finish needs of the stack cs, whose
 * leaf and base labels are leaf and base, and whose modules are mods. */
static int add_rec(struct kf_gather *g, const struct kf_ctx_stack *cs, uint32_t leaf,
		   uint32_t base, uint32_t mods)
{
	const struct kf_ctx *c = cs->ctx;
	const char *v = kf_ctx_via_name(c->leaf.via);
	struct kf_gather_combo want;
	uint64_t key;
	uint32_t i;
	int r;

	memset(&want, 0, sizeof(want));
	if ((r = intern(&g->labels, v, strlen(v), &want.via)))
		return r;
	want.leaf = leaf;
	want.base = base;
	want.verdict = c->verdict;
	want.why = c->why;
	want.guess = c->guess;
	key = key3((uint64_t)leaf << 32 | base, want.via,
		   (uint64_t)want.verdict << 16 | (uint64_t)want.why << 8 | want.guess);
	if (!find(g, &g->combo_ix, &key, same_combo, &want, &i)) {
		if (!KF_GROW(g->combos, g->cap_combos, g->n_combos + 1) ||
		    !kf_map64_put(&g->combo_ix, key, (uint32_t)g->n_combos))
			return KF_ENOMEM;
		i = (uint32_t)g->n_combos++;
		g->combos[i] = want;
	}
	if (!KF_GROW(g->recs, g->cap_recs, g->n_recs + 1))
		return KF_ENOMEM;
	g->recs[g->n_recs++] = (struct kf_gather_rec){ cs->node, i, mods,
							{ cs->samples, cs->weight } };
	return 0;
}

/* Thread (pid, tid, whose first sample had root `root`) gets samples
 * and weight, and so does its cell of (verdict, label). */
static int thread_cell(struct kf_gather *g, int32_t pid, int32_t tid, uint32_t root,
		       uint64_t samples, uint64_t weight, uint8_t verdict, uint32_t label)
{
	const struct kf_gather_thread want = { pid, tid, root, { samples, weight } };
	struct kf_gather_cell cell;
	uint32_t th;
	int r;

	if ((r = add_thread(g, &want, &th)))
		return r;
	cell = (struct kf_gather_cell){ th, label, verdict, { samples, weight } };
	return add_cell(g, &cell);
}

static int visit(void *payload, const struct kf_ctx_stack *cs)
{
	struct kf_gather *g = payload;
	const struct kf_ctx *c = cs->ctx;
	uint32_t leaf, base, label, mods = 0;
	const char *why;
	size_t k;
	int r;

	if (g->exclude & (1u << c->verdict)) {
		kf_bucket_add(&g->excluded, cs->samples, cs->weight);
		return 0;
	}
	kf_bucket_add(&g->total, cs->samples, cs->weight);
	kf_bucket_add(&g->verdicts[c->verdict], cs->samples, cs->weight);
	if (cs->n_path > 1 && cs->syms[cs->n_path - 1])
		kf_bucket_add(&g->leaf_named, cs->samples, cs->weight);
	if (c->why == KF_CTX_WHY_TRUNCATED)
		kf_bucket_add(&g->kernel_cut, cs->samples, cs->weight);
	else if (c->why == KF_CTX_WHY_UNWIND_STOPPED)
		kf_bucket_add(&g->kernel_stopped, cs->samples, cs->weight);
	if ((r = label_id(g, &c->leaf, &leaf)) || (r = label_id(g, &c->base, &base)))
		return r;
	why = c->why ? kf_ctx_why_name(c->why) : "no_rule";
	if (c->verdict == KF_CTX_VERDICT_UNKNOWN)
		r = intern(&g->labels, why, strlen(why), &label);
	else
		label = leaf;
	/* each thread's share: the root's thread, or each of the node's
	 * threads with its own sums */
	if (!r && !cs->ts)
		r = thread_cell(g, cs->pid, cs->tid, g->st->nodes[cs->path[0]].frame.root,
				cs->samples, cs->weight, c->verdict, label);
	for (k = 0; k < cs->n_threads && !r; k++) {
		const struct kf_tsum *e = &cs->threads[k];
		const struct kf_tsum_thread *t = &cs->ts->threads[e->thread];

		r = thread_cell(g, t->pid, t->tid, t->root, e->samples, e->weight,
				c->verdict, label);
	}
	if (r || (r = stack_gaps(g, cs, &mods)))
		return r;
	return g->defer ? add_rec(g, cs, leaf, base, mods) : 0;
}

static int gather_init(struct kf_gather *g, const struct kf_stacks *st,
		       const struct kf_roots *roots, struct kf_namer *namer,
		       struct kf_dsos *dsos, unsigned exclude)
{
	memset(g, 0, sizeof(*g));
	g->st = st;
	g->roots = roots;
	g->dsos = dsos;
	g->namer = namer;
	g->exclude = exclude;
	kf_buf_init(&g->tmp);
	kf_map64_init(&g->thread_ix);
	kf_map64_init(&g->cell_ix);
	kf_map64_init(&g->line_ix);
	kf_map64_init(&g->gap_ix);
	kf_map64_init(&g->combo_ix);
	kf_map64_init(&g->mods_ix);
	return kf_strtab_init(&g->labels) ? 0 : KF_ENOMEM;
}

/* ---- two walks, merged ----------------------------------------------------------
 *
 * With jobs > 1 the nodes are cut in two ranges of about as many stacks,
 * each gathered on a thread of its own; the second range's sums are then
 * added to the first's.  Entries new in the second range are appended in
 * its own order, and its labels interned in theirs first, so every index
 * and id is the one a single walk in node order gives: the same output. */

/* h's label id as g's, from lmap (h's id -> g's). */
static uint32_t label_in(const struct kf_map64 *lmap, uint32_t id)
{
	uint32_t out = 0;

	if (id)
		kf_map64_get(lmap, id, &out);
	return out;
}

static int merge(struct kf_gather *g, const struct kf_gather *h)
{
	uint32_t *tmap = kf_calloc(h->n_threads ? h->n_threads : 1, sizeof(*tmap));
	struct kf_map64 lmap;
	size_t off, i;
	unsigned v;
	int r = 0;

	kf_map64_init(&lmap);
	if (!tmap)
		return KF_ENOMEM;
	/* h's labels in the order h made them (the table's strings lie in
	 * insertion order after its "" at offset 0) */
	for (off = 1; off < h->labels.len && !r; off += strlen(h->labels.buf + off) + 1) {
		uint32_t id;

		if ((r = intern(&g->labels, h->labels.buf + off, strlen(h->labels.buf + off), &id)))
			break;
		if (!kf_map64_put(&lmap, off, id))
			r = KF_ENOMEM;
	}
	for (i = 0; i < h->n_threads && !r; i++)
		r = add_thread(g, &h->threads[i], &tmap[i]);
	for (i = 0; i < h->n_cells && !r; i++) {
		struct kf_gather_cell want = h->cells[i];

		want.thread = tmap[want.thread];
		want.label = label_in(&lmap, want.label);
		r = add_cell(g, &want);
	}
	for (i = 0; i < h->n_gaps && !r; i++) {
		struct kf_gather_gap *gap = gap_of(g, h->gaps[i].module);

		if (!gap) {
			r = KF_ENOMEM;
			break;
		}
		kf_bucket_add(&gap->unnamed, h->gaps[i].unnamed.samples, h->gaps[i].unnamed.period);
		kf_bucket_add(&gap->nolines, h->gaps[i].nolines.samples, h->gaps[i].nolines.period);
	}
	for (v = 0; v < KF_CTX_NVERDICTS; v++)
		kf_bucket_add(&g->verdicts[v], h->verdicts[v].samples, h->verdicts[v].period);
	kf_bucket_add(&g->total, h->total.samples, h->total.period);
	kf_bucket_add(&g->excluded, h->excluded.samples, h->excluded.period);
	kf_bucket_add(&g->leaf_named, h->leaf_named.samples, h->leaf_named.period);
	kf_bucket_add(&g->kernel_cut, h->kernel_cut.samples, h->kernel_cut.period);
	kf_bucket_add(&g->kernel_stopped, h->kernel_stopped.samples, h->kernel_stopped.period);
	kf_bucket_add(&g->unnamed, h->unnamed.samples, h->unnamed.period);
	kf_bucket_add(&g->nolines, h->nolines.samples, h->nolines.period);
	free(tmap);
	kf_map64_fini(&lmap);
	return r;
}

/* A walk into g on a thread of its own: of nodes [from, to) with p, or,
 * with `whole`, all of g's (walk_all). */
struct kf_gather_half {
	struct kf_gather *g;
	const struct kf_ctx_prep *p;
	size_t from, to;
	bool whole;
	struct kf_work_total *work;  /* gets the thread's work */
	pthread_t th;
	int r;
};

static int walk_all(struct kf_gather *g);

static void *walk_half(void *arg)
{
	struct kf_gather_half *h = arg;
	uint64_t w0 = kf_work;

	h->r = h->whole ? walk_all(h->g) : kf_ctx_walk_range(h->p, h->from, h->to, visit, h->g);
	if (h->work)
		kf_work_flush(h->work, w0);
	return NULL;
}

/* Where to cut st's nodes: about half the stacks on each side; 0 when
 * there are too few to be worth a thread (a thread costs tens of
 * microseconds: the committed captures, of a few hundred stacks, take
 * the two-thread path too, which jobs.sh checks against one). */
static size_t cut_point(const struct kf_stacks *st)
{
	size_t i, n = 0, acc = 0;

	for (i = 1; i < st->n; i++)
		n += st->nodes[i].samples || st->nodes[i].weight;
	if (n < 64)
		return 0;
	for (i = 1; i < st->n; i++) {
		acc += st->nodes[i].samples || st->nodes[i].weight;
		if (acc * 2 >= n)
			return i + 1;
	}
	return 0;
}

/* (the preparation is not needed after the walk: freed at once) */
static void drop_prep(struct kf_gather *g)
{
	kf_ctx_prep_free(g->prep);
	g->prep = NULL;
}

/* (begin: after gather_init, what kf_gather_run and kf_gather_prepare
 * share) */
static int begin(struct kf_gather *g, const struct kf_stacks *st,
		 const struct kf_roots *roots, const struct kf_tsums *ts,
		 struct kf_namer *namer, const struct kf_ctx_rules *rules,
		 struct kf_dsos *dsos, unsigned exclude, bool defer)
{
	int r;

	if ((r = gather_init(g, st, roots, namer, dsos, exclude)))
		return r;
	if (!rules)
		return KF_EINVAL;
	g->defer = defer;
	if (!namer || (r = kf_ctx_prepare_begin(&g->prep, st, roots, namer, rules)))
		return r;
	if (ts)
		kf_ctx_prepare_threads(g->prep, ts);
	return 0;
}

int kf_gather_run(struct kf_gather *g, const struct kf_stacks *st,
		  const struct kf_roots *roots, const struct kf_tsums *ts,
		  struct kf_namer *namer, const struct kf_ctx_rules *rules,
		  struct kf_dsos *dsos, unsigned exclude, unsigned jobs,
		  struct kf_work_total *work)
{
	struct kf_gather_half second;
	struct kf_gather h;
	size_t cut;
	int r;

	if ((r = begin(g, st, roots, ts, namer, rules, dsos, exclude, false)) || !g->prep)
		return r;
	kf_ctx_prepare_nodes(g->prep);
	cut = jobs > 1 ? cut_point(st) : 0;
	if (cut && gather_init(&h, st, roots, namer, dsos, exclude) == 0) {
		second = (struct kf_gather_half){ .g = &h, .p = g->prep, .from = cut, .to = st->n,
						  .work = work };
		if (pthread_create(&second.th, NULL, walk_half, &second) == 0) {
			r = kf_ctx_walk_range(g->prep, 1, cut, visit, g);
			pthread_join(second.th, NULL);
			if (!r)
				r = second.r;
			if (!r)
				r = merge(g, &h);
			kf_gather_fini(&h);
			drop_prep(g);
			return r;
		}
	}
	if (cut)
		kf_gather_fini(&h);
	r = kf_ctx_walk_range(g->prep, 1, st->n, visit, g);
	drop_prep(g);
	return r;
}

int kf_gather_prepare(struct kf_gather *g, const struct kf_stacks *st,
		      const struct kf_roots *roots, const struct kf_tsums *ts,
		      struct kf_namer *namer, const struct kf_ctx_rules *rules,
		      struct kf_dsos *dsos, unsigned exclude)
{
	return begin(g, st, roots, ts, namer, rules, dsos, exclude, true);
}

static int walk_all(struct kf_gather *g)
{
	int r = 0;

	if (g->prep) {
		kf_ctx_prepare_nodes(g->prep);
		r = kf_ctx_walk_range(g->prep, 1, g->st->n, visit, g);
	}
	drop_prep(g);
	return r;
}

int kf_gather_walk_start(struct kf_gather *g, unsigned jobs, struct kf_work_total *work)
{
	struct kf_gather_half *h;

	if (jobs > 1 && g->prep && (h = kf_calloc(1, sizeof(*h))) != NULL) {
		*h = (struct kf_gather_half){ .g = g, .whole = true, .work = work };
		if (pthread_create(&h->th, NULL, walk_half, h) == 0) {
			g->bg = h;
			return 0;
		}
		free(h);
	}
	return walk_all(g);
}

int kf_gather_walk_join(struct kf_gather *g)
{
	int r = 0;

	if (g->bg) {
		pthread_join(g->bg->th, NULL);
		r = g->bg->r;
		free(g->bg);
		g->bg = NULL;
	}
	return r;
}

int kf_gather_finish(struct kf_gather *g, kf_gather_line_fn line_fn, void *line_arg)
{
	uint8_t *nol = NULL;     /* per module: 0 not asked yet, 1 no, 2 yes */
	size_t cap_nol = 0, i, k;
	int r = 0;

	for (i = 0; i < g->n_recs && !r; i++) {
		const struct kf_gather_rec *rc = &g->recs[i];
		const struct kf_bucket b = rc->b;
		const uint32_t *mods = &g->mods[rc->mods + 1];
		uint32_t seen[8];
		size_t n = 0;

		KF_WORK(1);
		if (line_fn) {
			const struct kf_gather_combo *c = &g->combos[rc->combo];
			struct kf_gather_line want;

			memset(&want, 0, sizeof(want));
			if ((r = line_fn(line_arg, rc->node, &want.text)))
				break;
			want.leaf = c->leaf;
			want.base = c->base;
			want.via = c->via;
			want.verdict = c->verdict;
			want.why = c->why;
			want.guess = c->guess;
			want.node = rc->node;
			want.node_samples = b.samples;
			want.b = b;
			if ((r = add_line_entry(g, &want)))
				break;
		}
		for (k = 0; k < g->mods[rc->mods] && !r; k++) {
			uint32_t m = mods[k];

			if (m >= cap_nol) {
				size_t old = cap_nol;

				if (!KF_GROW(nol, cap_nol, (size_t)m + 1)) {
					r = KF_ENOMEM;
					break;
				}
				memset(nol + old, 0, cap_nol - old);
			}
			if (!nol[m])
				nol[m] = no_lines(g, m) ? 2 : 1;
			if (nol[m] == 2)
				r = charge(g, seen, &n, m, true, &b);
		}
		if (n)
			kf_bucket_add(&g->nolines, b.samples, b.period);
	}
	free(nol);
	return r;
}

void kf_gather_fini(struct kf_gather *g)
{
	kf_gather_walk_join(g);
	kf_ctx_prep_free(g->prep);
	kf_strtab_fini(&g->labels);
	kf_buf_fini(&g->tmp);
	kf_map64_fini(&g->thread_ix);
	kf_map64_fini(&g->cell_ix);
	kf_map64_fini(&g->line_ix);
	kf_map64_fini(&g->gap_ix);
	kf_map64_fini(&g->combo_ix);
	kf_map64_fini(&g->mods_ix);
	free(g->threads);
	free(g->cells);
	free(g->lines);
	free(g->gaps);
	free(g->recs);
	free(g->combos);
	free(g->mods);
	free(g->mod_list);
}
