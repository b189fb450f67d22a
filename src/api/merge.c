/* merge.c - kfold merge: folded stacks from many sources summed into one
 * profile (kfold.h: kf_merge_*).
 *
 * Each distinct stack text is interned once and keeps one count, so the
 * memory is that of the distinct stacks, whatever the number or size of
 * the inputs.  Written as folded text (one line per stack, byte order,
 * as kfold folds) or as a pprof profile through output/pprof.c, with
 * each stack's first frame as its root (the comm label) and the others
 * as functions known by name only (a line of one frame: that frame).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "kfold.h"
#include "pprof.h"
#include "flame.h"
#include "util.h"

struct kf_merge {
	struct kf_strtab stacks;     /* the stack texts */
	struct kf_map64 index;       /* strtab id -> entry */
	struct entry {
		uint32_t text;           /* strtab id */
		uint64_t count;          /* saturates */
		uint64_t base;           /* the baseline's (kf_merge_add_base) */
	} *entries;
	size_t n, cap;
	bool diff;                   /* a baseline was added: a difference */
	kf_frame_info *frames;       /* one stack's frames, for pprof */
	size_t frames_cap;
	char *pieces;                /* ... and its text cut at each ';' */
	size_t pieces_cap;
};

int kf_merge_new(kf_merge **out)
{
	kf_merge *m = kf_calloc(1, sizeof(*m));

	*out = NULL;
	if (!m)
		return KF_ENOMEM;
	kf_map64_init(&m->index);
	if (!kf_strtab_init(&m->stacks)) {
		free(m);
		return KF_ENOMEM;
	}
	*out = m;
	return 0;
}

void kf_merge_free(kf_merge *m)
{
	if (!m)
		return;
	kf_strtab_fini(&m->stacks);
	kf_map64_fini(&m->index);
	free(m->entries);
	free(m->frames);
	free(m->pieces);
	free(m);
}

/* the entry of a stack, made with counts 0 when new */
static int entry(kf_merge *m, const char *stack, size_t len, struct entry **out)
{
	uint32_t id, e;

	if (!len || memchr(stack, '\0', len) || memchr(stack, '\n', len))
		return KF_EINVAL;
	if (!kf_strtab_intern(&m->stacks, stack, len, &id))
		return KF_ENOMEM;
	if (!kf_map64_get(&m->index, id, &e)) {
		if (m->n >= UINT32_MAX || !KF_GROW(m->entries, m->cap, m->n + 1) ||
		    !kf_map64_put(&m->index, id, (uint32_t)m->n))
			return KF_ENOMEM;
		m->entries[m->n] = (struct entry){ id, 0, 0 };
		e = (uint32_t)m->n++;
	}
	*out = &m->entries[e];
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

int kf_merge_add(kf_merge *m, const char *stack, size_t len, uint64_t count)
{
	struct entry *e;
	int r = entry(m, stack, len, &e);

	if (!r)
		e->count = sat_add(e->count, count);
	return r;
}

int kf_merge_add_base(kf_merge *m, const char *stack, size_t len, uint64_t count)
{
	struct entry *e;
	int r = entry(m, stack, len, &e);

	if (!r) {
		e->base = sat_add(e->base, count);
		m->diff = true;
	}
	return r;
}

size_t kf_merge_n_stacks(const kf_merge *m)
{
	return m->n;
}

/* byte order of the texts, as folded output is sorted */
static const struct kf_strtab *sort_tab;

static int cmp_entries(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;

	return strcmp(kf_strtab_get(sort_tab, a->text), kf_strtab_get(sort_tab, b->text));
}

int kf_merge_write_folded(kf_merge *m, FILE *out)
{
	const char *text;
	size_t i;
	int w;

	/* the index is not needed once sorted: adding after this starts a
	 * new entry per stack, so it is rebuilt */
	sort_tab = &m->stacks;
	qsort(m->entries, m->n, sizeof(*m->entries), cmp_entries);
	sort_tab = NULL;
	kf_map64_fini(&m->index);
	kf_map64_init(&m->index);
	for (i = 0; i < m->n; i++) {
		KF_WORK(1);
		if (!kf_map64_put(&m->index, m->entries[i].text, (uint32_t)i))
			return KF_ENOMEM;
		/* a difference: the baseline's column first (difffolded.pl's) */
		text = kf_strtab_get(&m->stacks, m->entries[i].text);
		w = m->diff ? fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", text,
				      m->entries[i].base, m->entries[i].count) :
			      fprintf(out, "%s %" PRIu64 "\n", text, m->entries[i].count);
		if (w < 0)
			return KF_EIO;
	}
	return fflush(out) == 0 ? 0 : KF_EIO;
}

/* Stack i as frames: its first piece the root, the others functions
 * known by name only (no module, no address). */
static int merge_stack(void *ctx, size_t i, kf_stack_info *out)
{
	kf_merge *m = ctx;
	const char *text = kf_strtab_get(&m->stacks, m->entries[i].text);
	size_t n = 0, len = strlen(text);
	char *p;

	memset(out, 0, sizeof(*out));
	/* the names are read before the next call: one scratch copy */
	if (!KF_GROW(m->pieces, m->pieces_cap, len + 1))
		return KF_ENOMEM;
	p = memcpy(m->pieces, text, len + 1);
	for (;;) {
		char *semi = strchr(p, ';');
		kf_frame_info *f;

		if (!KF_GROW(m->frames, m->frames_cap, n + 1))
			return KF_ENOMEM;
		f = &m->frames[n];
		memset(f, 0, sizeof(*f));
		/* a line of one frame has no root to spare */
		f->kind = n || !semi ? KF_KIND_USER : KF_KIND_ROOT;
		f->module = KF_NO_MODULE;
		f->pid = f->tid = -1;
		f->name = f->text = p;
		n++;
		if (!semi)
			break;
		*semi = '\0';
		p = semi + 1;
	}
	out->frames = m->frames;
	out->n_frames = n;
	out->weight = m->entries[i].count;
	return 0;
}

static uint64_t merge_base(void *ctx, size_t i)
{
	kf_merge *m = ctx;

	return m->entries[i].base;
}

int kf_merge_write_pprof(kf_merge *m, FILE *out)
{
	struct kf_stack_src src = { m, m->n, 0, merge_stack, NULL, NULL, true, NULL };
	struct kf_pprof_facts f;
	char version[64];
	const char *comments[1];

	if (m->diff)
		return KF_EUNSUPP;   /* pprof has no baseline within a profile */
	memset(&f, 0, sizeof(f));
	f.event = "count";
	f.unit = "count";
	f.no_samples = true;
	snprintf(version, sizeof(version), "kfold %s merge", kf_version());
	comments[0] = version;
	f.comments = comments;
	f.n_comments = 1;
	return kf_pprof_write(&src, &f, out);
}

int kf_merge_write_flamegraph(kf_merge *m, FILE *out, const char *title,
			      enum kf_flame_format fmt)
{
	struct kf_stack_src src = { m, m->n, 0, merge_stack, NULL, NULL, true,
				    m->diff ? merge_base : NULL };
	struct kf_flame_facts f;
	char sub[160];
	uint64_t ta = 0, tb = 0;
	size_t i;

	memset(&f, 0, sizeof(f));
	f.title = title ? title : m->diff ? "differential flame graph" : "merged folded stacks";
	for (i = 0; i < m->n; i++) {
		ta = sat_add(ta, m->entries[i].base);
		tb = sat_add(tb, m->entries[i].count);
	}
	if (m->diff)
		snprintf(sub, sizeof(sub), "%zu stacks, %" PRIu64 " before, %" PRIu64
			 " after, kfold %s", m->n, ta, tb, kf_version());
	else
		snprintf(sub, sizeof(sub), "%zu stacks, kfold %s", m->n, kf_version());
	f.subtitle = sub;
	f.unit = "count";
	f.svg = fmt == KF_FLAME_SVG;
	return kf_flame_write(&src, &f, out);
}
