/* annotated.c - `kfold annotate`'s text (annotated.h). */
#include "annotated.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "util.h"

/* perf annotate's thresholds for its colours */
#define RED_PERCENT 5.0
#define GREEN_PERCENT 0.5
#define MAX_SOURCE ((size_t)16 << 20)

void kf_annot_build_id(struct kf_dsos *d, uint32_t module, char hex[41])
{
	uint8_t bid[20];

	kf_bid_hex(bid, kf_dso_recorded_build_id(d, module, bid), hex);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *color_of(const struct kf_annot_print *p, double percent)
{
	if (!p->color)
		return "";
	return percent >= RED_PERCENT ? "\033[31m" : percent >= GREEN_PERCENT ? "\033[32m" : "";
}

static const char *reset(const struct kf_annot_print *p, double percent)
{
	return p->color && percent >= GREEN_PERCENT ? "\033[m" : "";
}

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path ? path : "";
}

/* ---- source files, for --source=interleave ---------------------------------- */

struct src_file {
	const char *path;             /* as DWARF names it (pointer identity) */
	char *text;                   /* NULL: not found */
	const char **line;            /* line[i]: start of line i + 1 */
	size_t n_lines;
};

struct src_cache {
	struct src_file *v;
	size_t n, cap;
};

static char *read_source(const struct kf_annot_print *p, const char *path, size_t *len)
{
	char *t = NULL;
	size_t i;

	for (i = 0; i < p->n_prefix_map && !t; i++) {
		const char *eq = strchr(p->prefix_map[i], '=');
		size_t ol;

		if (!eq)
			continue;
		ol = (size_t)(eq - p->prefix_map[i]);
		if (strncmp(path, p->prefix_map[i], ol) == 0) {
			char buf[4096];

			snprintf(buf, sizeof(buf), "%s%s", eq + 1, path + ol);
			t = kf_fs_read(p->fs, NULL, buf, MAX_SOURCE, len);
		}
	}
	if (!t && p->source_dir) {
		t = kf_fs_read(p->fs, p->source_dir, path, MAX_SOURCE, len);
		if (!t)
			t = kf_fs_read(p->fs, p->source_dir, base_name(path), MAX_SOURCE, len);
	}
	if (!t && p->read_recorded)
		t = kf_fs_read(p->fs, NULL, path, MAX_SOURCE, len);
	return t;
}

static const struct src_file *source(struct src_cache *c, const struct kf_annot_print *p,
				     const char *path)
{
	struct src_file *f;
	size_t i, len = 0, cap = 0;
	char *s;

	for (i = 0; i < c->n; i++)
		if (c->v[i].path == path || strcmp(c->v[i].path, path) == 0)
			return &c->v[i];
	if (!KF_GROW(c->v, c->cap, c->n + 1))
		return NULL;
	f = &c->v[c->n++];
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->text = read_source(p, path, &len);
	for (s = f->text; s && s < f->text + len;) {
		char *nl = memchr(s, '\n', (size_t)(f->text + len - s));

		KF_WORK(1);
		if (!KF_GROW(f->line, cap, f->n_lines + 1))
			break;
		f->line[f->n_lines++] = s;
		if (!nl)
			break;
		*nl = '\0';
		s = nl + 1;
	}
	return f;
}

static void src_cache_fini(struct src_cache *c)
{
	size_t i;

	for (i = 0; i < c->n; i++) {
		free(c->v[i].text);
		free(c->v[i].line);
	}
	free(c->v);
}

/* ---- one function ----------------------------------------------------------- */

static void print_chain(FILE *out, const struct kf_annot_insn *in)
{
	unsigned k;

	fputs("                             ;", out);
	for (k = 0; k < in->n_chain; k++) {
		const struct kf_annot_link *l = &in->chain[k];

		fprintf(out, "%s %s", k ? " >" : "", l->function[0] ? l->function : "??");
		if (l->file)
			fprintf(out, " %s:%u", base_name(l->file), l->line);
	}
	fputc('\n', out);
}

static bool same_chain(const struct kf_annot_insn *a, const struct kf_annot_insn *b)
{
	unsigned k;

	if (!a || a->n_chain != b->n_chain)
		return false;
	for (k = 0; k < a->n_chain; k++) {
		const struct kf_annot_link *x = &a->chain[k], *y = &b->chain[k];

		if (x->line != y->line || strcmp(x->function, y->function) != 0 ||
		    (x->file != y->file && (!x->file || !y->file || strcmp(x->file, y->file))))
			return false;
	}
	return true;
}

static void header(FILE *out, const struct kf_annot_func *f, const struct kf_annot *an,
		   struct kf_dsos *d, const struct kf_modules *mods,
		   const struct kf_annot_print *p)
{
	const struct kf_module *m = kf_modules_at(mods, f->module);
	char bid[41];
	size_t i;

	kf_annot_build_id(d, f->module, bid);
	fprintf(out, "%s  [%s]\n", f->symbol, m->name);
	if (f->function && strcmp(f->function, f->symbol) != 0)
		fprintf(out, "  function %s (DWARF)\n", f->function);
	if (f->cold_of)
		fprintf(out, "  the cold part of %s\n", f->cold_of);
	if (f->fde)
		fprintf(out, "  no symbol: the range of the .eh_frame entry that covers it\n");
	fprintf(out, "  %" PRIu64 " samples, %.2f%% of %s (period %" PRIu64 "), %" PRIu64
		" with exact IPs\n", f->samples, pct(f->period, an->period),
		p->event ? p->event : "the event", f->period, f->exact);
	fprintf(out, "  %#" PRIx64 "-%#" PRIx64 " (%" PRIu64 " bytes)", f->start, f->end,
		f->end - f->start);
	fputc('\n', out);
	{
		const char *v = kf_dso_verification(d, f->module);

		fprintf(out, "  build-id %s, %s\n", bid[0] ? bid : "(none recorded)",
			strcmp(v, "build-id") == 0 ? "verified" :
			strcmp(v, "inode") == 0 ? "verified by device and inode" :
			strcmp(v, "given") == 0 ? "trusted as given (--kallsyms)" : v);
	}
	if (f->code_file)
		fprintf(out, "  code from %s\n", f->code_file);
	else
		fprintf(out, "  no code: %s\n", f->no_code ? f->no_code : "none found");
	if (f->lines_file)
		fprintf(out, "  lines from %s\n", f->lines_file);
	if (f->n_loops && f->loops[0].samples) {
		fputs("  loops:", out);
		for (i = 0; i < f->n_loops && i < 4 && f->loops[i].samples; i++)
			fprintf(out, "%s %#" PRIx64 "-%#" PRIx64 " %.1f%%", i ? "," : "",
				f->loops[i].head, f->loops[i].end,
				pct(f->loops[i].period, f->period));
		fputc('\n', out);
	}
	if (f->n_inlinees) {
		fputs("  inlined here:", out);
		for (i = 0; i < f->n_inlinees && i < 8; i++)
			fprintf(out, "%s %s %.1f%%", i ? "," : "", f->inlinees[i].name,
				pct(f->inlinees[i].period, f->period));
		if (f->n_inlinees > 8)
			fprintf(out, ", %zu more", f->n_inlinees - 8);
		fputc('\n', out);
	}
	if (f->bb_records) {
		fprintf(out, "  branch cycles: %" PRIu64 " records end here", f->bb_records);
		if (f->hit_cycles)
			fprintf(out, "; IPC %.2f over %.1f%% of the instructions (%zu blocks)",
				(double)f->hit_insns / (double)f->hit_cycles,
				pct(f->covered, f->n_insns), f->n_blocks);
		fputc('\n', out);
	}
	if (f->n_lines) {
		fputs("  hottest lines:", out);
		for (i = 0; i < f->n_lines && i < 5; i++)
			fprintf(out, "%s %s:%u %.1f%%", i ? "," : "", base_name(f->lines[i].name),
				f->lines[i].line, pct(f->lines[i].period, f->period));
		fputc('\n', out);
	}
}

static void function(FILE *out, const struct kf_annot_func *f, const struct kf_annot *an,
		     struct kf_dsos *d, const struct kf_modules *mods,
		     const struct kf_annot_print *p, struct src_cache *sc)
{
	const struct kf_annot_insn *prev = NULL;
	uint64_t whole = p->global ? an->period : f->period;
	size_t i;

	header(out, f, an, d, mods, p);
	if (an->n_events > 1) {
		size_t e;

		fputs("\n  other columns: samples of", out);
		for (e = 0; e < an->n_events; e++)
			fprintf(out, "%s %s", e ? "," : "", p->event_names[e]);
	}
	fprintf(out, "\n  samples  percent %s%s%s address  %sinstruction\n",
		p->shift_skid ? " shifted" : "", an->n_events > 1 ? " (events)" : "",
		f->bb_records ? "   IPC  cycles" : "", p->bytes ? "bytes                 " : "");
	for (i = 0; i < f->n_insns; i++) {
		const struct kf_annot_insn *in = &f->insns[i];
		double q = pct(in->period, whole);

		KF_WORK(1);
		if (p->source != KF_SRC_NONE && in->n_chain && !same_chain(prev, in)) {
			const struct kf_annot_link *own = &in->chain[in->n_chain - 1];

			print_chain(out, in);
			if (p->source == KF_SRC_INTERLEAVE && own->file && own->line &&
			    (!prev || !prev->n_chain ||
			     prev->chain[prev->n_chain - 1].line != own->line)) {
				const struct src_file *sf = source(sc, p, own->file);

				if (sf && own->line <= sf->n_lines)
					fprintf(out, "                             %6u | %s\n",
						own->line, sf->line[own->line - 1]);
			}
		}
		if (in->n_chain)
			prev = in;
		if (in->label)
			fprintf(out, "                     L%u:\n", in->label);
		if (in->samples)
			fprintf(out, "%s %8" PRIu64 "  %6.2f%%%s", color_of(p, q), in->samples, q,
				reset(p, q));
		else
			fputs("        0         ", out);
		if (p->shift_skid) {
			if (in->shifted_samples != in->samples || in->skid_suspect)
				fprintf(out, " %7" PRIu64 "%c", in->shifted_samples,
					in->skid_suspect ? '^' : ' ');
			else
				fputs("         ", out);
		}
		if (an->n_events > 1) {
			size_t e;

			for (e = 0; e < an->n_events; e++)
				fprintf(out, " %6" PRIu64, in->ev ? in->ev[2 * e] : 0);
		}
		if (f->bb_records) {
			if (in->ipc > 0.0)
				fprintf(out, " %6.2f", in->ipc);
			else
				fputs("       ", out);
			if (in->bb_records)
				fprintf(out, " %7" PRIu64, in->bb_cycles / in->bb_records);
			else
				fputs("        ", out);
		}
		fprintf(out, " %8" PRIx64 ":  ", in->in.addr);
		if (p->bytes) {
			unsigned k;
			int w = 0;

			for (k = 0; k < in->in.size && k < KF_INSN_MAX_BYTES; k++)
				w += fprintf(out, "%02x ", in->in.bytes[k]);
			fprintf(out, "%*s", w < 22 ? 22 - w : 1, "");
		}
		if (!in->in.size) {
			fputs("(no code)\n", out);
			continue;
		}
		fputs(in->in.text, out);
		if (in->target_name)
			fprintf(out, " <%s>", in->target_name);
		if (in->call_samples)
			fprintf(out, "    # through here: %" PRIu64 " samples, %.2f%% of the event",
				in->call_samples, pct(in->call_period, an->period));
		fputc('\n', out);
	}
	fputc('\n', out);
}

int kf_annot_write_text(FILE *out, const struct kf_annot *an, struct kf_dsos *d,
			const struct kf_modules *mods, const struct kf_annot_print *p)
{
	struct src_cache sc = { 0 };
	size_t i;

	fprintf(out, "# kfold annotate: %" PRIu64 " samples of %s, %zu functions with samples,"
		" %zu shown (percent of %s)\n\n", an->samples, p->event ? p->event : "the event",
		an->n_candidates, an->n_funcs, p->global ? "the event" : "each function");
	for (i = 0; i < an->n_funcs; i++)
		function(out, &an->funcs[i], an, d, mods, p, &sc);
	if (an->n_skipped) {
		fputs("not annotated:\n", out);
		for (i = 0; i < an->n_skipped; i++) {
			const struct kf_annot_skip *k = &an->skipped[i];

			fprintf(out, "  %s: %" PRIu64 " samples (%.2f%%): %s", k->what, k->samples,
				pct(k->period, an->period), k->reason);
			if (k->fix)
				fprintf(out, "; %s", k->fix);
			fputc('\n', out);
		}
	}
	src_cache_fini(&sc);
	if (fflush(out) != 0 || ferror(out))
		return KF_EIO;
	return 0;
}
