/* report.c - what the JSON report and --explain share (report.h): the
 * gather, with the folded line of each stack as its key, and the texts
 * both print for modules, threads and shares.
 */
#include "report.h"

#include <stdlib.h>
#include <string.h>

#include "diagnose.h"

/* The folded line of a stack, as folded.c writes it: the line's id.
 * Each node is named once (rp->node_text), and the part of the line the
 * previous stack shares with this one (the same nodes from the root
 * down) is kept, not rebuilt. */
static int line_text(void *arg, const struct kf_ctx_stack *cs, uint32_t *id)
{
	struct kf_report *rp = arg;
	const struct kf_report_in *in = rp->in;
	const struct kf_stacks *st = in->stacks;
	size_t i, k;

	if (!rp->node_text) {
		rp->node_text = kf_calloc(st->n ? st->n : 1, sizeof(*rp->node_text));
		if (!rp->node_text)
			return KF_ENOMEM;
	}
	if (!KF_GROW(rp->lt_path, rp->lt_cap, cs->n_path) ||
	    !KF_GROW(rp->lt_len, rp->lt_len_cap, cs->n_path))
		return KF_ENOMEM;
	for (k = 0; k < cs->n_path && k < rp->lt_n && rp->lt_path[k] == cs->path[k]; k++)
		;
	if (k == 0) {
		const struct kf_stack_root *root =
			kf_roots_get(in->roots, st->nodes[cs->path[0]].frame.root);

		rp->lt_text.len = 0;
		kf_fold_root(in->fold, in->comms, root, &rp->lt_text);
		rp->lt_path[0] = cs->path[0];
		rp->lt_len[0] = rp->lt_text.len;
		k = 1;
	} else {
		rp->lt_text.len = rp->lt_len[k - 1];
	}
	for (i = k; i < cs->n_path; i++) {
		uint32_t x = cs->path[i], t;

		if (!rp->node_text[x]) {
			const struct kf_stack_root *root =
				kf_roots_get(in->roots, st->nodes[cs->path[0]].frame.root);
			int r = kf_fold_text_id(in->texts, &st->nodes[x].frame,
						kf_fold_root_java(in->comms, root), &t);

			if (r)
				return r;
			rp->node_text[x] = t + 1;
		}
		t = rp->node_text[x] - 1;
		if (t) {
			kf_buf_put(&rp->lt_text, ";", 1);
			kf_buf_puts(&rp->lt_text, kf_strtab_get(&in->texts->texts, t));
		}
		rp->lt_path[i] = x;
		rp->lt_len[i] = rp->lt_text.len;
	}
	rp->lt_n = cs->n_path;
	if (rp->lt_text.oom)
		return KF_ENOMEM;
	return kf_strtab_intern(&rp->lines, rp->lt_text.p, rp->lt_text.len, id) ? 0 : KF_ENOMEM;
}

int kf_report_gather(struct kf_report *rp, const struct kf_report_in *in, bool lines)
{
	memset(rp, 0, sizeof(*rp));
	rp->in = in;
	kf_buf_init(&rp->tmp);
	kf_buf_init(&rp->text);
	kf_buf_init(&rp->lt_text);
	kf_buf_init(&rp->comm);
	kf_map64_init(&rp->fidx);
	if (!kf_strtab_init(&rp->lines) || !kf_strtab_init(&rp->fkeys)) {
		/* g must be finishable */
		kf_gather_run(&rp->g, in->stacks, in->roots, NULL, NULL, in->dsos, 0,
			      NULL, NULL);
		return KF_ENOMEM;
	}
	return kf_gather_run(&rp->g, in->stacks, in->roots, in->namer, in->rules, in->dsos,
			     in->exclude, lines ? line_text : NULL, rp);
}

void kf_report_fini(struct kf_report *rp)
{
	kf_gather_fini(&rp->g);
	kf_strtab_fini(&rp->lines);
	kf_buf_fini(&rp->tmp);
	kf_buf_fini(&rp->text);
	kf_buf_fini(&rp->lt_text);
	kf_buf_fini(&rp->comm);
	free(rp->ff);
	free(rp->bid);
	kf_strtab_fini(&rp->fkeys);
	kf_map64_fini(&rp->fidx);
	free(rp->ftab);
	free(rp->node_text);
	free(rp->fi_at);
	free(rp->fi_pool);
	free(rp->fi_path);
	free(rp->lt_path);
	free(rp->lt_len);
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

const char *kf_report_comm(struct kf_report *rp, uint32_t thread)
{
	const struct kf_stack_root *root = kf_roots_get(rp->in->roots,
							rp->g.threads[thread].root);

	rp->comm.len = 0;
	kf_fold_root_comm(rp->in->fold, rp->in->comms, root, &rp->comm);
	return kf_buf_cstr(&rp->comm);
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
