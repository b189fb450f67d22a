/* maps.c - an address space as a persistent treap.
 *
 * Nodes are never changed once made: an insert copies the O(log n) nodes
 * on the paths it splits and merges and shares every other subtree, so a
 * FORK (kf_maps_copy) shares the parent's whole tree in O(1) and later
 * inserts on either side cost O(log n) each.  A sorted vector, copied at
 * every fork, let a crafted capture of N mappings and N forks, each child
 * then mapping one page, take O(N^2) time and memory (8,000 of each, a
 * 1.5 MB file: 2.5 GB); with the treap it is O(N log N).
 *
 * Nodes are reference-counted (a node is owned by each parent node and
 * root pointing at it); a treap's heap order is over pseudo-random
 * priorities from a counter, so its depth is O(log n) whatever addresses
 * a capture gives.
 */
#include "maps.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

struct kf_mnode {
	struct kf_map m;
	struct kf_mnode *l, *r;
	size_t size;             /* nodes in this subtree */
	uint64_t prio;
	uint32_t ref;
};

static size_t size_of(const struct kf_mnode *t)
{
	return t ? t->size : 0;
}

static struct kf_mnode *ref(struct kf_mnode *t)
{
	if (t)
		t->ref++;
	return t;
}

static void unref(struct kf_mnode *t)
{
	while (t && --t->ref == 0) {
		struct kf_mnode *r = t->r;

		unref(t->l);
		free(t);
		t = r;           /* the right spine without recursion */
	}
}

/* A node owning the references l and r (consumed, also on failure). */
static struct kf_mnode *node(const struct kf_map *m, struct kf_mnode *l,
			     struct kf_mnode *r, uint64_t prio)
{
	struct kf_mnode *t = malloc(sizeof(*t));

	if (!t) {
		unref(l);
		unref(r);
		return NULL;
	}
	t->m = *m;
	t->l = l;
	t->r = r;
	t->size = 1 + size_of(l) + size_of(r);
	t->prio = prio;
	t->ref = 1;
	return t;
}

/* Splits t (borrowed) into new references *a (starts < key) and *b
 * (starts >= key).  False on ENOMEM, with nothing left to release. */
static bool split(struct kf_mnode *t, uint64_t key, struct kf_mnode **a,
		  struct kf_mnode **b)
{
	struct kf_mnode *x, *y;

	*a = *b = NULL;
	if (!t)
		return true;
	if (t->m.start < key) {
		if (!split(t->r, key, &x, &y))
			return false;
		*a = node(&t->m, ref(t->l), x, t->prio);
		if (!*a) {
			unref(y);
			return false;
		}
		*b = y;
	} else {
		if (!split(t->l, key, &x, &y))
			return false;
		*b = node(&t->m, y, ref(t->r), t->prio);
		if (!*b) {
			unref(x);
			return false;
		}
		*a = x;
	}
	return true;
}

/* Joins a and b (every start in a below every start in b), consuming
 * both references; NULL with *oom set on ENOMEM. */
static struct kf_mnode *merge(struct kf_mnode *a, struct kf_mnode *b, bool *oom)
{
	struct kf_mnode *t, *sub;

	if (!a)
		return b;
	if (!b)
		return a;
	if (a->prio >= b->prio) {
		sub = merge(ref(a->r), b, oom);
		if (*oom) {
			unref(a);
			return NULL;
		}
		t = node(&a->m, ref(a->l), sub, a->prio);
		unref(a);
	} else {
		sub = merge(a, ref(b->l), oom);
		if (*oom) {
			unref(b);
			return NULL;
		}
		t = node(&b->m, sub, ref(b->r), b->prio);
		unref(b);
	}
	if (!t)
		*oom = true;
	return t;
}

static const struct kf_map *rightmost(const struct kf_mnode *t)
{
	if (!t)
		return NULL;
	while (t->r)
		t = t->r;
	return &t->m;
}

void kf_maps_init(struct kf_maps *m)
{
	memset(m, 0, sizeof(*m));
}

void kf_maps_fini(struct kf_maps *m)
{
	unref(m->root);
	memset(m, 0, sizeof(*m));
}

size_t kf_maps_count(const struct kf_maps *m)
{
	return size_of(m->root);
}

void kf_maps_clear(struct kf_maps *m)
{
	unref(m->root);
	m->root = NULL;
}

static uint64_t next_prio(struct kf_maps *m)
{
	return kf_hash64(++m->counter ^ 0x9e3779b97f4a7c15ull);
}

bool kf_maps_insert(struct kf_maps *m, const struct kf_map *nm)
{
	struct kf_mnode *l = NULL, *r = NULL, *mid = NULL, *rest = NULL, *x, *y;
	struct kf_map before, after;
	const struct kf_map *p;
	bool has_before = false, has_after = false, oom = false;

	if (nm->end <= nm->start)
		return true;
	if (!split(m->root, nm->start, &l, &r))
		return false;
	/* a mapping starting below nm that reaches into it: cut off its
	 * head (and its tail, when nm is inside it) */
	p = rightmost(l);
	if (p && p->end > nm->start) {
		struct kf_map pm = *p;

		if (!split(l, pm.start, &x, &y))
			goto fail;
		unref(l);
		unref(y);
		l = x;
		before = pm;
		before.end = nm->start;
		has_before = true;
		if (pm.end > nm->end) {
			after = pm;
			after.pgoff += nm->end - pm.start;
			after.start = nm->end;
			has_after = true;
		}
	}
	/* the mappings starting inside nm go; the last one's tail may stay */
	if (!split(r, nm->end, &x, &rest))
		goto fail;
	unref(r);
	r = NULL;
	p = rightmost(x);
	if (p && p->end > nm->end) {
		after = *p;
		after.pgoff += nm->end - p->start;
		after.start = nm->end;
		has_after = true;
	}
	unref(x);
	mid = node(nm, NULL, NULL, next_prio(m));
	if (!mid)
		goto fail;
	if (has_before) {
		x = node(&before, NULL, NULL, next_prio(m));
		mid = x ? merge(x, mid, &oom) : (unref(mid), NULL);
		if (!mid)
			goto fail;
	}
	if (has_after) {
		x = node(&after, NULL, NULL, next_prio(m));
		mid = x ? merge(mid, x, &oom) : (unref(mid), NULL);
		if (!mid)
			goto fail;
	}
	l = merge(l, mid, &oom);
	mid = NULL;
	if (oom) {
		l = NULL;
		goto fail;
	}
	l = merge(l, rest, &oom);
	rest = NULL;
	if (oom)
		return false;
	unref(m->root);
	m->root = l;
	return true;
fail:
	unref(l);
	unref(r);
	unref(mid);
	unref(rest);
	return false;
}

bool kf_maps_remove_at(struct kf_maps *m, uint64_t start)
{
	struct kf_mnode *l, *r, *x, *rest, *t;
	bool oom = false;

	if (!split(m->root, start, &l, &r))
		return false;
	if (start == UINT64_MAX) {
		x = r;
		rest = NULL;
	} else {
		if (!split(r, start + 1, &x, &rest)) {
			unref(l);
			unref(r);
			return false;
		}
		unref(r);
	}
	unref(x);
	t = merge(l, rest, &oom);
	if (oom)
		return false;
	unref(m->root);
	m->root = t;
	return true;
}

const struct kf_map *kf_maps_find(const struct kf_maps *m, uint64_t addr)
{
	const struct kf_mnode *t = m->root;

	while (t) {
		if (addr < t->m.start)
			t = t->l;
		else if (addr >= t->m.end)
			t = t->r;
		else
			return &t->m;
	}
	return NULL;
}

bool kf_maps_copy(struct kf_maps *dst, const struct kf_maps *src)
{
	if (dst == src)
		return true;
	unref(dst->root);
	dst->root = ref(src->root);
	dst->counter = src->counter;
	return true;
}

static bool walk(const struct kf_mnode *t,
		 bool (*fn)(const struct kf_map *, void *), void *arg)
{
	while (t) {
		if (!walk(t->l, fn, arg) || !fn(&t->m, arg))
			return false;
		t = t->r;
	}
	return true;
}

bool kf_maps_walk(const struct kf_maps *m,
		  bool (*fn)(const struct kf_map *, void *), void *arg)
{
	return walk(m->root, fn, arg);
}
