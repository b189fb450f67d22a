/* tsums.c - each stack's samples per thread (tsums.h). */
#include "tsums.h"

#include <stdlib.h>
#include <string.h>

void kf_tsums_init(struct kf_tsums *t)
{
	memset(t, 0, sizeof(*t));
	kf_map64_init(&t->thread_ix);
}

void kf_tsums_fini(struct kf_tsums *t)
{
	kf_map64_fini(&t->thread_ix);
	free(t->v);
	free(t->threads);
	free(t->start);
	free(t->sorted);
	memset(t, 0, sizeof(*t));
}

bool kf_tsums_thread(struct kf_tsums *t, int32_t pid, int32_t tid, uint32_t root,
		     uint32_t *index)
{
	uint64_t key = (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
	bool none = key == UINT64_MAX;   /* -1, -1: the map's empty key */

	/* samples come in runs of one thread: the last one first */
	if (t->last_ix && t->last_pid == pid && t->last_tid == tid) {
		*index = t->last_ix - 1;
		return true;
	}
	if (none ? t->none_ix != 0 : kf_map64_get(&t->thread_ix, key, index)) {
		if (none)
			*index = t->none_ix - 1;
		goto found;
	}
	if (t->n_threads >= UINT32_MAX - 1 ||
	    !KF_GROW(t->threads, t->cap_threads, t->n_threads + 1) ||
	    (!none && !kf_map64_put(&t->thread_ix, key, (uint32_t)t->n_threads)))
		return false;
	if (none)
		t->none_ix = (uint32_t)t->n_threads + 1;
	t->threads[t->n_threads].pid = pid;
	t->threads[t->n_threads].tid = tid;
	t->threads[t->n_threads].root = root;
	*index = (uint32_t)t->n_threads++;
found:
	t->last_pid = pid;
	t->last_tid = tid;
	t->last_ix = *index + 1;
	return true;
}

static size_t slot_of(uint32_t node, uint32_t thread, size_t cap)
{
	return (size_t)kf_hash64((uint64_t)node << 32 | thread) & (cap - 1);
}

/* Twice the slots (at least 1024), every entry moved over. */
static bool grow(struct kf_tsums *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024, i, k;
	struct kf_tsum *v;

	/* at most half full: entries are counted in 32 bits (start) */
	if (cap > (size_t)UINT32_MAX + 1 || cap > SIZE_MAX / sizeof(*v) ||
	    !(v = kf_calloc(cap, sizeof(*v))))
		return false;
	/* every slot is written soon (the moves, then probes all over):
	 * mapped in one call, not a fault a page */
	kf_prefault(v, cap * sizeof(*v));
	for (i = 0; i < t->cap; i++) {
		if (!t->v[i].samples)
			continue;
		for (k = slot_of(t->v[i].node, t->v[i].thread, cap); v[k].samples;
		     k = (k + 1) & (cap - 1))
			;
		v[k] = t->v[i];
	}
	free(t->v);
	t->v = v;
	t->cap = cap;
	return true;
}

bool kf_tsums_add(struct kf_tsums *t, uint32_t node, uint32_t thread, uint64_t weight)
{
	struct kf_tsum *e;
	size_t k;

	/* at most half full: short probes */
	if (t->sorted || ((t->n + 1) * 2 > t->cap && !grow(t)))
		return false;
	for (k = slot_of(node, thread, t->cap);; k = (k + 1) & (t->cap - 1)) {
		e = &t->v[k];
		if (!e->samples) {
			e->node = node;
			e->thread = thread;
			e->weight = weight;
			e->samples = 1;
			t->n++;
			return true;
		}
		if (e->node == node && e->thread == thread)
			break;
	}
	if (e->samples < UINT32_MAX)
		e->samples++;
	e->weight += weight;   /* modulo 2^64, as kf_stacks_add's */
	return true;
}

void kf_tsums_prefetch(const struct kf_tsums *t, uint32_t node, uint32_t thread)
{
	if (t->cap)
		__builtin_prefetch(&t->v[slot_of(node, thread, t->cap)], 1);
}

const struct kf_tsum *kf_tsums_find(const struct kf_tsums *t, uint32_t node,
				    uint32_t thread)
{
	size_t k;

	if (!t->cap)
		return NULL;
	for (k = slot_of(node, thread, t->cap); t->v[k].samples; k = (k + 1) & (t->cap - 1))
		if (t->v[k].node == node && t->v[k].thread == thread)
			return &t->v[k];
	return NULL;
}

bool kf_tsums_index(struct kf_tsums *t, size_t n_nodes)
{
	uint32_t *start;
	struct kf_tsum *sorted;
	size_t i;

	if (t->sorted)
		return true;   /* done before */
	if (n_nodes >= UINT32_MAX || !(start = kf_calloc(n_nodes + 1, sizeof(*start))))
		return false;
	if (!(sorted = kf_calloc(t->n ? t->n : 1, sizeof(*sorted)))) {
		free(start);
		return false;
	}
	/* counts (start[k + 1] counts node k's entries first; the prefix
	 * sum makes it node k + 1's beginning), then the entries, each
	 * node's in table order */
	for (i = 0; i < t->cap; i++)
		if (t->v[i].samples && t->v[i].node < n_nodes)
			start[t->v[i].node + 1]++;
	for (i = 1; i <= n_nodes; i++)
		start[i] += start[i - 1];
	for (i = 0; i < t->cap; i++) {
		uint32_t k = t->v[i].node;

		if (t->v[i].samples && k < n_nodes)
			sorted[start[k]++] = t->v[i];
	}
	/* start[k] now ends node k's list: shift back by one node */
	for (i = n_nodes; i > 0; i--)
		start[i] = start[i - 1];
	start[0] = 0;
	free(t->v);
	t->v = NULL;
	t->cap = 0;
	t->sorted = sorted;
	t->start = start;
	t->n_nodes = n_nodes;
	return true;
}
