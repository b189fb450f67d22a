/* branches.c - branch sites of the samples' branch records (branches.h). */
#include "branches.h"

#include <stdlib.h>
#include <string.h>

void kf_brsites_init(struct kf_brsites *b)
{
	memset(b, 0, sizeof(*b));
	kf_map64_init(&b->index);
}

void kf_brsites_fini(struct kf_brsites *b)
{
	kf_map64_fini(&b->index);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

static uint64_t site_key(const struct kf_frame *f)
{
	uint64_t k = kf_hash64(f->addr ^ ((uint64_t)f->module << 40) ^
			       ((uint64_t)f->flags << 33));

	return k == UINT64_MAX ? 0 : k;
}

static bool same(const struct kf_frame *a, const struct kf_frame *b)
{
	return a->addr == b->addr && a->module == b->module && a->flags == b->flags;
}

bool kf_brsites_add(struct kf_brsites *b, const struct kf_frame *f, const struct kf_branch *br)
{
	uint64_t key = site_key(f);
	struct kf_brsite *s;
	uint32_t idx;

	/* a key two frames share (never seen): the later frame gets a site
	 * of its own and the key */
	if (!kf_map64_get(&b->index, key, &idx) || !same(&b->v[idx].frame, f)) {
		if (b->n >= UINT32_MAX || !KF_GROW(b->v, b->cap, b->n + 1) ||
		    !kf_map64_put(&b->index, key, (uint32_t)b->n))
			return false;
		idx = (uint32_t)b->n++;
		memset(&b->v[idx], 0, sizeof(b->v[idx]));
		b->v[idx].frame = *f;
	}
	s = &b->v[idx];
	s->records++;
	s->mispred += br->mispred;
	s->predicted += br->predicted;
	if (br->cycles) {
		s->cycles += br->cycles;
		s->cycles_records++;
	}
	b->records++;
	b->mispred += br->mispred;
	b->predicted += br->predicted;
	return true;
}

static int by_rank(const void *x, const void *y, void *ctx)
{
	const struct kf_brsites *b = ctx;
	const struct kf_brsite *p = &b->v[*(const uint32_t *)x];
	const struct kf_brsite *q = &b->v[*(const uint32_t *)y];

	if (p->mispred != q->mispred)
		return p->mispred > q->mispred ? -1 : 1;
	if (p->records != q->records)
		return p->records > q->records ? -1 : 1;
	if (p->frame.module != q->frame.module)
		return p->frame.module < q->frame.module ? -1 : 1;
	if (p->frame.addr != q->frame.addr)
		return p->frame.addr < q->frame.addr ? -1 : 1;
	return (p->frame.flags > q->frame.flags) - (p->frame.flags < q->frame.flags);
}

bool kf_brsites_order(const struct kf_brsites *b, uint32_t **order)
{
	size_t i;

	*order = kf_calloc(b->n ? b->n : 1, sizeof(**order));
	if (!*order)
		return false;
	for (i = 0; i < b->n; i++)
		(*order)[i] = (uint32_t)i;
	qsort_r(*order, b->n, sizeof(**order), by_rank, (void *)b);
	return true;
}

/* ---- cycles per basic block ----------------------------------------------------- */

void kf_bbcycles_init(struct kf_bbcycles *b)
{
	memset(b, 0, sizeof(*b));
	kf_map64_init(&b->index);
}

void kf_bbcycles_fini(struct kf_bbcycles *b)
{
	kf_map64_fini(&b->index);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

bool kf_bbcycles_add(struct kf_bbcycles *b, const struct kf_frame *end,
		     const struct kf_frame *start, uint64_t cycles)
{
	static const struct kf_frame none = { .flags = KF_FRAME_NOMAP };
	uint64_t key;
	struct kf_bbpair *p;
	uint32_t idx;

	if (!start)
		start = &none;
	key = kf_hash64(site_key(end) ^ (site_key(start) * 0x9e3779b97f4a7c15ull));
	if (key == UINT64_MAX)
		key = 0;
	if (!kf_map64_get(&b->index, key, &idx) || !same(&b->v[idx].end, end) ||
	    !same(&b->v[idx].start, start)) {
		if (b->n >= UINT32_MAX || !KF_GROW(b->v, b->cap, b->n + 1) ||
		    !kf_map64_put(&b->index, key, (uint32_t)b->n))
			return false;
		idx = (uint32_t)b->n++;
		memset(&b->v[idx], 0, sizeof(b->v[idx]));
		b->v[idx].end = *end;
		b->v[idx].start = *start;
		b->v[idx].min = UINT64_MAX;
	}
	p = &b->v[idx];
	p->records++;
	p->cycles += cycles;
	if (cycles < p->min)
		p->min = cycles;
	if (cycles > p->max)
		p->max = cycles;
	b->records++;
	return true;
}
