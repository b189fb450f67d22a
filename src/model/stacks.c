/* stacks.c - the stack trie. */
#include "stacks.h"

#include <stdlib.h>
#include <string.h>

#include "kfold.h"

int kf_stacks_init(struct kf_stacks *s)
{
	memset(s, 0, sizeof(*s));
	if (!KF_GROW(s->nodes, s->cap, 1))
		return -1;
	memset(&s->nodes[0], 0, sizeof(s->nodes[0]));
	s->n = 1;
	return 0;
}

void kf_stacks_fini(struct kf_stacks *s)
{
	free(s->nodes);
	free(s->slots);
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

static uint64_t node_hash(uint32_t parent, const struct kf_frame *f)
{
	uint64_t h = kf_hash64(f->addr ^ ((uint64_t)parent << 32 | f->module));

	return kf_hash64(h ^ f->flags);
}

static bool same(const struct kf_node *n, uint32_t parent,
		 const struct kf_frame *f)
{
	return n->parent == parent && n->frame.addr == f->addr &&
	       n->frame.module == f->module && n->frame.flags == f->flags;
}

static bool rehash(struct kf_stacks *s, size_t nslots)
{
	uint32_t *slots = kf_calloc(nslots, sizeof(*slots));
	size_t i;

	if (!slots)
		return false;
	for (i = 1; i < s->n; i++) {
		size_t j = node_hash(s->nodes[i].parent, &s->nodes[i].frame) &
			   (nslots - 1);

		while (slots[j])
			j = (j + 1) & (nslots - 1);
		slots[j] = (uint32_t)i;
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = nslots;
	return true;
}

uint32_t kf_stacks_child(struct kf_stacks *s, uint32_t parent,
			 const struct kf_frame *f)
{
	size_t j;

	if (s->n * 4 >= s->nslots * 3) {
		size_t ns;

		if (!kf_mul_ok(s->nslots ? s->nslots : 1024, 2, &ns) ||
		    !rehash(s, ns))
			return 0;
	}
	for (j = node_hash(parent, f) & (s->nslots - 1); s->slots[j];
	     j = (j + 1) & (s->nslots - 1)) {
		uint32_t id = s->slots[j];

		KF_WORK(1);
		if (same(&s->nodes[id], parent, f))
			return id;
	}
	if (s->n >= UINT32_MAX - 1 || !KF_GROW(s->nodes, s->cap, s->n + 1))
		return 0;
	s->nodes[s->n].frame = *f;
	s->nodes[s->n].parent = parent;
	s->nodes[s->n].weight = 0;
	s->nodes[s->n].samples = 0;
	s->slots[j] = (uint32_t)s->n;
	return (uint32_t)s->n++;
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

	return kf_hash64(h ^ ((uint64_t)(uint32_t)x->tid << 32 | (uint64_t)x->ctx << 8 |
			      x->cpumode));
}

static bool same_root(const struct kf_stack_root *a, const struct kf_stack_root *b)
{
	return a->comm == b->comm && a->pid == b->pid && a->tid == b->tid &&
	       a->ctx == b->ctx && a->cpumode == b->cpumode;
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
