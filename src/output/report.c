/* report.c - what the JSON report and --explain share (report.h): the
 * gather, with the folded line of each stack as its key, and the texts
 * both print for modules, threads and shares.
 */
#include "report.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "diagnose.h"

/* The folded line of a stack is its root's text, then ";" and the text
 * of each node below the root whose text is not "" (folded.c).  Split at
 * every ';' (empty pieces too), the lines form a trie of pieces
 * (lines.h), built once per node in node order (parents first) before
 * the walk; a stack's line is then one lookup, and no line's string is
 * made. */

/* Appends to piece_ids the count, then the ids, of the ';'-separated
 * pieces of s[0..n) (an empty string is one empty piece): *k, where. */
static int split(struct kf_report *rp, const char *s, size_t n, uint32_t *k)
{
	size_t a = 0, b;
	uint32_t id;

	/* at most n + 2 entries: ids stay 32-bit */
	if (n >= UINT32_MAX || rp->n_piece_ids + n + 2 > UINT32_MAX ||
	    !KF_GROW(rp->piece_ids, rp->cap_piece_ids, rp->n_piece_ids + 1))
		return KF_ENOMEM;
	*k = (uint32_t)rp->n_piece_ids++;
	rp->piece_ids[*k] = 0;
	for (;;) {
		for (b = a; b < n && s[b] != ';'; b++)
			;
		if (kf_lines_piece(&rp->lines, s + a, b - a, &id) ||
		    !KF_GROW(rp->piece_ids, rp->cap_piece_ids, rp->n_piece_ids + 1))
			return KF_ENOMEM;
		rp->piece_ids[rp->n_piece_ids++] = id;
		rp->piece_ids[*k]++;
		if (b == n)
			return 0;
		a = b + 1;
	}
}

/* Extends *at by the pieces split() put at k. */
static int extend_by(struct kf_report *rp, uint32_t k, uint32_t *at)
{
	uint32_t i;
	int r;

	for (i = 0; i < rp->piece_ids[k]; i++)
		if ((r = kf_lines_extend(&rp->lines, *at, rp->piece_ids[k + 1 + i], at)))
			return r;
	return 0;
}

/* Extends *at by the pieces of a root's text s[0..n), split each time
 * (a root is one node of its own). */
static int extend_text(struct kf_report *rp, const char *s, size_t n, uint32_t *at)
{
	uint32_t k;
	int r = split(rp, s, n, &k);

	if (!r)
		r = extend_by(rp, k, at);
	rp->n_piece_ids = k;   /* not kept */
	return r;
}

/* Where piece_ids holds frame text t's pieces, split once per distinct
 * text; false on ENOMEM. */
static bool pieces_of(struct kf_report *rp, uint32_t t, uint32_t *k)
{
	const char *s;

	if (t < rp->cap_piece_at && rp->piece_at[t]) {
		*k = rp->piece_at[t] - 1;
		return true;
	}
	s = kf_strtab_get(&rp->in->texts->texts, t);
	if (split(rp, s, strlen(s), k) ||
	    !kf_grow_zeroed((void **)&rp->piece_at, &rp->cap_piece_at, (size_t)t + 1,
			    sizeof(*rp->piece_at)))
		return false;
	rp->piece_at[t] = *k + 1;
	return true;
}

/* Every node's text (naming every frame before the walk, so that what
 * the walk reads of the naming, such as which modules' debug info was
 * asked for, is the same for every stack) and line node. */
static int build_lines(struct kf_report *rp)
{
	const struct kf_report_in *in = rp->in;
	const struct kf_stacks *st = in->stacks;
	size_t n = st->n ? st->n : 1, i;
	uint32_t *text = kf_fold_name_array(in->texts, st);   /* per node: its text id */
	int r = KF_ENOMEM;

	rp->node_line = kf_calloc(n, sizeof(*rp->node_line));
	rp->node_entry = kf_calloc(n, sizeof(*rp->node_entry));
	if (!text || !rp->node_line || !rp->node_entry || (r = kf_lines_init(&rp->lines)))
		goto out;
	if ((r = kf_fold_name_nodes(in->texts, st, in->roots, in->comms, in->jobs, in->work,
				      text, rp->node_entry)))
		goto out;
	for (i = 1; i < st->n && !r; i++) {
		const struct kf_node *nd = &st->nodes[i];
		uint32_t at = 0, k;

		if (!nd->parent) {
			rp->lt_text.len = 0;
			kf_fold_root(in->fold, in->comms, kf_roots_get(in->roots, nd->frame.root),
				     &rp->lt_text);
			r = rp->lt_text.oom ? KF_ENOMEM :
			    extend_text(rp, rp->lt_text.p ? rp->lt_text.p : "", rp->lt_text.len,
					&at);
		} else {
			at = rp->node_line[nd->parent];
			if (text[i])
				r = pieces_of(rp, text[i], &k) ? extend_by(rp, k, &at) : KF_ENOMEM;
		}
		rp->node_line[i] = at;
		if (nd->samples || nd->weight)
			kf_lines_mark(&rp->lines, at);
	}
out:
	kf_fold_name_array_free(in->texts, text);
	return r;
}

/* The folded line of a stack: its line node (made by build_lines; ranked
 * beside, so its rank is not read here). */
static int line_text(void *arg, uint32_t node, uint32_t *id)
{
	const struct kf_report *rp = arg;
	uint32_t at = rp->node_line[node];

	if (!at)
		return KF_EINVAL;   /* never: every node has a line */
	*id = at;
	return 0;
}

struct ranking {
	struct kf_lines *lines;
	struct kf_work_total *work;
	int r;
};

static void *rank_main(void *arg)
{
	struct ranking *rk = arg;
	uint64_t w0 = kf_work;

	rk->r = kf_lines_rank(rk->lines);
	if (rk->work)
		kf_work_flush(rk->work, w0);
	return NULL;
}

/* With lines, the stacks are walked (on a second thread with jobs > 1)
 * while the frames are named and the lines made: the walk reads the namer
 * only by lookups that then only read (gather.h), the naming nothing the
 * walk writes.  Then each stack joins its line while the lines are
 * ranked (on a thread of its own with jobs > 1: the ranking writes only
 * the lines' ranks, which nothing before kf_report_json reads). */
int kf_report_gather(struct kf_report *rp, const struct kf_report_in *in, bool lines)
{
	struct ranking rk;
	pthread_t th;
	bool ranking;
	int r, walked;
	size_t i;

	memset(rp, 0, sizeof(*rp));
	rp->in = in;
	kf_buf_init(&rp->tmp);
	kf_buf_init(&rp->lt_text);
	for (i = 0; i < 2; i++) {
		kf_buf_init(&rp->w[i].fi.text);
		kf_buf_init(&rp->w[i].fr.text);
		kf_buf_init(&rp->w[i].out);
	}
	kf_buf_init(&rp->comm);
	kf_map64_init(&rp->fidx);
	if (!kf_strtab_init(&rp->fkeys)) {
		/* g must be finishable */
		kf_gather_prepare(&rp->g, in->stacks, in->roots, NULL, NULL, NULL, in->dsos, 0);
		return KF_ENOMEM;
	}
	if (!lines || !in->namer || !in->rules)
		return kf_gather_run(&rp->g, in->stacks, in->roots, in->tsums, in->namer,
				     in->rules, in->dsos, in->exclude, in->jobs, in->work);
	if ((r = kf_gather_prepare(&rp->g, in->stacks, in->roots, in->tsums, in->namer,
				   in->rules, in->dsos, in->exclude)))
		return r;
	r = kf_gather_walk_start(&rp->g, in->jobs, in->work);
	if (!r)
		r = build_lines(rp);
	rk = (struct ranking){ &rp->lines, in->work, 0 };
	ranking = !r && in->jobs > 1 && pthread_create(&th, NULL, rank_main, &rk) == 0;
	walked = kf_gather_walk_join(&rp->g);
	if (!r)
		r = walked;
	if (!r)
		r = kf_gather_finish(&rp->g, line_text, rp);
	if (ranking)
		pthread_join(th, NULL);
	else if (!r)
		rk.r = kf_lines_rank(&rp->lines);   /* its work is this thread's */
	return r ? r : rk.r;
}

static void path_fini(struct kf_report_path *p)
{
	free(p->steps);
	free(p->pos);
	free(p->fresh);
	kf_buf_fini(&p->text);
}

void kf_report_fini(struct kf_report *rp)
{
	size_t i;

	kf_report_procs_free(rp->procs);   /* first: its thread may still read */
	kf_gather_fini(&rp->g);
	kf_buf_fini(&rp->tmp);
	kf_buf_fini(&rp->lt_text);
	kf_buf_fini(&rp->comm);
	free(rp->ff);
	free(rp->bid);
	kf_strtab_fini(&rp->fkeys);
	kf_map64_fini(&rp->fidx);
	free(rp->ftab);
	free(rp->node_line);
	free(rp->node_entry);
	kf_lines_fini(&rp->lines);
	free(rp->piece_at);
	free(rp->piece_ids);
	free(rp->fi_at);
	free(rp->fi_entry);
	free(rp->fi_pool);
	for (i = 0; i < rp->n_fi_old; i++)
		free(rp->fi_old[i]);
	free(rp->fi_old);
	for (i = 0; i < 2; i++) {
		path_fini(&rp->w[i].fi);
		path_fini(&rp->w[i].fr);
		kf_buf_fini(&rp->w[i].out);
	}
}

const char *kf_report_module_name(const struct kf_report *rp, uint32_t module)
{
	return module ? kf_modules_at(rp->in->modules, module)->name : "[unknown]";
}

void kf_report_unnamed_reason(const struct kf_report *rp, uint32_t module,
			      const char **why, const char **hint)
{
	struct kf_dsos *d = rp->in->dsos;
	const struct kf_module *m = module ? kf_modules_at(rp->in->modules, module) : NULL;
	enum kf_dso_status st = module ? kf_dso_status(d, module) : KF_DSO_UNTRIED;
	bool syms = module && kf_dso_symtab(d, module) != NULL;

	kf_diag_unnamed(module, m ? m->kind : KF_MOD_NONE, st, syms, why, hint);
}

const char *kf_report_nolines_hint(const struct kf_report *rp, uint32_t module)
{
	return kf_diag_nolines_hint(kf_dso_debuginfo_hint(rp->in->dsos, module));
}

const char *kf_report_comm(const struct kf_report *rp, uint32_t thread, struct kf_buf *buf)
{
	const struct kf_stack_root *root = kf_roots_get(rp->in->roots,
							rp->g.threads[thread].root);

	buf->len = 0;
	kf_fold_root_comm(rp->in->fold, rp->in->comms, root, buf);
	return kf_buf_cstr(buf);
}

double kf_report_pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static int cmp_gaps_unnamed(const void *pa, const void *pb)
{
	const struct kf_gather_gap *a = pa, *b = pb;

	if (a->unnamed.samples != b->unnamed.samples)
		return a->unnamed.samples > b->unnamed.samples ? -1 : 1;
	return (a->module > b->module) - (a->module < b->module);
}

static int cmp_gaps_nolines(const void *pa, const void *pb)
{
	const struct kf_gather_gap *a = pa, *b = pb;

	if (a->nolines.samples != b->nolines.samples)
		return a->nolines.samples > b->nolines.samples ? -1 : 1;
	return (a->module > b->module) - (a->module < b->module);
}

void kf_report_sort_gaps(struct kf_report *rp, bool nolines)
{
	if (rp->g.n_gaps > 1)
		qsort(rp->g.gaps, rp->g.n_gaps, sizeof(*rp->g.gaps),
		      nolines ? cmp_gaps_nolines : cmp_gaps_unnamed);
}

/* sort context for cells: by thread rank, verdict, label */
struct cellsort {
	const struct kf_report *rp;
	const uint32_t *rank;    /* per thread index; NULL: ignore threads */
};

static int cmp_cells(const void *pa, const void *pb, void *ctx)
{
	const struct kf_gather_cell *a = pa, *b = pb;
	const struct cellsort *cs = ctx;
	const struct kf_strtab *labels = &cs->rp->g.labels;

	if (cs->rank && cs->rank[a->thread] != cs->rank[b->thread])
		return cs->rank[a->thread] < cs->rank[b->thread] ? -1 : 1;
	if (a->verdict != b->verdict)
		return a->verdict < b->verdict ? -1 : 1;
	return strcmp(kf_strtab_get(labels, a->label), kf_strtab_get(labels, b->label));
}

void kf_report_sort_cells(const struct kf_report *rp, struct kf_gather_cell *v, size_t n,
			  const uint32_t *rank)
{
	struct cellsort cs = { rp, rank };

	if (n > 1)
		qsort_r(v, n, sizeof(*v), cmp_cells, &cs);
}

size_t kf_report_merge_cells(const struct kf_report *rp, const struct kf_gather_cell *v,
			     size_t n, struct kf_gather_cell *tmp)
{
	size_t i, m = 0;

	if (n)
		memcpy(tmp, v, n * sizeof(*v));
	kf_report_sort_cells(rp, tmp, n, NULL);
	for (i = 0; i < n; i++) {
		if (m && tmp[m - 1].verdict == tmp[i].verdict &&
		    tmp[m - 1].label == tmp[i].label)
			kf_bucket_add(&tmp[m - 1].b, tmp[i].b.samples, tmp[i].b.period);
		else
			tmp[m++] = tmp[i];
	}
	return m;
}
