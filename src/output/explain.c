/* explain.c - --explain's summary (report.h): where the samples were,
 * by verdict and context, and what limited the stacks (unwinding,
 * symbols, source lines), with what would fix it.
 */
#include "report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "diagnose.h"

/* The labels of one verdict over all threads, most period first. */
struct lab {
	uint32_t label;
	struct kf_bucket b;
};

static int cmp_lab(const void *pa, const void *pb)
{
	const struct lab *a = pa, *b = pb;

	if (a->b.period != b->b.period)
		return a->b.period > b->b.period ? -1 : 1;
	return (a->label > b->label) - (a->label < b->label);
}

/* One verdict's line: its share and its most common leaf contexts, from
 * the cells of all threads merged per (verdict, label)
 * (kf_report_merge_cells). */
static int explain_verdict(struct kf_report *rp, FILE *out,
			   const struct kf_gather_cell *merged, size_t nm, unsigned v,
			   const char *name)
{
	struct lab *labs = kf_calloc(nm + 1, sizeof(*labs));
	const struct kf_bucket *b = &rp->g.verdicts[v];
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
		kf_report_pct(b->period, rp->g.total.period));
	for (i = 0; i < n && i < 4 && (v == KF_CTX_VERDICT_ON_BEHALF ||
				       v == KF_CTX_VERDICT_ATTRIBUTED ||
				       v == KF_CTX_VERDICT_UNKNOWN); i++)
		fprintf(out, "%s %s %.1f%%", i ? "," : "  ",
			kf_strtab_get(&rp->g.labels, labs[i].label),
			kf_report_pct(labs[i].b.period, rp->g.total.period));
	if (i < n && i == 4)
		fputs(", ...", out);
	fputc('\n', out);
	free(labs);
	return 0;
}

/* per process: its kernel work on its behalf and attributed to it */
struct pk {
	int32_t pid;
	uint32_t thread;         /* its first thread seen: the comm's */
	struct kf_bucket ob, at;
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
static int explain_processes(struct kf_report *rp, FILE *out)
{
	struct pk *v = kf_calloc(rp->g.n_threads + 1, sizeof(*v));
	struct kf_map64 ix;
	size_t i, n = 0;

	if (!v)
		return KF_ENOMEM;
	kf_map64_init(&ix);
	for (i = 0; i < rp->g.n_cells; i++) {
		const struct kf_gather_cell *c = &rp->g.cells[i];
		const struct kf_gather_thread *t = &rp->g.threads[c->thread];
		uint32_t k;

		if (c->verdict != KF_CTX_VERDICT_ON_BEHALF &&
		    c->verdict != KF_CTX_VERDICT_ATTRIBUTED)
			continue;
		if (!kf_map64_get(&ix, (uint32_t)t->pid, &k)) {
			k = (uint32_t)n++;
			v[k].pid = t->pid;
			v[k].thread = c->thread;
			if (!kf_map64_put(&ix, (uint32_t)t->pid, k)) {
				kf_map64_fini(&ix);
				free(v);
				return KF_ENOMEM;
			}
		}
		kf_bucket_add(c->verdict == KF_CTX_VERDICT_ON_BEHALF ? &v[k].ob : &v[k].at,
		    c->b.samples, c->b.period);
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), cmp_pk);
	if (n)
		fputs("processes with the most kernel time (on behalf / attributed):\n", out);
	for (i = 0; i < n && i < 5; i++)
		fprintf(out, "  %-24s pid %-8d %6.1f%% / %.1f%%\n",
			kf_report_comm(rp, v[i].thread, &rp->comm), v[i].pid,
			kf_report_pct(v[i].ob.period, rp->g.total.period),
			kf_report_pct(v[i].at.period, rp->g.total.period));
	kf_map64_fini(&ix);
	free(v);
	return 0;
}

int kf_report_explain(struct kf_report *rp, FILE *out)
{
	const struct kf_report_in *in = rp->in;
	const struct kf_attr *a = in->folded_attr;
	size_t i, k;
	int r;

	fprintf(out, "%" PRIu64 " samples of %s in %zu thread%s; where they were "
		"(shares by %s):\n", rp->g.total.samples, in->filter ? in->filter : "no event",
		rp->g.n_threads, rp->g.n_threads == 1 ? "" : "s",
		in->count_samples ? "samples" : in->off_cpu ? "off-CPU time" : "period");
	{
		static const struct { uint8_t v; const char *name; } rows[] = {
			{ KF_CTX_VERDICT_USER, "user" },
			{ KF_CTX_VERDICT_ON_BEHALF, "on-behalf" },
			{ KF_CTX_VERDICT_ATTRIBUTED, "attributed" },
			{ KF_CTX_VERDICT_IDLE, "idle" },
			{ KF_CTX_VERDICT_KTHREAD, "kthread" },
			{ KF_CTX_VERDICT_UNKNOWN, "unknown" },
		};
		struct kf_gather_cell *merged = kf_calloc(rp->g.n_cells + 1, sizeof(*merged));
		size_t nm = merged ? kf_report_merge_cells(rp, rp->g.cells, rp->g.n_cells, merged) : 0;

		r = merged ? 0 : KF_ENOMEM;
		for (i = 0; i < sizeof(rows) / sizeof(rows[0]) && !r; i++)
			r = explain_verdict(rp, out, merged, nm, rows[i].v, rows[i].name);
		free(merged);
	}
	if (r)
		return r;
	fputs("  (on-behalf: the task's own syscalls, faults and traps; attributed: "
	      "interrupts, softirqs\n   and preemption that only happened while it was "
	      "running)\n", out);
	if (rp->g.excluded.samples)
		fprintf(out, "  left out by --exclude: %" PRIu64 " samples\n",
			rp->g.excluded.samples);
	if ((r = explain_processes(rp, out)))
		return r;
	if (in->folded_soft_clock)
		fprintf(out, "note: %s %s.\n", in->filter, in->soft_clock_note);
	if (a && !(a->sample_type & KF_SAMPLE_CALLCHAIN))
		fputs("note: no call chains (record with -g): contexts are guessed from "
		      "the leaf symbol.\n", out);

	fprintf(out, "stacks: leaf named in %" PRIu64 " of %" PRIu64 " samples (%.1f%%)\n",
		rp->g.leaf_named.samples, rp->g.total.samples,
		kf_report_pct(rp->g.leaf_named.samples, rp->g.total.samples));
	if (in->fp_broken) {
		fprintf(out, "  unwinding: %" PRIu64 " of %" PRIu64 " frame-pointer stacks "
			"stop before the program's entry", in->fp_broken, in->fp_samples);
		if (in->n_fp_breaks)
			fprintf(out, ", most in %s (%" PRIu64 ")", in->fp_breaks[0].module,
				in->fp_breaks[0].samples);
		fprintf(out, "; %s\n", kf_diag_fp_hint_explain);
	}
	/* DWARF unwinding: the ends that lost frames (they come with a hint;
	 * reaching the outermost frame does not) */
	for (i = 0, k = 0; i < in->n_stops && k < 3; i++) {
		const kf_unwind_stop *us = &in->stops[i];

		if (!us->hint[0])
			continue;
		fprintf(out, "  unwinding: %" PRIu64 " samples: %s%s%s; %s\n", us->samples,
			us->reason, us->module[0] ? " in " : "", us->module, us->hint);
		k++;
	}
	if (rp->g.kernel_cut.samples || rp->g.kernel_stopped.samples)
		fprintf(out, "  kernel chains: %" PRIu64 " cut at the stack limit, %" PRIu64
			" stopped by the kernel's unwinder\n", rp->g.kernel_cut.samples,
			rp->g.kernel_stopped.samples);
	kf_report_sort_gaps(rp, false);
	if (rp->g.unnamed.samples)
		fprintf(out, "  symbols: %" PRIu64 " samples have an unnamed frame\n",
			rp->g.unnamed.samples);
	for (i = 0; i < rp->g.n_gaps && i < 5 && rp->g.gaps[i].unnamed.samples; i++) {
		const char *why, *hint;

		kf_report_unnamed_reason(rp, rp->g.gaps[i].module, &why, &hint);
		fprintf(out, "    %10" PRIu64 "  %s: %s; %s\n", rp->g.gaps[i].unnamed.samples,
			kf_report_module_name(rp, rp->g.gaps[i].module), why, hint);
	}
	if (in->unverified)
		fprintf(out, "  symbols: %s\n", in->unverified);
	kf_report_sort_gaps(rp, true);
	if (rp->g.nolines.samples)
		fprintf(out, "  source lines: %" PRIu64 " samples have a frame without "
			"debug info (no inline frames or lines there)\n", rp->g.nolines.samples);
	for (i = 0; i < rp->g.n_gaps && i < 5 && rp->g.gaps[i].nolines.samples; i++)
		fprintf(out, "    %10" PRIu64 "  %s: %s\n", rp->g.gaps[i].nolines.samples,
			kf_report_module_name(rp, rp->g.gaps[i].module),
			kf_report_nolines_hint(rp, rp->g.gaps[i].module));
	if (fflush(out) != 0 || ferror(out))
		r = KF_EIO;
	return r;
}
