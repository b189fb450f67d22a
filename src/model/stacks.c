/* stacks.c - the stack trie. */
#include "stacks.h"

#include <stdlib.h>
#include <string.h>

#include "kfold.h"

#define ROOT_HASH 0x243f6a88u   /* the path hash of the roots' parent */

int kf_stacks_init(struct kf_stacks *s)
{
	memset(s, 0, sizeof(*s));
	if (!KF_GROW(s->nodes, s->cap, 1) || !KF_GROW(s->hashes, s->cap_hashes, 1))
		return -1;
	memset(&s->nodes[0], 0, sizeof(s->nodes[0]));
	s->hashes[0] = ROOT_HASH;
	s->n = 1;
	return 0;
}

void kf_stacks_room(struct kf_stacks *s, size_t nodes)
{
	size_t need;

	/* (either may fail: the trie then grows it) */
	if (kf_add_ok(s->n, nodes, &need) && need < UINT32_MAX &&
	    KF_GROW(s->nodes, s->cap, need) && s->hashes)
		(void)KF_GROW(s->hashes, s->cap_hashes, need);
}

static void recent_free(struct kf_pathcache *c);

void kf_stacks_fini(struct kf_stacks *s)
{
	free(s->nodes);
	free(s->hashes);
	free(s->slots);
	recent_free(s->recent);
	kf_map64_fini(&s->carry);
	memset(s, 0, sizeof(*s));
}

bool kf_stacks_carry(struct kf_stacks *s, uint32_t node, uint64_t n)
{
	uint32_t c = 0;

	kf_map64_get(&s->carry, node, &c);
	/* a node takes at most one wrap per sample, and samples are
	 * counted in u32 elsewhere; saturate rather than wrap */
	c = n > UINT32_MAX - c ? UINT32_MAX : c + (uint32_t)n;
	return kf_map64_put(&s->carry, node, c);
}

kf_u128 kf_stacks_weight(const struct kf_stacks *s, uint32_t node)
{
	uint32_t c = 0;

	if (s->carry.n)
		kf_map64_get(&s->carry, node, &c);
	return (kf_u128)c << 64 | s->nodes[node].weight;
}

bool kf_stacks_add_weight(struct kf_stacks *s, uint32_t node, kf_u128 w)
{
	uint64_t hi = (uint64_t)(w >> 64);

	if (__builtin_add_overflow(s->nodes[node].weight, (uint64_t)w,
				   &s->nodes[node].weight))
		hi++;
	return !hi || kf_stacks_carry(s, node, hi);
}

int kf_stacks_copy(struct kf_stacks *dst, const struct kf_stacks *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!kf_map64_copy(&dst->carry, &src->carry) ||
	    !KF_GROW(dst->nodes, dst->cap, src->n ? src->n : 1)) {
		kf_stacks_fini(dst);
		return KF_ENOMEM;
	}
	/* every page written now: mapped in one call, not a fault each */
	kf_prefault(dst->nodes, src->n * sizeof(*src->nodes));
	memcpy(dst->nodes, src->nodes, src->n * sizeof(*src->nodes));
	dst->n = src->n;
	return 0;
}

uint32_t kf_stacks_append(struct kf_stacks *s, uint32_t parent,
			  const struct kf_frame *f)
{
	uint32_t id;

	if (s->slots || s->hashes || s->n >= UINT32_MAX - 1 ||
	    !KF_GROW(s->nodes, s->cap, s->n + 1))
		return 0;
	id = (uint32_t)s->n++;
	s->nodes[id].frame = *f;
	s->nodes[id].parent = parent;
	s->nodes[id].weight = 0;
	s->nodes[id].samples = 0;
	return id;
}

bool kf_stacks_clear(struct kf_stacks *s, uint32_t node)
{
	uint32_t c;

	if (s->carry.n && kf_map64_get(&s->carry, node, &c) && c &&
	    !kf_map64_put(&s->carry, node, 0))
		return false;
	s->nodes[node].samples = 0;
	s->nodes[node].weight = 0;
	return true;
}

bool kf_stacks_prune(struct kf_stacks *s, uint32_t *along)
{
	uint32_t *id;             /* per node: 1 if it stays, then its new id */
	struct kf_map64 carry;
	size_t i, n;
	bool ok = true;

	if (s->slots || s->hashes)
		return false;
	id = kf_calloc(s->n ? s->n : 1, sizeof(*id));
	if (!id)
		return false;
	/* children come after their parents */
	for (i = s->n; i-- > 1;) {
		const struct kf_node *nd = &s->nodes[i];

		if (nd->samples || nd->weight || id[i])
			id[i] = id[nd->parent] = 1;
	}
	/* the wraps' map is keyed by node: again, under the new ids (it is
	 * all but always empty) */
	kf_map64_init(&carry);
	for (i = 1, n = 1; i < s->n; i++)
		if (id[i]) {
			uint32_t c;

			id[i] = (uint32_t)n++;
			if (s->carry.n && kf_map64_get(&s->carry, i, &c) && c &&
			    !kf_map64_put(&carry, id[i], c))
				ok = false;
		}
	if (!ok) {
		kf_map64_fini(&carry);
		free(id);
		return false;
	}
	for (i = 1; i < s->n; i++)
		if (id[i]) {
			struct kf_node *to = &s->nodes[id[i]];

			*to = s->nodes[i];
			to->parent = to->parent ? id[to->parent] : 0;
			if (along)
				along[id[i]] = along[i];
		}
	s->n = n;
	kf_map64_fini(&s->carry);
	s->carry = carry;
	free(id);
	return true;
}

bool kf_stacks_move(struct kf_stacks *s, uint32_t from, uint32_t to)
{
	struct kf_node *f = &s->nodes[from], *t = &s->nodes[to];
	uint32_t c = 0;

	if (from == to)
		return true;
	if (s->carry.n && kf_map64_get(&s->carry, from, &c) && c &&
	    (!kf_map64_put(&s->carry, from, 0) || !kf_stacks_carry(s, to, c)))
		return false;
	t->samples = f->samples > UINT32_MAX - t->samples ? UINT32_MAX :
		     t->samples + f->samples;
	if (__builtin_add_overflow(t->weight, f->weight, &t->weight) &&
	    !kf_stacks_carry(s, to, 1))
		return false;
	f->samples = 0;
	f->weight = 0;
	return true;
}

/* ---- the trie's index ------------------------------------------------------
 *
 * A node is found by hashing (parent, frame).  The hash is a path hash:
 * the parent's own hash mixed with the frame, so the hashes of a whole
 * stack follow from its frames alone, before any node is looked up.
 * That lets kf_stacks_path fetch every slot and then every candidate
 * node of a stack at once instead of one cache miss after the other: the
 * node array is far larger than any cache, and the walk was a chain of
 * dependent misses.  Which node matches is still decided by comparing
 * the parent and the frame exactly; the hash only places.
 *
 * hashes[i] is node i's path hash (32 bits; hashes[0] is the roots'
 * parent's).  A slot holds a node's hash above its id, so a probe passes
 * other nodes' slots without reading their nodes. */

static inline uint32_t path_hash(uint32_t parent_hash, const struct kf_frame *f)
{
	/* the frame mixed on its own, the parent's hash by one multiply
	 * (odd: a bijection of its 32 bits): a path's hashes are a chain
	 * of a multiply and an xor per frame, the rest runs beside it */
	uint64_t x = kf_hash64(f->addr * 0x9e3779b97f4a7c15ull ^
			       ((uint64_t)f->module << 32 | f->flags));

	return (uint32_t)x ^ parent_hash * 0x9e3779b1u;
}

static inline uint64_t slot_of(uint32_t h, uint32_t id)
{
	return (uint64_t)h << 32 | id;
}

/* The node the home slot of hash h names, when the slot holds h (the
 * likely match: the one a walk compares first), asked for; 0 if none.
 * Only reads. */
static inline uint32_t fetch_candidate(const struct kf_stacks *s, uint32_t h)
{
	uint64_t sl = s->slots[h & (s->nslots - 1)];
	uint32_t c = (uint32_t)(sl >> 32) == h ? (uint32_t)sl : 0;

	if (c)
		__builtin_prefetch(&s->nodes[c]);
	return c;
}

static bool same(const struct kf_node *n, uint32_t parent,
		 const struct kf_frame *f)
{
	return n->parent == parent && n->frame.addr == f->addr &&
	       n->frame.module == f->module && n->frame.flags == f->flags;
}

static void rehash_put(uint64_t *slots, size_t nslots, uint64_t v)
{
	size_t j = (size_t)(v >> 32) & (nslots - 1);

	while (slots[j])
		j = (j + 1) & (nslots - 1);
	slots[j] = v;
}

/* Into a table of nslots (a power of two, larger): from the old table in
 * slot order when there is one, so that the writes go forward in the
 * new table's two halves instead of one miss per node; linear probing
 * finds each entry whatever the order it was put in. */
static bool rehash(struct kf_stacks *s, size_t nslots)
{
	uint64_t *slots = kf_calloc(nslots, sizeof(*slots));
	size_t i;

	if (!slots)
		return false;
	/* mapped for writing at once: each probe below reads a slot before
	 * it writes one, and a read first maps a page of zeroes that the
	 * write must then copy (a second fault, and with the other threads
	 * running a TLB shootdown to every CPU they are on) */
	kf_prefault(slots, nslots * sizeof(*slots));
	if (s->slots) {
		for (i = 0; i < s->nslots; i++)
			if (s->slots[i])
				rehash_put(slots, nslots, s->slots[i]);
	} else {
		for (i = 1; i < s->n; i++)
			rehash_put(slots, nslots, slot_of(s->hashes[i], (uint32_t)i));
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = nslots;
	return true;
}

void kf_stacks_drop_index(struct kf_stacks *s)
{
	free(s->slots);
	free(s->hashes);
	recent_free(s->recent);
	s->recent = NULL;
	s->slots = NULL;
	s->hashes = NULL;
	s->nslots = 0;
	s->cap_hashes = 0;
}

/* The path hashes again, after kf_stacks_drop_index: a parent's id is
 * below its children's. */
static bool rebuild_hashes(struct kf_stacks *s)
{
	size_t i;

	if (!KF_GROW(s->hashes, s->cap_hashes, s->n ? s->n : 1))
		return false;
	s->hashes[0] = ROOT_HASH;
	for (i = 1; i < s->n; i++)
		s->hashes[i] = path_hash(s->hashes[s->nodes[i].parent], &s->nodes[i].frame);
	return true;
}

/* Room for `more` new nodes without a rehash or a move in between. */
static bool reserve(struct kf_stacks *s, size_t more)
{
	size_t need;

	if (!s->hashes && !rebuild_hashes(s))
		return false;
	if (!kf_add_ok(s->n, more, &need) || need >= UINT32_MAX)
		return false;
	if (need * 4 >= s->nslots * 3) {
		size_t ns = s->nslots ? s->nslots : 1024;

		while (need * 4 >= ns * 3)
			if (!kf_mul_ok(ns, 2, &ns))
				return false;
		if (!rehash(s, ns))
			return false;
	}
	return KF_GROW(s->nodes, s->cap, need) && KF_GROW(s->hashes, s->cap_hashes, need);
}

static uint32_t add_node(struct kf_stacks *s, size_t j, uint32_t parent, uint32_t h,
			 const struct kf_frame *f)
{
	uint32_t id = (uint32_t)s->n++;

	s->nodes[id].frame = *f;
	s->nodes[id].parent = parent;
	s->nodes[id].weight = 0;
	s->nodes[id].samples = 0;
	s->hashes[id] = h;
	s->slots[j] = slot_of(h, id);
	return id;
}

/* The node (parent, f) of hash h, added if new (room reserved; *added,
 * unless NULL, says which). */
static uint32_t find_add(struct kf_stacks *s, uint32_t parent, uint32_t h,
			 const struct kf_frame *f, bool *added)
{
	uint64_t tag = (uint64_t)h << 32;
	size_t mask = s->nslots - 1, j;

	for (j = h & mask; s->slots[j]; j = (j + 1) & mask) {
		uint64_t sl = s->slots[j];

		KF_WORK(1);
		if ((sl & 0xffffffff00000000ull) == tag &&
		    same(&s->nodes[(uint32_t)sl], parent, f)) {
			if (added)
				*added = false;
			return (uint32_t)sl;
		}
	}
	if (added)
		*added = true;
	return add_node(s, j, parent, h, f);
}

/* A node known to be new (its parent is): the first empty slot. */
static uint32_t add_new(struct kf_stacks *s, uint32_t parent, uint32_t h,
			const struct kf_frame *f)
{
	size_t mask = s->nslots - 1, j;

	for (j = h & mask; s->slots[j]; j = (j + 1) & mask)
		KF_WORK(1);
	return add_node(s, j, parent, h, f);
}

uint32_t kf_stacks_child(struct kf_stacks *s, uint32_t parent,
			 const struct kf_frame *f)
{
	if (!reserve(s, 1))
		return 0;
	return find_add(s, parent, path_hash(s->hashes[parent], f), f, NULL);
}

/* frame k of the path: the root, then frames[n-1] .. frames[0] */
struct rootpath {
	const struct kf_frame *root, *frames;
	size_t n;
};

static inline const struct kf_frame *rootpath_frame(const void *ctx, size_t k)
{
	const struct rootpath *p = ctx;

	return k == 0 ? p->root : &p->frames[p->n - k];
}

/* frame k of a walk: frames[k] */
static inline const struct kf_frame *walk_frame(const void *ctx, size_t k)
{
	return &((const struct kf_frame *)ctx)[k];
}

enum { BATCH = 32 };   /* frames walk_batched fetches together */

/* The m frames at(ctx, 0 .. m) from node `from` down, room reserved: in
 * batches of BATCH frames, hash them (or take their path hashes from
 * given[0 .. m), unless it is NULL), fetch their home slots, then the
 * nodes those slots name, then walk.  Each frame's node goes to out[k]
 * (unless out is NULL); returns the last.  Inlined into each caller with
 * its own `at`. */
static inline __attribute__((always_inline)) uint32_t
walk_batched(struct kf_stacks *s, uint32_t from, size_t m,
	     const struct kf_frame *(*at)(const void *, size_t), const void *ctx,
	     const uint32_t *given, uint32_t *out)
{
	uint32_t h[BATCH], cand[BATCH];
	size_t k, base, b, mask = s->nslots - 1;
	uint32_t node = from, hp = s->hashes[from];
	bool fresh = false;   /* node is new: so is everything below it */

	for (base = 0; base < m; base += b) {
		b = m - base < BATCH ? m - base : BATCH;
		for (k = 0; k < b; k++) {
			hp = given ? given[base + k] : path_hash(hp, at(ctx, base + k));
			h[k] = hp;
			if (!fresh)
				__builtin_prefetch(&s->slots[hp & mask]);
		}
		if (!fresh) {
			for (k = 0; k < b; k++)
				cand[k] = fetch_candidate(s, h[k]);
		}
		for (k = 0; k < b; k++) {
			const struct kf_frame *f = at(ctx, base + k);

			if (fresh) {
				node = add_new(s, node, h[k], f);
			} else if (cand[k] && same(&s->nodes[cand[k]], node, f)) {
				KF_WORK(1);
				node = cand[k];
			} else {
				node = find_add(s, node, h[k], f, &fresh);
			}
			if (out)
				out[base + k] = node;
		}
	}
	return node;
}

/* ---- stacks met lately ------------------------------------------------------
 *
 * Samples repeat their stacks: on a system-wide capture three in four
 * come again, many within a few thousand samples (the idle loop, a hot
 * function's callers).  kf_stacks_path first looks a whole stack up
 * here: a table of recent stacks, by a hash of all their frames, one
 * entry per slot (a newer stack of the same slot takes it), each with
 * its frames kept in a ring.  A hit compares every frame, so the node
 * it gives is the one the walk would: one hash and one compare instead
 * of a probe and a node per frame.  Stacks whose frames the ring has
 * overwritten since no longer hit.  The nodes it names are only ever
 * added to while the index lives, and it goes with the index
 * (kf_stacks_drop_index), so an entry never names another stack's
 * node. */

enum {
	RECENT_BITS = 15,         /* table slots: 2^15 (768 KiB) */
	RECENT_RING = 1u << 18,   /* frames kept: 2^18 (4 MiB) */
	RECENT_MAX = 256,         /* frames of the longest stack kept */
};

struct kf_pathcache {
	struct recent {
		uint64_t hash;
		uint64_t pos;     /* where its frames start, counted from the
				     ring's first write */
		uint32_t node;
		uint32_t n;       /* frames after the root */
	} *slot;
	struct kf_frame *ring;    /* the root, then frames[0 .. n) */
	size_t ring_len;          /* frames: RECENT_RING, but in tests */
	uint64_t head;            /* frames written (and skipped) so far */
	uint64_t mask;            /* of the hash: all of it, but in tests */
	uint64_t hits;
};

static void recent_free(struct kf_pathcache *c)
{
	if (c) {
		free(c->slot);
		free(c->ring);
		free(c);
	}
}

static struct kf_pathcache *recent_new(size_t ring_len)
{
	struct kf_pathcache *c = kf_calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	/* calloc: node 0, an empty slot */
	c->slot = kf_calloc((size_t)1 << RECENT_BITS, sizeof(*c->slot));
	c->ring = kf_reallocarray(NULL, ring_len, sizeof(*c->ring));
	if (!c->slot || !c->ring) {
		recent_free(c);
		return NULL;
	}
	c->ring_len = ring_len;
	c->mask = UINT64_MAX;
	return c;
}

bool kf_stacks_recent_test(struct kf_stacks *s, uint64_t mask, size_t ring_len)
{
	if (ring_len < RECENT_MAX || (ring_len & (ring_len - 1)))
		return false;
	recent_free(s->recent);
	if (!(s->recent = recent_new(ring_len)))
		return false;
	s->recent->mask = mask;
	return true;
}

uint64_t kf_stacks_recent_hits(const struct kf_stacks *s)
{
	return s->recent ? s->recent->hits : 0;
}

/* A stack's key among the recent ones: its leaf's path hash, which
 * hashes every frame (the entry's n and frames tell the rest apart) */
static inline uint64_t recent_key(const struct kf_pathcache *c, const uint32_t *h, size_t n)
{
	return h[n] & c->mask;
}

void kf_stacks_path_hashes(const struct kf_frame *root, const struct kf_frame *frames,
			   size_t n, uint32_t *h)
{
	uint32_t hp = path_hash(ROOT_HASH, root);
	size_t k;

	h[0] = hp;
	for (k = 1; k <= n; k++)
		h[k] = hp = path_hash(hp, &frames[n - k]);
}

static inline size_t recent_index(uint64_t key)
{
	return (size_t)key & (((size_t)1 << RECENT_BITS) - 1);
}

void kf_stacks_prefetch(const struct kf_stacks *s, const uint32_t *h, size_t n)
{
	if (s->recent && n < RECENT_MAX)
		__builtin_prefetch(&s->recent->slot[recent_index(recent_key(s->recent, h, n))]);
}

/* Whether the stack of path hashes h[0 .. n] is most likely found whole
 * among the recent stacks (its entry, asked for earlier, holds its hash
 * and length): its walk, and so fetching for it, would be wasted. */
static bool likely_recent(const struct kf_stacks *s, const uint32_t *h, size_t n)
{
	const struct kf_pathcache *c = s->recent;
	uint64_t key;
	const struct recent *e;

	if (!c || n >= RECENT_MAX)
		return false;
	key = recent_key(c, h, n);
	e = &c->slot[recent_index(key)];
	return e->node && e->hash == key && e->n == n;
}

void kf_stacks_prefetch_path(const struct kf_stacks *s, const uint32_t *h, size_t n)
{
	size_t mask = s->nslots - 1, k;

	if (!s->slots || likely_recent(s, h, n))
		return;
	/* walk_batched's first batch: the root, then frames[n - 1] down */
	for (k = 0; k <= n && k < BATCH; k++)
		__builtin_prefetch(&s->slots[h[k] & mask]);
}

void kf_stacks_prefetch_nodes(const struct kf_stacks *s, const uint32_t *h, size_t n)
{
	size_t k;

	if (!s->slots || likely_recent(s, h, n))
		return;
	for (k = 0; k <= n && k < BATCH; k++)
		(void)fetch_candidate(s, h[k]);
}

/* The node of the stack, when it came lately; 0 if not. */
static uint32_t recent_find(struct kf_pathcache *c, uint64_t h,
			    const struct kf_frame *root, const struct kf_frame *frames,
			    size_t n)
{
	const struct recent *e = &c->slot[recent_index(h)];
	const struct kf_frame *at;

	/* the ring still holds its frames: it wrapped past them less than
	 * once */
	if (!e->node || e->hash != h || e->n != n || c->head - e->pos > c->ring_len)
		return 0;
	at = &c->ring[e->pos & (c->ring_len - 1)];
	/* (frames may be NULL when n is 0: no memcmp of it then) */
	if (memcmp(at, root, sizeof(*root)) != 0 ||
	    (n && memcmp(at + 1, frames, n * sizeof(*frames)) != 0))
		return 0;
	c->hits++;
	return e->node;
}

static void recent_add(struct kf_pathcache *c, uint64_t h, const struct kf_frame *root,
		       const struct kf_frame *frames, size_t n, uint32_t node)
{
	struct recent *e = &c->slot[recent_index(h)];
	size_t room = c->ring_len - (c->head & (c->ring_len - 1));
	struct kf_frame *at;

	if (n + 1 > room)         /* kept whole: the ring's tail is skipped */
		c->head += room;
	at = &c->ring[c->head & (c->ring_len - 1)];
	at[0] = *root;
	if (n)
		memcpy(at + 1, frames, n * sizeof(*frames));
	e->hash = h;
	e->pos = c->head;
	e->node = node;
	e->n = (uint32_t)n;
	c->head += n + 1;
}

uint32_t kf_stacks_path_hashed(struct kf_stacks *s, const uint32_t *h,
			       const struct kf_frame *root, const struct kf_frame *frames,
			       size_t n)
{
	struct rootpath p = { root, frames, n };
	uint64_t key = 0;
	uint32_t node;
	size_t m;

	if (h && n < RECENT_MAX && s->recent) {
		key = recent_key(s->recent, h, n);
		if ((node = recent_find(s->recent, key, root, frames, n)) != 0) {
			KF_WORK(1);
			return node;
		}
	}
	if (!kf_add_ok(n, 1, &m) || !reserve(s, m))
		return 0;
	node = walk_batched(s, 0, m, rootpath_frame, &p, h, NULL);
	/* made with the index, which it is part of; without it the walk
	 * still works */
	if (!s->recent)
		s->recent = recent_new(RECENT_RING);
	else if (h && n < RECENT_MAX)
		recent_add(s->recent, key, root, frames, n, node);
	return node;
}

uint32_t kf_stacks_path(struct kf_stacks *s, const struct kf_frame *root,
			const struct kf_frame *frames, size_t n)
{
	uint32_t h[RECENT_MAX];

	/* a stack too long to be kept among the recent ones is walked
	 * hashing as it goes */
	if (n >= RECENT_MAX)
		return kf_stacks_path_hashed(s, NULL, root, frames, n);
	kf_stacks_path_hashes(root, frames, n, h);
	return kf_stacks_path_hashed(s, h, root, frames, n);
}

void kf_stacks_prefetch_parent(const struct kf_stacks *s, uint32_t from)
{
	if (s->hashes && from < s->n)
		__builtin_prefetch(&s->hashes[from]);
}

void kf_stacks_prefetch_child(const struct kf_stacks *s, uint32_t from,
			      const struct kf_frame *f, bool node)
{
	uint32_t h;

	if (!s->hashes || !s->slots || from >= s->n)
		return;
	h = path_hash(s->hashes[from], f);
	if (node)
		(void)fetch_candidate(s, h);
	else
		__builtin_prefetch(&s->slots[h & (s->nslots - 1)]);
}

bool kf_stacks_walk(struct kf_stacks *s, uint32_t from, const struct kf_frame *frames,
		    size_t n, uint32_t *nodes)
{
	if (!reserve(s, n) || from >= s->n)
		return false;
	walk_batched(s, from, n, walk_frame, frames, NULL, nodes);
	return true;
}

/* ---- roots ---------------------------------------------------------------- */

int kf_roots_init(struct kf_roots *r)
{
	memset(r, 0, sizeof(*r));
	if (!KF_GROW(r->v, r->cap, 1))
		return KF_ENOMEM;
	memset(&r->v[0], 0, sizeof(r->v[0]));
	r->n = 1;
	return 0;
}

void kf_roots_fini(struct kf_roots *r)
{
	free(r->v);
	free(r->slots);
	memset(r, 0, sizeof(*r));
}

static uint64_t root_hash(const struct kf_stack_root *x)
{
	uint64_t h = kf_hash64((uint64_t)x->comm << 32 | (uint32_t)x->pid);

	return kf_hash64(h ^ ((uint64_t)(uint32_t)x->tid << 32 | (uint64_t)x->offcpu << 16 |
			      (uint64_t)x->ctx << 8 | x->cpumode) ^ (uint64_t)x->waker << 24 ^
			      (uint64_t)x->cgroup << 40);
}

static bool same_root(const struct kf_stack_root *a, const struct kf_stack_root *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->tid == b->tid &&
	       a->ctx == b->ctx && a->cpumode == b->cpumode && a->offcpu == b->offcpu &&
	       a->waker == b->waker && a->cgroup == b->cgroup;
}

static bool roots_rehash(struct kf_roots *r, size_t nslots)
{
	uint32_t *slots = kf_calloc(nslots, sizeof(*slots));
	size_t i;

	if (!slots)
		return false;
	for (i = 1; i < r->n; i++) {
		size_t j = root_hash(&r->v[i]) & (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)i;
	}
	free(r->slots);
	r->slots = slots;
	r->nslots = nslots;
	return true;
}

uint32_t kf_roots_intern(struct kf_roots *r, const struct kf_stack_root *root)
{
	size_t j;

	if (r->n * 4 >= r->nslots * 3) {
		size_t ns;

		if (!kf_mul_ok(r->nslots ? r->nslots : 64, 2, &ns) ||
		    !roots_rehash(r, ns))
			return 0;
	}
	for (j = root_hash(root) & (r->nslots - 1); r->slots[j];
	     j = (j + 1) & (r->nslots - 1)) {
		uint32_t id = r->slots[j];

		KF_WORK(1);
		if (same_root(&r->v[id], root))
			return id;
	}
	if (r->n >= UINT32_MAX - 1 || !KF_GROW(r->v, r->cap, r->n + 1))
		return 0;
	r->v[r->n] = *root;
	r->v[r->n].pad = 0;
	r->slots[j] = (uint32_t)r->n;
	return (uint32_t)r->n++;
}
