/* maps.c - an address space as a persistent treap.
 *
 * A shared node is never changed: an insert copies the shared nodes on
 * the paths it splits and merges and keeps every other subtree shared, so
 * a FORK (kf_maps_copy) shares the parent's whole tree in O(1) and later
 * inserts on either side cost O(log n) each.  A sorted vector, copied at
 * every fork, let a crafted capture of N mappings and N forks, each child
 * then mapping one page, take O(N^2) time and memory (8,000 of each, a
 * 1.5 MB file: 2.5 GB); with the treap it is O(N log N).
 *
 * Nodes are reference-counted (a node is owned by each parent node and
 * root pointing at it); a treap's heap order is over pseudo-random
 * priorities from a counter, so its depth is O(log n) whatever addresses
 * a capture gives.  Only shared nodes are copied: a process's own tree
 * changes in place, as fast as the sorted vector it replaced.
 */
#include "maps.h"

#include <stdatomic.h>
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

/* ---- changing a tree ------------------------------------------------------------
 *
 * A node owned by this tree alone (ref 1) is changed in place; a shared
 * one is first copied, its children then shared by the copy and the
 * original.  So that a change never fails half-way, every node it can
 * need is allocated first (struct pool): one per new mapping, and one per
 * shared node on the search paths the change restructures (on a path,
 * every node from the first shared one down; splits touch nothing else,
 * and the merges after them walk only nodes the splits made unique). */

struct pool {
	struct kf_mnode **v;
	size_t n;
};

static bool pool_fill(struct pool *p, size_t n)
{
	p->v = n ? malloc(n * sizeof(*p->v)) : NULL;
	p->n = 0;
	if (n && !p->v)
		return false;
	while (p->n < n) {
		p->v[p->n] = malloc(sizeof(struct kf_mnode));
		if (!p->v[p->n])
			return false;
		p->n++;
	}
	return true;
}

static void pool_drain(struct pool *p)
{
	while (p->n)
		free(p->v[--p->n]);
	free(p->v);
	p->v = NULL;
}

static struct kf_mnode *pool_take(struct pool *p)
{
	struct kf_mnode *t;

	if (p->n)
		return p->v[--p->n];
	/* the count in insert() covers every node a change takes; running
	 * out would be a bug, and then a tree half changed */
	t = malloc(sizeof(*t));
	if (!t)
		abort();
	return t;
}

/* Nodes on the search path for key from the first shared one down. */
static size_t shared_on_path(const struct kf_mnode *t, uint64_t key)
{
	size_t n = 0;
	bool shared = false;

	for (; t; t = t->m.start < key ? t->r : t->l) {
		KF_WORK(1);
		shared = shared || t->ref > 1;
		n += shared;
	}
	return n;
}

static struct kf_mnode *own(struct kf_mnode *t, struct pool *p)
{
	struct kf_mnode *c;

	if (t->ref == 1)
		return t;
	c = pool_take(p);
	*c = *t;
	c->ref = 1;
	ref(c->l);
	ref(c->r);
	t->ref--;        /* was shared: not the last reference */
	return c;
}

static void resize(struct kf_mnode *t)
{
	t->size = 1 + size_of(t->l) + size_of(t->r);
}

/* Splits t, consumed, into *a (starts < key) and *b (starts >= key). */
static void split(struct kf_mnode *t, uint64_t key, struct kf_mnode **a,
		  struct kf_mnode **b, struct pool *p)
{
	struct kf_mnode *x, *y;

	if (!t) {
		*a = *b = NULL;
		return;
	}
	KF_WORK(1);
	t = own(t, p);
	if (t->m.start < key) {
		split(t->r, key, &x, &y, p);
		t->r = x;
		resize(t);
		*a = t;
		*b = y;
	} else {
		split(t->l, key, &x, &y, p);
		t->l = y;
		resize(t);
		*a = x;
		*b = t;
	}
}

/* Joins a and b, both consumed (every start in a below every one in b). */
static struct kf_mnode *merge(struct kf_mnode *a, struct kf_mnode *b, struct pool *p)
{
	if (!a)
		return b;
	if (!b)
		return a;
	KF_WORK(1);
	if (a->prio >= b->prio) {
		a = own(a, p);
		a->r = merge(a->r, b, p);
		resize(a);
		return a;
	}
	b = own(b, p);
	b->l = merge(a, b->l, p);
	resize(b);
	return b;
}

static struct kf_mnode *leaf(const struct kf_map *m, uint64_t prio, struct pool *p)
{
	struct kf_mnode *t = pool_take(p);

	t->m = *m;
	t->l = t->r = NULL;
	t->size = 1;
	t->prio = prio;
	t->ref = 1;
	return t;
}

/* Generations for kf_maps_hint: one counter for every tree, so that a
 * tree made where another was freed has none of the old one's. */
static _Atomic uint64_t generations;

static void changed(struct kf_maps *m)
{
	m->gen = atomic_fetch_add_explicit(&generations, 1, memory_order_relaxed) + 1;
}

void kf_maps_init(struct kf_maps *m)
{
	memset(m, 0, sizeof(*m));
	changed(m);
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
	m->shared = false;
	changed(m);
}

static uint64_t next_prio(struct kf_maps *m)
{
	return kf_hash64(++m->counter ^ 0x9e3779b97f4a7c15ull);
}

/* The mapping with the greatest start below key (the last node where the
 * search for key went right), or NULL. */
static const struct kf_map *below(const struct kf_mnode *t, uint64_t key)
{
	const struct kf_map *best = NULL;

	while (t) {
		KF_WORK(1);
		if (t->m.start < key) {
			best = &t->m;
			t = t->r;
		} else {
			t = t->l;
		}
	}
	return best;
}

bool kf_maps_insert(struct kf_maps *m, const struct kf_map *nm)
{
	struct kf_mnode *l, *r, *x, *rest, *t;
	struct kf_map before, after;
	const struct kf_map *pm;
	bool has_before = false, has_after = false;
	struct pool pool;
	size_t need;

	if (nm->end <= nm->start)
		return true;
	changed(m);
	/* the common case, mappings made in address order: past the last
	 * one, nothing to cut, one spine to walk */
	if (!m->shared) {
		const struct kf_mnode *last = m->root;

		while (last && last->r)
			last = last->r;
		if (!last || last->m.end <= nm->start) {
			if (!pool_fill(&pool, 1)) {
				pool_drain(&pool);
				return false;
			}
			m->root = merge(m->root, leaf(nm, next_prio(m), &pool), &pool);
			pool_drain(&pool);
			return true;
		}
	}
	/* a mapping starting below nm that reaches into it loses its head
	 * (and its tail, when nm is inside it) */
	pm = below(m->root, nm->start);
	if (pm && pm->end <= nm->start)
		pm = NULL;
	need = 3;
	if (m->shared)
		need += shared_on_path(m->root, nm->start) +
			shared_on_path(m->root, nm->end) +
			(pm ? shared_on_path(m->root, pm->start) : 0);
	if (!pool_fill(&pool, need)) {
		pool_drain(&pool);
		return false;
	}
	if (pm) {
		before = *pm;
		before.end = nm->start;
		has_before = before.end > before.start;
		if (pm->end > nm->end) {
			after = *pm;
			after.pgoff += nm->end - pm->start;
			after.start = nm->end;
			has_after = true;
		}
	}
	t = m->root;
	m->root = NULL;
	split(t, nm->start, &l, &r, &pool);
	if (has_before) {
		/* drop the old one (the greatest start in l) */
		split(l, before.start, &l, &x, &pool);
		unref(x);
	}
	/* the mappings starting inside nm go; the last one's tail may stay */
	split(r, nm->end, &x, &rest, &pool);
	pm = x ? below(x, UINT64_MAX) : NULL;
	if (pm && pm->end > nm->end) {
		after = *pm;
		after.pgoff += nm->end - pm->start;
		after.start = nm->end;
		has_after = true;
	}
	unref(x);
	t = leaf(nm, next_prio(m), &pool);
	if (has_before)
		t = merge(leaf(&before, next_prio(m), &pool), t, &pool);
	if (has_after)
		t = merge(t, leaf(&after, next_prio(m), &pool), &pool);
	m->root = merge(merge(l, t, &pool), rest, &pool);
	pool_drain(&pool);
	return true;
}

bool kf_maps_remove_at(struct kf_maps *m, uint64_t start)
{
	struct kf_mnode *l, *r, *x, *rest, *t;
	struct pool pool;

	if (!kf_maps_find(m, start) || kf_maps_find(m, start)->start != start)
		return true;
	changed(m);
	if (!pool_fill(&pool, !m->shared ? 0 : shared_on_path(m->root, start) +
					       shared_on_path(m->root, start + 1))) {
		pool_drain(&pool);
		return false;
	}
	t = m->root;
	m->root = NULL;
	split(t, start, &l, &r, &pool);
	split(r, start + 1, &x, &rest, &pool);
	unref(x);
	m->root = merge(l, rest, &pool);
	pool_drain(&pool);
	return true;
}

const struct kf_map *kf_maps_find(const struct kf_maps *m, uint64_t addr)
{
	const struct kf_mnode *t = m->root;

	while (t) {
		KF_WORK(1);
		if (addr < t->m.start)
			t = t->l;
		else if (addr >= t->m.end)
			t = t->r;
		else
			return &t->m;
	}
	return NULL;
}

const struct kf_map *kf_maps_find_fill(const struct kf_maps *m, uint64_t addr,
				       struct kf_maps_hint *h)
{
	const struct kf_map *f = kf_maps_find(m, addr);

	if (f) {
		h->maps = m;
		h->gen = m->gen;
		h->m = *f;
	}
	return f;
}

bool kf_maps_copy(struct kf_maps *dst, struct kf_maps *src)
{
	if (dst == src)
		return true;
	changed(dst);
	unref(dst->root);
	dst->root = ref(src->root);
	dst->counter = src->counter;
	/* both now hold nodes the other sees */
	dst->shared = src->root != NULL;
	src->shared |= src->root != NULL;
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
