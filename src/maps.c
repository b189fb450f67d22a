/* maps.c - sorted vector of mappings. */
#include "maps.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void kf_maps_init(struct kf_maps *m)
{
	memset(m, 0, sizeof(*m));
}

void kf_maps_fini(struct kf_maps *m)
{
	free(m->v);
	memset(m, 0, sizeof(*m));
}

/* Index of the first mapping with end > addr. */
static size_t first_ending_after(const struct kf_maps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].end > addr)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

bool kf_maps_insert(struct kf_maps *m, const struct kf_map *nm)
{
	size_t i, j, keep_before, keep_after, add;
	struct kf_map before, after;
	bool has_before = false, has_after = false;

	if (nm->end <= nm->start)
		return true;
	i = first_ending_after(m, nm->start);
	/* [i, j) are the mappings that overlap nm */
	for (j = i; j < m->n && m->v[j].start < nm->end; j++)
		;
	if (i < j && m->v[i].start < nm->start) {
		before = m->v[i];
		before.end = nm->start;
		has_before = true;
	}
	if (i < j && m->v[j - 1].end > nm->end) {
		after = m->v[j - 1];
		after.pgoff += nm->end - after.start;
		after.start = nm->end;
		has_after = true;
	}
	keep_before = has_before;
	keep_after = has_after;
	add = 1 + keep_before + keep_after;
	/* the vector changes from n to n - (j - i) + add entries */
	if (add > j - i) {
		if (!KF_GROW(m->v, m->cap, m->n + (add - (j - i))))
			return false;
	}
	memmove(m->v + i + add, m->v + j, (m->n - j) * sizeof(*m->v));
	m->n = m->n - (j - i) + add;
	if (has_before)
		m->v[i++] = before;
	m->v[i++] = *nm;
	if (has_after)
		m->v[i] = after;
	return true;
}

const struct kf_map *kf_maps_find(const struct kf_maps *m, uint64_t addr)
{
	size_t i = first_ending_after(m, addr);

	if (i < m->n && m->v[i].start <= addr)
		return &m->v[i];
	return NULL;
}

bool kf_maps_copy(struct kf_maps *dst, const struct kf_maps *src)
{
	if (!KF_GROW(dst->v, dst->cap, src->n))
		return false;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof(*src->v));
	dst->n = src->n;
	return true;
}
